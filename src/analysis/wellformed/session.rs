//! analysis::wellformed::session: the facts every call carries — the session (its derived
//! `bypass` and `may_record` written as the truth tables of `facts::Session`'s own methods),
//! the attestation's values, the environment's restrictions, the clock, the first question's empty approvals and the
//! principal's id.

use super::{implies, one_of, parse_all, Approvals, Literals, MAX_NOW};
use crate::analysis::expr::{self, Expr};
use crate::analysis::AnalysisError;
use crate::facts::{AgentKind, Attestation, Mode, Session};

const MODES: [Mode; 6] = [
    Mode::Default,
    Mode::AcceptEdits,
    Mode::Plan,
    Mode::Auto,
    Mode::DontAsk,
    Mode::BypassPermissions,
];

const AGENTS: [AgentKind; 2] = [AgentKind::Main, AgentKind::Subagent];

pub(super) fn condition(literals: &Literals, approvals: Approvals) -> Result<Expr, AnalysisError> {
    let modes: Vec<&str> = MODES.iter().map(|mode| mode.as_str()).collect();
    let attestations: Vec<&str> = Attestation::ALL.iter().map(|a| a.as_str()).collect();
    let mut parts = vec![
        match approvals {
            Approvals::None => "context.approvals.isEmpty()".to_string(),
            Approvals::Any => {
                r#"["batch", "consent", "grant", "plan"].containsAll(context.approvals)"#
                    .to_string()
            }
        },
        one_of("context.session.agent", &["main", "subagent"]),
        one_of("context.session.mode", &modes),
        // What a caller may claim (`facts::caller`): modes and agent kinds there are.
        format!("[{}].containsAll(context.caller.modes)", quoted(&modes)),
        r#"["main", "subagent"].containsAll(context.caller.agents)"#.to_string(),
        // A9: `facts::Attestation`'s values, and `none` only where nothing is attested (the
        // HTTP API and the hook), which `mcp.require_attestation` never covers.
        one_of("context.session.attestation", &attestations),
        implies(
            r#"context.session.attestation == "none""#,
            "!context.session.attestation_required",
        ),
        format!(
            "context.session.bypass == ({})",
            truth_table(Session::bypass)
        ),
        format!(
            "context.session.may_record == ({})",
            truth_table(Session::may_record)
        ),
        one_of(
            "context.environment.design_sync",
            &["allowed", "denied", "unlisted"],
        ),
        one_of(
            "context.environment.projects_tool",
            &["allowed", "denied", "unlisted"],
        ),
        "context.now >= 0".to_string(),
        format!("context.now <= {MAX_NOW}"),
        // `Session::principal_id`: the agent id, else `main` or `subagent`.
        r#"principal != Agent::"""#.to_string(),
    ];
    for agent in ["main", "subagent"] {
        parts.push(implies(
            &format!(r#"context.session.agent_id == "" && context.session.agent == "{agent}""#),
            &format!(r#"principal == Agent::"{agent}""#),
        ));
    }
    let mut condition = parse_all(&parts)?;
    for id in &literals.agents {
        condition = expr::and(condition, principal_is(id)?);
    }
    Ok(condition)
}

fn quoted(values: &[&str]) -> String {
    values
        .iter()
        .map(|value| format!("{value:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `principal == Agent::"id"` exactly when the session names that principal.
fn principal_is(id: &str) -> Result<Expr, AnalysisError> {
    let agent_id = expr::context(&["session", "agent_id"]);
    let named = expr::or(
        expr::eq(agent_id.clone(), expr::string(id)),
        expr::and(
            expr::eq(agent_id, expr::string("")),
            expr::eq(expr::context(&["session", "agent"]), expr::string(id)),
        ),
    );
    Ok(expr::eq(
        expr::eq(expr::principal(), expr::entity("Agent", id)?),
        named,
    ))
}

/// The inputs of a session fact: every session with no agent id.
fn sessions() -> Vec<Session> {
    let mut all = Vec::new();
    for agent in AGENTS {
        for mode in MODES {
            for flags in 0..8u8 {
                all.push(Session {
                    agent,
                    agent_id: None,
                    mode,
                    interactive: flags & 1 != 0,
                    permission_hook: flags & 2 != 0,
                    bypass_available: flags & 4 != 0,
                    attestation: crate::facts::session::Attestation::None,
                    attestation_required: false,
                    caller: crate::facts::CallerFacts::unrestricted(),
                });
            }
        }
    }
    all
}

/// One input of a session fact, as the Cedar comparison it is.
type Input = (&'static str, fn(&Session) -> String);

const INPUTS: [Input; 5] = [
    ("agent", |s| {
        format!(r#"context.session.agent == "{}""#, s.to_context().agent)
    }),
    ("mode", |s| {
        format!(r#"context.session.mode == "{}""#, s.mode.as_str())
    }),
    ("interactive", |s| {
        format!("context.session.interactive == {}", s.interactive)
    }),
    ("permission_hook", |s| {
        format!("context.session.permission_hook == {}", s.permission_hook)
    }),
    ("bypass_available", |s| {
        format!("context.session.bypass_available == {}", s.bypass_available)
    }),
];

/// The sessions for which `fact` holds, as a disjunction over the inputs it depends on (an
/// input it never depends on is left out, so the table stays small).
pub(super) fn truth_table(fact: fn(&Session) -> bool) -> String {
    let all = sessions();
    let used: Vec<&Input> = INPUTS
        .iter()
        .filter(|(name, _)| depends_on(&all, fact, name))
        .collect();
    let mut rows: Vec<String> = all
        .iter()
        .filter(|session| fact(session))
        .map(|session| {
            let row: Vec<String> = used.iter().map(|(_, write)| write(session)).collect();
            format!("({})", row.join(" && "))
        })
        .collect();
    rows.sort();
    rows.dedup();
    if rows.is_empty() {
        return "false".to_string();
    }
    rows.join(" || ")
}

/// Whether changing input `name` alone ever changes `fact`.
fn depends_on(all: &[Session], fact: fn(&Session) -> bool, name: &str) -> bool {
    all.iter().any(|session| {
        all.iter()
            .filter(|other| differs_only_in(session, other, name))
            .any(|other| fact(session) != fact(other))
    })
}

fn differs_only_in(a: &Session, b: &Session, name: &str) -> bool {
    INPUTS.iter().all(|(input, write)| {
        let same = write(a) == write(b);
        if *input == name {
            !same
        } else {
            same
        }
    })
}
