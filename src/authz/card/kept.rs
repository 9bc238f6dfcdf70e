//! authz::card::kept: what a "this call only" approval does not keep, in words for its card —
//! consent where the session records nothing, a plan that will not be registered — and why,
//! read from the facts the policies decided on (`session.may_record`,
//! `design.plan_registrable`). It decides nothing: the policies chose the card's kind.

use crate::authz::context::{DesignContext, SessionContext, SurfaceContext};
use crate::authz::{CallFacts, CallSummary};
use crate::paths::{check_plan_display, PlanDisplayRefusal};

/// What is not kept, as a clause of the card's scope sentence and one of its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Note {
    pub scope: String,
    pub clause: String,
}

/// Consent is refused and this session's approvals record nothing: approving runs the call
/// but does not connect Claude Design.
pub(super) fn unconnected(facts: &CallFacts) -> Option<Note> {
    let design = design(facts)?;
    if design.consent != "refused" || design.operation == "list" {
        return None;
    }
    let why = records_nothing(&facts.context.session)?;
    Some(Note {
        scope: format!("Claude Design stays unconnected (nothing is recorded {why})"),
        clause: format!(
            "Claude Design is not connected for this account and stays unconnected, since nothing is recorded {why} (the server refuses the call if it needs consent; connect Claude Design from the main agent or with /design consent)"
        ),
    })
}

/// A finalize_plan whose approval registers no plan: the session records nothing, or the
/// plan's paths cannot be registered (§3 `jnS`).
pub(super) fn no_plan(facts: &CallFacts) -> Option<Note> {
    let design = design(facts)?;
    if design.operation != "finalize_plan" {
        return None;
    }
    let scope = match records_nothing(&facts.context.session) {
        Some(why) => format!("no plan is kept {why}"),
        None if !design.plan_registrable => {
            format!(
                "no plan is kept (the plan can't be registered: {})",
                unregistrable(&facts.summary)
            )
        }
        None => return None,
    };
    let clause = format!("{scope}, so its paths are not pre-approved for later writes or deletes");
    Some(Note { scope, clause })
}

fn design(facts: &CallFacts) -> Option<&DesignContext> {
    match &facts.context.surface {
        SurfaceContext::Design(design) => Some(design),
        SurfaceContext::Projects(_) => None,
    }
}

/// Why approvals in this session record no consent, grant or plan (`session.may_record` is
/// false, SPEC §5), as a phrase; `None` when they do record.
fn records_nothing(session: &SessionContext) -> Option<&'static str> {
    if session.may_record {
        return None;
    }
    Some(if session.agent != "main" {
        "for a subagent"
    } else if session.permission_hook {
        "for a session with a permission-request hook"
    } else if !session.interactive {
        "for a session that cannot prompt"
    } else {
        "in bypass mode"
    })
}

/// Why the plan cannot be registered, without its paths (the card lists them). The check runs
/// on the card's normalized paths, which are never longer than the raw ones the fact was
/// computed from; when those pass, the rule itself is named.
fn unregistrable(summary: &CallSummary) -> String {
    match check_plan_display(&summary.plan_writes, &summary.plan_deletes) {
        Err(PlanDisplayRefusal::TooManyWrites { count }) => {
            format!("it has {count} writes, more than 20")
        }
        Err(PlanDisplayRefusal::TooManyDeletes { count }) => {
            format!("it has {count} deletes, more than 20")
        }
        Err(PlanDisplayRefusal::PathTooLong { length, .. }) => {
            format!("a path is {length} characters long, more than 80")
        }
        Err(PlanDisplayRefusal::RejectedCharacter { character, .. }) => format!(
            "a path has the rejected character U+{:04X}",
            u32::from(character)
        ),
        Err(PlanDisplayRefusal::OverBudget { cost }) => {
            format!("it renders to {cost} characters, more than 2,000")
        }
        Ok(()) => "a plan holds at most 20 writes and 20 deletes, each path at most 80 characters with no rejected character, within 2,000 characters".to_string(),
    }
}

#[cfg(test)]
#[path = "kept_tests.rs"]
mod tests;
