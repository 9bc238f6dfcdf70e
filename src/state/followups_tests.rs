//! state::followups tests: the events each outcome implies, and what `may_record` withholds.
use serde_json::json;
use time::macros::datetime;

use super::*;
use crate::state::ConsentState;

static S1: std::sync::LazyLock<SessionKey> =
    std::sync::LazyLock::new(|| SessionKey::new("agent-one", "s1"));

const NOW: OffsetDateTime = datetime!(2025-06-01 12:00:00 UTC);
const PROJECT: &str = "0a1b2c3d-0000-4000-8000-00000000abcd";

fn call(operation: &str, arguments: Value) -> DesignCall {
    DesignCall::parse(
        json!({"operation": operation, "arguments": arguments}),
        None,
    )
    .unwrap()
}

fn followups<'a>(
    state: &'a DesignState,
    call: &'a DesignCall,
    approved: Approved,
    may_record: bool,
) -> FollowUps<'a> {
    FollowUps {
        state,
        session: &S1,
        call,
        approved,
        may_record,
        main_without_hook: true,
    }
}

/// Applies what a successful call implies, as a store would.
fn applied(state: &DesignState, succeeded: Succeeded) {
    for event in &succeeded.events {
        event.apply(state);
    }
    if let Some(plan) = succeeded.plan {
        let _ = plan.apply(state);
    }
}

fn finalize() -> DesignCall {
    call(
        "finalize_plan",
        json!({"project_id": PROJECT, "writes": ["index.html"]}),
    )
}

const PLAN_RESULT: &str = r#"{"plan_token":"tok-1","expires_at":4102444800}"#;

#[test]
fn an_approved_finalize_registers_the_plan_in_its_session() {
    let state = DesignState::default();
    let call = finalize();
    let approved = Approved {
        plan: true,
        ..Approved::default()
    };
    let run = followups(&state, &call, approved, true);
    run.before_call().unwrap().apply(&state);
    applied(&state, run.succeeded(Some(PLAN_RESULT), false, NOW));
    let plan = state
        .sessions
        .plan(&SessionKey::new("agent-one", "s1"), "tok-1")
        .unwrap();
    assert_eq!(plan.project_id, PROJECT);
    assert!(state
        .sessions
        .plan(&SessionKey::new("agent-one", "s2"), "tok-1")
        .is_none());
}

#[test]
fn without_may_record_nothing_is_recorded() {
    let state = DesignState::default();
    let call = finalize();
    let approved = Approved {
        plan: true,
        consent: true,
        grant: true,
        batch: false,
    };
    let run = followups(&state, &call, approved, false);
    assert!(!run.records_consent());
    assert!(!run.records_grant_for(PROJECT));
    applied(&state, run.succeeded(Some(PLAN_RESULT), false, NOW));
    assert!(state.sessions.is_empty());
}

#[test]
fn an_error_result_changes_nothing() {
    let state = DesignState::default();
    let call = call(
        "update_sharing",
        json!({"project_id": PROJECT, "scope": "org"}),
    );
    state.grant_verified(PROJECT);
    let run = followups(&state, &call, Approved::default(), true);
    applied(&state, run.succeeded(None, true, NOW));
    assert!(state.grants.is_verified(PROJECT));
    applied(&state, run.succeeded(None, false, NOW));
    assert!(!state.grants.is_verified(PROJECT));
    assert!(state.grants.needs_recard(PROJECT));
}

#[test]
fn tokenless_writes_observe_or_verify_the_grant() {
    let state = DesignState::default();
    let write = call(
        "write_files",
        json!({"project_id": PROJECT, "files": [{"path": "a.html", "data": "x"}]}),
    );
    let run = followups(&state, &write, Approved::default(), true);
    applied(&state, run.succeeded(None, false, NOW));
    assert!(state.grants.is_verified(PROJECT));
    state.membership_or_sharing_changed(PROJECT);
    applied(&state, run.succeeded(None, false, NOW));
    assert!(
        !state.grants.is_verified(PROJECT),
        "a recard needs the human"
    );
    let approved = Approved {
        grant: true,
        ..Approved::default()
    };
    let run = followups(&state, &write, approved, true);
    applied(&state, run.succeeded(None, false, NOW));
    assert!(state.grants.is_verified(PROJECT) && state.grants.needs_recard(PROJECT));
}

#[test]
fn refusals_from_the_server_apply_their_events() {
    let state = DesignState::default();
    let call = finalize();
    let run = followups(&state, &call, Approved::default(), true);
    state.consent_granted();
    run.needs_project_grant(PROJECT).apply(&state);
    assert_eq!(state.consent.state(), ConsentState::Unknown);
    run.needs_consent().apply(&state);
    assert_eq!(state.consent.state(), ConsentState::Refused);
    assert!(state.grants.recard_all_flagged());
    run.grant_answered(PROJECT, false).apply(&state);
    assert!(state.grants.is_ineligible(PROJECT));
}
