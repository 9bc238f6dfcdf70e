//! Tests for `memo`: a remembered answer is reused only while the clock stays between the
//! thresholds the policies compare it with, and never when a policy reads the clock in a way
//! the analysis does not follow.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use serde_json::json;

use super::{CALL_BYTES, ENTRY_BYTES, TARGET_BYTES};
use crate::authz::{baseline, Decision, Outcome, PolicySnapshot, RequestContext, Source};
use crate::paths::STRING_OVERHEAD;
use crate::scenario::{run, Scenario, ScenarioOutcome};

/// A plan for `index.html` on p1 that expires at 10:10:00; the write is covered before that.
fn covered_write(now: &str) -> Scenario {
    serde_json::from_value(json!({
        "now": now,
        "state": {"plans": [{
            "token": "tok-1", "project_id": "p1", "writes": ["index.html"],
            "expires_at": "2026-11-30T10:10:00Z"
        }]},
        "call": {"tool": "ClaudeDesign", "input": {"operation": "write_files", "arguments": {
            "project_id": "p1", "plan_token": "tok-1",
            "files": [{"path": "index.html", "data": "x"}]
        }}}
    }))
    .unwrap()
}

fn snapshot_with(extra: &[(&str, &str)]) -> PolicySnapshot {
    let mut sources = baseline::policy_sources();
    sources.extend(extra.iter().map(|(name, text)| Source::new(*name, *text)));
    PolicySnapshot::load(&baseline::schema_source(), &sources).unwrap()
}

fn decide(scenario: &Scenario, snapshot: &PolicySnapshot) -> Decision {
    match run(scenario, snapshot).unwrap() {
        ScenarioOutcome::Decided(decision) => *decision,
        ScenarioOutcome::Refused(error) => panic!("refused: {error:?}"),
    }
}

/// Whether the call's first question was answered from the memo.
fn remembered(decision: &Decision) -> bool {
    decision
        .requests
        .iter()
        .find(|request| matches!(request.context, RequestContext::Call(_)))
        .unwrap()
        .memoized
}

#[test]
fn a_covered_write_is_remembered_until_the_plan_expires_to_the_millisecond() {
    let snapshot = snapshot_with(&[]);
    let early = decide(&covered_write("2026-11-30T10:00:00Z"), &snapshot);
    assert_eq!(early.decision, Outcome::Allow);
    assert!(!remembered(&early));

    let later = decide(&covered_write("2026-11-30T10:09:59.999Z"), &snapshot);
    assert_eq!(later.decision, Outcome::Allow);
    assert!(
        remembered(&later),
        "the same request before expiry is remembered"
    );

    // At the expiry the plan no longer covers: the remembered allow must not be reused.
    let expired = decide(&covered_write("2026-11-30T10:10:00Z"), &snapshot);
    assert_eq!(expired.decision, Outcome::Ask);
    assert!(!remembered(&expired));
    let after = decide(&covered_write("2026-11-30T10:25:00Z"), &snapshot);
    assert_eq!(after.decision, Outcome::Ask);

    // Going back before the expiry (a clock set back) is evaluated afresh, not reused.
    let again = decide(&covered_write("2026-11-30T10:05:00Z"), &snapshot);
    assert_eq!(again.decision, Outcome::Allow);
    assert!(!remembered(&again));
}

#[test]
fn a_literal_deadline_in_an_admin_policy_is_honoured() {
    // 2026-11-30T10:05:00Z in milliseconds.
    let deadline = r#"
@id("admin.freeze")
@reason("writes are frozen from 10:05")
forbid (principal, action == Action::"write_files", resource)
when { context.now >= 1796033100000 };
"#;
    let snapshot = snapshot_with(&[("freeze.cedar", deadline)]);
    let before = decide(&covered_write("2026-11-30T10:04:59.999Z"), &snapshot);
    assert_eq!(before.decision, Outcome::Allow);
    let _ = decide(&covered_write("2026-11-30T10:04:59.999Z"), &snapshot);
    let at = decide(&covered_write("2026-11-30T10:05:00Z"), &snapshot);
    assert_eq!(at.decision, Outcome::Deny);
    assert_eq!(at.policies, vec!["admin.freeze"]);
}

