//! authz::card::kept tests: the clauses a "this call only" card adds, from gathered facts.
use serde_json::{json, Value};

use super::*;
use crate::scenario::run::gather;
use crate::scenario::Scenario;

fn facts(session: Value, state: Value, operation: &str, arguments: Value) -> CallFacts {
    let scenario: Scenario = serde_json::from_value(json!({
        "name": "kept",
        "now": "2026-11-30T10:00:00Z",
        "session": session,
        "state": state,
        "call": {"tool": "ClaudeDesign", "input": {"operation": operation, "arguments": arguments}},
    }))
    .expect("scenario");
    gather(&scenario).expect("well-formed").expect("valid call")
}

fn finalize(session: Value, writes: Vec<String>) -> CallFacts {
    let arguments = json!({"project_id": "p1", "writes": writes, "scope": "paths"});
    facts(
        session,
        json!({"consent": true}),
        "finalize_plan",
        arguments,
    )
}

fn writes(count: usize) -> Vec<String> {
    (0..count)
        .map(|index| format!("page-{index}.html"))
        .collect()
}

#[test]
fn a_finalize_plan_that_keeps_no_plan_says_why() {
    let cases = [
        (
            json!({"agent": "subagent"}),
            writes(1),
            "no plan is kept for a subagent",
        ),
        (
            json!({"permission_hook": true}),
            writes(1),
            "no plan is kept for a session with a permission-request hook",
        ),
        (
            json!({}),
            writes(21),
            "no plan is kept (the plan can't be registered: it has 21 writes, more than 20)",
        ),
    ];
    for (session, writes, scope) in cases {
        let note = no_plan(&finalize(session, writes)).expect("a note");
        assert_eq!(note.scope, scope);
        assert_eq!(
            note.clause,
            format!("{scope}, so its paths are not pre-approved for later writes or deletes")
        );
    }
}

#[test]
fn a_plan_that_can_be_kept_gets_no_note() {
    assert_eq!(no_plan(&finalize(json!({}), writes(20))), None);
    let write = facts(
        json!({"agent": "subagent"}),
        json!({"consent": true}),
        "write_files",
        json!({"project_id": "p1", "plan_token": "t", "files": [{"path": "a.html"}]}),
    );
    assert_eq!(no_plan(&write), None, "not a finalize_plan");
}

#[test]
fn a_raw_path_longer_than_its_normalized_form_names_the_rule() {
    // `./` + 79 characters is 81 raw (jnS refuses it) but 79 once normalized.
    let path = format!("./{}", "x".repeat(79));
    let note = no_plan(&finalize(json!({}), vec![path])).expect("a note");
    assert!(
        note.scope.starts_with(
            "no plan is kept (the plan can't be registered: a plan holds at most 20 writes"
        ),
        "{}",
        note.scope
    );
}

#[test]
fn consent_is_not_connected_by_a_session_that_records_nothing() {
    let read = |session: Value| {
        facts(
            session,
            json!({"consent": false}),
            "get_project",
            json!({"project_id": "p1"}),
        )
    };
    let note = unconnected(&read(json!({"agent": "subagent"}))).expect("a note");
    assert_eq!(
        note.scope,
        "Claude Design stays unconnected (nothing is recorded for a subagent)"
    );
    assert!(note
        .clause
        .contains("stays unconnected, since nothing is recorded for a subagent"));
    let headless = json!({"interactive": false, "permission_hook": true});
    let note = unconnected(&read(headless)).expect("a note");
    assert!(note
        .scope
        .ends_with("for a session with a permission-request hook)"));
    assert_eq!(
        unconnected(&read(json!({}))),
        None,
        "the main agent records"
    );
}
