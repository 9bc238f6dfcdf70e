//! analysis::render: a synthesized request as a scenario file (the format of `askgate check`)
//! and the check of that file against both sides. The scenario format takes a call, the
//! session, the environment and the stores, and derives the rest (target facts from paths,
//! provenance from the operation table, ...); a request whose derived facts differ from the
//! synthesized ones does not reproduce, and the finding says so next to the raw request.

mod call;

use serde::Serialize;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::concrete::RawRequest;
use super::diff::{Category, Sides};
use crate::authz::context::{EnvironmentContext, SessionContext};
use crate::authz::PolicySnapshot;
use crate::scenario::{self, Scenario, ScenarioOutcome};

/// The clock of every rendered scenario when the synthesized `now` is not representable.
const FALLBACK_NOW: &str = "2026-11-30T10:00:00Z";

/// A finding's scenario and what `check` decides for it on each side.
#[derive(Debug, Clone, Serialize)]
pub struct Rendered {
    /// The scenario file, when the request could be expressed as one.
    pub scenario: Option<Value>,
    /// `check`'s decision on the before and after side (`refused: ...` for an input error).
    pub check_before: Option<String>,
    pub check_after: Option<String>,
    /// `check` shows the same kind of change as the synthesized request.
    pub reproduces: bool,
    /// Why the scenario does not reproduce, when it does not.
    pub note: Option<String>,
}

impl Rendered {
    fn unexpressible(note: String) -> Self {
        Self {
            scenario: None,
            check_before: None,
            check_after: None,
            reproduces: false,
            note: Some(note),
        }
    }
}

/// Renders `request` and checks it on both sides; tries each candidate rendering (a target
/// path can be written several ways) and keeps the first that reproduces `category`.
pub fn render(
    request: &RawRequest,
    target: bool,
    sides: &Sides<'_>,
    category: Category,
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
    let mut first = None;
    for candidate in candidates {
        let rendered = check(candidate, sides, category, target);
        if rendered.reproduces {
            return rendered;
        }
        first.get_or_insert(rendered);
    }
    first.unwrap_or_else(|| Rendered::unexpressible("no scenario could be rendered".into()))
}

fn check(scenario: Value, sides: &Sides<'_>, category: Category, target: bool) -> Rendered {
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
        (Ok(before), Ok(after)) => Category::of(*before, *after),
        _ => None,
    };
    let reproduces = shown == Some(category);
    let note = (!reproduces).then(|| {
        let what = if target {
            "the scenario derives the target facts (segments, lowercase, characters) from the path"
        } else {
            "the scenario derives some synthesized facts (from the operation table, the stores or the input)"
        };
        format!("{what}, and the derived request is decided alike or differently: check shows {} → {}", label(&before), label(&after))
    });
    Rendered {
        scenario: Some(scenario),
        check_before: Some(label(&before)),
        check_after: Some(label(&after)),
        reproduces,
        note,
    }
}

fn decide(scenario: &Scenario, snapshot: &PolicySnapshot) -> Result<crate::authz::Outcome, String> {
    match scenario::run(scenario, snapshot) {
        Ok(ScenarioOutcome::Decided(decision)) => Ok(decision.decision),
        Ok(ScenarioOutcome::Refused(error)) => Err(format!(
            "refused: `call.input.{}`: {}",
            error.field, error.message
        )),
        Err(error) => Err(format!("invalid: {error}")),
    }
}

fn label(outcome: &Result<crate::authz::Outcome, String>) -> String {
    match outcome {
        Ok(outcome) => outcome.as_str().to_string(),
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
fn session(context: &SessionContext) -> Value {
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