#[test]
fn a_policy_doing_arithmetic_on_the_clock_is_never_answered_from_the_memo() {
    let arithmetic = r#"
@id("admin.grace")
@reason("a plan within a minute of expiry is not trusted")
forbid (principal, action == Action::"write_files", resource)
when { context.now + 60000 >= context.design.plan.expires_at };
"#;
    let snapshot = snapshot_with(&[("grace.cedar", arithmetic)]);
    let early = decide(&covered_write("2026-11-30T10:00:00Z"), &snapshot);
    assert_eq!(early.decision, Outcome::Allow);
    let late = decide(&covered_write("2026-11-30T10:09:30Z"), &snapshot);
    assert_eq!(late.decision, Outcome::Deny);
    assert!(!remembered(&late));
    let early_again = decide(&covered_write("2026-11-30T10:00:00Z"), &snapshot);
    assert!(!remembered(&early_again));
    assert_eq!(snapshot.memo().calls_len(), 0);
}

#[test]
fn a_changed_fact_is_a_different_request() {
    let snapshot = snapshot_with(&[]);
    let covered = decide(&covered_write("2026-11-30T10:00:00Z"), &snapshot);
    assert_eq!(covered.decision, Outcome::Allow);
    let mut other_path = covered_write("2026-11-30T10:00:00Z");
    other_path.call.input["arguments"]["files"][0]["path"] = json!("other.html");
    let uncovered = decide(&other_path, &snapshot);
    assert_eq!(uncovered.decision, Outcome::Ask);
    assert!(!remembered(&uncovered));
}

#[test]
fn clearing_forgets_every_answer() {
    let snapshot = snapshot_with(&[]);
    decide(&covered_write("2026-11-30T10:00:00Z"), &snapshot);
    assert!(snapshot.memo().calls_len() > 0);
    snapshot.clear_memo();
    assert_eq!(snapshot.memo().calls_len(), 0);
    let fresh = decide(&covered_write("2026-11-30T10:00:00Z"), &snapshot);
    assert!(!remembered(&fresh));
}

#[test]
fn the_memo_is_bounded_by_the_bytes_it_holds() {
    let snapshot = snapshot_with(&[]);
    // 200 paths of about 1 KiB: each remembered call holds about 250 KB of paths.
    let long = "d".repeat(1_000);
    let files: Vec<_> = (0..200)
        .map(|index| json!({"path": format!("{long}/f{index}.html"), "data": "x"}))
        .collect();
    // 300 distinct calls (one feature flag each): far more than the memo may hold.
    let mut most = 0;
    for flag in 0..300 {
        let mut scenario = covered_write("2026-11-30T10:00:00Z");
        scenario.call.input["arguments"]["files"] = json!(files);
        scenario
            .environment
            .feature_flags
            .insert(format!("flag-{flag}"), true);
        decide(&scenario, &snapshot);
        assert!(snapshot.memo().call_bytes() <= CALL_BYTES);
        assert!(snapshot.memo().target_bytes() <= TARGET_BYTES);
        most = most.max(snapshot.memo().calls_len());
    }
    assert!(most > 10, "only {most} calls were ever remembered");
    assert!(
        most * 200 * 1_000 <= CALL_BYTES,
        "{most} calls remembered at once"
    );
}

#[test]
fn a_remembered_classification_weighs_the_facts_it_keeps() {
    let snapshot = snapshot_with(&[]);
    let mut scenario = covered_write("2026-11-30T10:00:00Z");
    scenario.call.input["arguments"]["files"] = json!([
        {"path": "w/1", "data": "x"}, {"path": "w/2", "data": "x"}, {"path": "w/1", "data": "x"}
    ]);
    decide(&scenario, &snapshot);
    let facts: usize = ["w/1", "w/2", "w/1"]
        .iter()
        .map(|path| crate::paths::target_facts(path).footprint())
        .sum();
    let answers = 2 * (ENTRY_BYTES + 3 + STRING_OVERHEAD);
    assert_eq!(
        snapshot.memo().target_bytes(),
        answers + ENTRY_BYTES + facts
    );
}
