//! Two runs of the real client on one agent token are two client sessions, and askgate keeps
//! their plans apart when the hook attests the calls (issue 19 §3): before, every 2026-07-28
//! call of one token shared one plan store.

use serde_json::{json, Value};

use super::attest::{
    attested_run, consented_gateway, decide_in_turn, decisions_of, design, plan_token, Verdict,
};
use crate::gateway::harness::covered_write_args;
use crate::gateway::hook_install::InstalledCopy;
use crate::support::fake_messages::{FakeMessages, ToolResult, Turn};

const REFUSAL_NOTE: &str = "that plan belongs to another session";

fn session_of(record: &Value) -> &str {
    record["session"].as_str().unwrap_or("")
}

fn names_policy(record: &Value, policy: &str) -> bool {
    record["policies"]
        .as_array()
        .is_some_and(|policies| policies.contains(&json!(policy)))
}

/// Session 1 finalizes a plan (approved: registered for session 1) and writes under it
/// (allowed, no ask); session 2, on the same token, writes the same path with session 1's
/// token: not covered, so it asks for the batch, and is refused here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_real_client_sessions_on_one_token_keep_separate_plans() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();

    let plan = json!({"project_id": "p1", "writes": ["site/a.html"], "scope": "paths"});
    let first = FakeMessages::start(vec![
        design("finalize_plan", plan),
        Turn::after(|results| {
            let token = plan_token(results.last().expect("the plan's result"));
            design(
                "write_files",
                covered_write_args("p1", &token, &["site/a.html"]),
            )
        }),
        Turn::Text("planned and written".to_string()),
    ])
    .await;
    let run = attested_run(&first, &gateway, &copy, "default");
    let (out_1, approved) = tokio::join!(run.json(), decide_in_turn(&gateway, &[Verdict::Approve]));
    assert_eq!(out_1["result"], "planned and written", "{out_1}");
    assert_eq!(approved[0]["card"]["kind"], "plan", "{}", approved[0]);
    let results_1 = first.tool_results();
    assert_eq!(results_1.len(), 2, "{results_1:?}");
    assert!(!results_1[1].is_error, "{results_1:?}");
    let token = plan_token(&results_1[0]);
    assert_eq!(gateway.tool_calls("write_files").await, 1);

    let second = FakeMessages::start(vec![
        design(
            "write_files",
            covered_write_args("p1", &token, &["site/a.html"]),
        ),
        Turn::Text("tried".to_string()),
    ])
    .await;
    let run = attested_run(&second, &gateway, &copy, "default");
    let (out_2, asked) = tokio::join!(
        run.json(),
        decide_in_turn(&gateway, &[Verdict::Refuse(REFUSAL_NOTE)])
    );
    assert_eq!(asked[0]["card"]["kind"], "batch", "{}", asked[0]);
    let results_2: Vec<ToolResult> = second.tool_results();
    assert_eq!(results_2.len(), 1, "{results_2:?}; client output {out_2}");
    assert!(results_2[0].is_error, "{results_2:?}");
    assert!(results_2[0].text.contains(REFUSAL_NOTE), "{results_2:?}");
    assert_eq!(gateway.tool_calls("write_files").await, 1, "not run again");

    // The log: one session key per client session, each the client's own session id.
    let sessions = [&out_1, &out_2].map(|out| {
        format!(
            "mcp-attested:{}",
            out["session_id"].as_str().expect("the client's session id")
        )
    });
    assert_ne!(sessions[0], sessions[1]);
    let plans = decisions_of(log.path(), "finalize_plan");
    assert_eq!(session_of(&plans[0]), sessions[0], "{}", plans[0]);
    assert!(names_policy(&plans[0], "design.finalize-plan-asks"));
    let writes: Vec<Value> = decisions_of(log.path(), "write_files")
        .into_iter()
        .filter(|record| record["tool_use_id"].is_string())
        .collect();
    assert_eq!(writes.len(), 2, "{writes:?}");
    let (covered, elsewhere) = (&writes[0], &writes[1]);
    assert_eq!(session_of(covered), sessions[0], "{covered}");
    assert_eq!(covered["decision"], "allow", "{covered}");
    assert!(names_policy(covered, "plans.covered"), "{covered}");
    assert_eq!(session_of(elsewhere), sessions[1], "{elsewhere}");
    assert_eq!(elsewhere["decision"], "ask", "{elsewhere}");
    assert!(
        names_policy(elsewhere, "plans.uncovered-asks"),
        "{elsewhere}"
    );
    let plan = &elsewhere["facts"]["context"]["design"]["plan"];
    assert_eq!(plan["found"], false, "{elsewhere}");
    for record in [covered, elsewhere] {
        let session = &record["facts"]["context"]["session"];
        assert_eq!(session["attestation"], "attested", "{record}");
        assert_eq!(session["agent"], "main", "{record}");
    }
}
