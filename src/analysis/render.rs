//! analysis::render: a synthesized request as a scenario file (the format of `askgate check`)
//! and the check of that file against both sides — the real path a call takes. The scenario
//! format takes a call, the session, the environment and the stores, and derives the rest
//! (target facts from paths, provenance from the operation table, ...); only a scenario whose
//! check shows a change is a finding that counts, the others are Cedar requests only.

mod call;
mod paths;

use serde::Serialize;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::answer::Answer;
use super::concrete::RawRequest;
use super::diff::Sides;
use crate::authz::context::{CallerContext, EnvironmentContext, SessionContext};
use crate::authz::PolicySnapshot;
use crate::scenario::{self, Scenario, ScenarioOutcome};

/// The clock of every rendered scenario when the synthesized `now` is not representable.
const FALLBACK_NOW: &str = "2026-11-30T10:00:00Z";

/// A request's scenario and what `check` answers for it on each side.
#[derive(Debug, Clone, Serialize)]
pub struct Rendered {
    /// The scenario file, when the request could be expressed as one.
    pub scenario: Option<Value>,
    /// `check`'s answer on the before and after side (`refused: ...` for an input error).
    pub check_before: Option<String>,
    pub check_after: Option<String>,
    /// `check`'s answers, when it decided on both sides.
    #[serde(skip)]
    pub shown: Option<(Answer, Answer)>,
    /// Why the scenario does not show the request's change, when it does not.
    pub note: Option<String>,
}

impl Rendered {
    fn unexpressible(note: String) -> Self {
        Self {
            scenario: None,
            check_before: None,
            check_after: None,
            shown: None,
            note: Some(note),
        }
    }

    /// `check` shows a change: the scenario is a real call the change decides differently.
    pub fn changes(&self) -> bool {
        self.shown.is_some_and(|(before, after)| before != after)
    }
}

/// Renders `request` and checks it on both sides. A target path can be written several ways;
/// the first rendering that shows the request's own change (`raw`) is kept, else the first
/// that shows any change, else the first.
pub fn render(
    request: &RawRequest,
    target: bool,
    sides: &Sides<'_>,
    raw: (Answer, Answer),
) -> Rendered {
    let candidates = if target {
        call::target_scenarios(request)
    } else {
        call::call_scenario(request).map(|scenario| vec![scenario])
    };
    let candidates = match candidates {
        Ok(candidates) => candidates,
        Err(note) => return Rendered::unexpressible(note),
    };
    let checked: Vec<Rendered> = candidates
        .into_iter()
        .map(|candidate| check(candidate, sides, target))
        .collect();
    let position = checked
        .iter()
        .position(|rendered| rendered.shown == Some(raw))
        .or_else(|| checked.iter().position(Rendered::changes))
        .unwrap_or(0);
    checked
        .into_iter()
        .nth(position)
        .unwrap_or_else(|| Rendered::unexpressible("no scenario could be rendered".into()))
}

fn check(scenario: Value, sides: &Sides<'_>, target: bool) -> Rendered {
    let parsed: Scenario = match serde_json::from_value(scenario.clone()) {
        Ok(parsed) => parsed,
        Err(error) => {
            let mut rendered = Rendered::unexpressible(format!(
                "the synthesized facts are not a valid scenario: {error}"
            ));
            rendered.scenario = Some(scenario);
            return rendered;
        }
    };
    let before = decide(&parsed, sides.before);
    let after = decide(&parsed, sides.after);
    let shown = match (&before, &after) {
        (Ok(before), Ok(after)) => Some((*before, *after)),
        _ => None,
    };
    let changes = shown.is_some_and(|(before, after)| before != after);
    let note = (!changes).then(|| {
        let what = if target {
            "the scenario derives the target facts (segments, lowercase, characters) from the path"
        } else {
            "the scenario derives some synthesized facts (from the operation table, the stores or the input)"
        };
        format!("{what}; for that call check shows {} → {}", label(&before), label(&after))
    });
    Rendered {
        scenario: Some(scenario),
        check_before: Some(label(&before)),
        check_after: Some(label(&after)),
        shown,
        note,
    }
}

fn decide(scenario: &Scenario, snapshot: &PolicySnapshot) -> Result<Answer, String> {
    match scenario::run(scenario, snapshot) {
        Ok(ScenarioOutcome::Decided(decision)) => Ok(Answer::of(&decision)),
        Ok(ScenarioOutcome::Refused(error)) => Err(format!(
            "refused: `call.input.{}`: {}",
            error.field, error.message
        )),
        Err(error) => Err(format!("invalid: {error}")),
    }
}

fn label(answer: &Result<Answer, String>) -> String {
    match answer {
        Ok(answer) => answer.label(),
        Err(message) => message.clone(),
    }
}

/// `now` in RFC 3339 (milliseconds since the epoch in the context).
fn rfc3339(millis: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
        .ok()
        .and_then(|time| time.format(&Rfc3339).ok())
        .unwrap_or_else(|| FALLBACK_NOW.to_string())
}

/// The scenario's `session` block.
fn session(context: &SessionContext, caller: &CallerContext) -> Value {
    let mut session = json!({
        "agent": context.agent,
        "mode": context.mode,
        "interactive": context.interactive,
        "permission_hook": context.permission_hook,
        "bypass_available": context.bypass_available,
    });
    if !context.agent_id.is_empty() {
        set(&mut session, "agent_id", json!(context.agent_id));
    }
    // A caller that may claim less than everything is written out (a scenario's default
    // caller may claim anything).
    if *caller != crate::facts::CallerFacts::unrestricted().to_context() {
        set(
            &mut session,
            "caller",
            json!({"principal": caller.principal, "modes": caller.modes, "agents": caller.agents}),
        );
    }
    session
}

/// The scenario's `environment` block (`attached_project` and `session_token` are added by
/// the Projects rendering).
fn environment(context: &EnvironmentContext) -> Value {
    let mut limits = serde_json::Map::new();
    for (key, value) in [
        ("allow_design_sync", &context.design_sync),
        ("allow_projects_tool", &context.projects_tool),
    ] {
        match value.as_str() {
            "allowed" => limits.insert(key.to_string(), json!(true)),
            "denied" => limits.insert(key.to_string(), json!(false)),
            _ => None,
        };
    }
    let flags: serde_json::Map<String, Value> = context
        .feature_flags
        .iter()
        .map(|flag| (flag.clone(), json!(true)))
        .collect();
    json!({
        "provider": context.provider,
        "essential_traffic_only": context.essential_traffic_only,
        "policy_limits": if limits.is_empty() { Value::Null } else { Value::Object(limits) },
        "compliance_taints": context.compliance_taints,
        "feature_flags": flags,
    })
}

/// Sets `key` of a JSON object (a no-op on anything else: every value built here is one).
pub(crate) fn set(target: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = target {
        map.insert(key.to_string(), value);
    }
}

/// Sets `key` of the object under `parent`.
fn set_in(target: &mut Value, parent: &str, key: &str, value: Value) {
    if let Some(child) = target.get_mut(parent) {
        set(child, key, value);
    }
}
