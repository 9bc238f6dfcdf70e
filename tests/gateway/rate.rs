//! A plain rate limit per caller (issue 36 §2), on every door over real HTTP: with
//! `limits.rate`, a caller's call past its burst is denied by the shipped gate
//! `gates.rate-limit` before anything is asked upstream — a logged decision — and answered as
//! a rate limit naming the time to wait: 429 with `Retry-After` on the HTTP API, a tool error
//! on `/mcp`, the hook's deny. Another caller keeps its own budget; without `limits` nothing
//! is limited.

use serde_json::{json, Value};

use super::harness::{main_session, Gateway, AGENT, APPROVER};
use super::mcp_client::McpClient;

const GATE: &str = "gates.rate-limit";

fn read(session: &str) -> Value {
    json!({"session": main_session(session),
           "input": {"operation": "get_project", "arguments": {"project_id": "p1"}}})
}

/// A service whose callers may make 2 calls at once and 1 a second after that; a second
/// agent token beside the demo one.
async fn limited(logs: &std::path::Path) -> Gateway {
    let logs = logs.to_path_buf();
    Gateway::start_with(|raw| {
        raw.limits =
            Some(serde_json::from_value(json!({"rate": {"per_second": 1, "burst": 2}})).unwrap());
        raw.callers = Some(vec![
            serde_json::from_value(
                json!({"token": AGENT, "role": "agent", "principal": "agent-one"}),
            )
            .unwrap(),
            serde_json::from_value(
                json!({"token": "second-agent-token-of-at-least-32-chars", "role": "agent",
                "principal": "agent-two"}),
            )
            .unwrap(),
            serde_json::from_value(
                json!({"token": APPROVER, "role": "approver", "principal": "lead"}),
            )
            .unwrap(),
        ]);
        raw.log_dir = Some(logs);
    })
    .await
}

fn decisions(logs: &std::path::Path) -> Vec<Value> {
    std::fs::read_dir(logs)
        .unwrap()
        .filter_map(|entry| std::fs::read_to_string(entry.unwrap().path()).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .collect::<Vec<_>>()
        })
        .filter(|record| record["kind"] == "decision")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_past_its_rate_is_answered_429_with_retry_after_and_the_deny_is_logged() {
    let logs = tempfile::tempdir().unwrap();
    let gateway = limited(logs.path()).await;
    gateway.record_consent().await;
    let upstream_before = gateway.tool_calls("get_project").await;
    for n in 0..2 {
        let fits = gateway
            .post(
                "/v1/design/call",
                Some(AGENT),
                Some(read(&format!("s-{n}"))),
            )
            .await;
        assert_eq!(fits.status, 200, "{}", fits.body);
    }
    let over = gateway
        .post("/v1/design/call", Some(AGENT), Some(read("s-2")))
        .await;
    assert_eq!(over.status, 429, "{}", over.body);
    let wait: i64 = over.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&wait), "{wait}");
    assert_eq!(over.body["decision"], "deny", "{}", over.body);
    assert_eq!(over.body["policies"], json!([GATE]), "{}", over.body);
    let reason = over.body["reason"].as_str().unwrap();
    assert!(
        reason.contains("rate limit") && reason.contains("try again in"),
        "{reason}"
    );
    assert_eq!(
        gateway.tool_calls("get_project").await,
        upstream_before + 2,
        "the limited call never went upstream"
    );
    // The other agent has its own budget; /v1/authorize answers the same way.
    let other = gateway
        .post(
            "/v1/design/call",
            Some("second-agent-token-of-at-least-32-chars"),
            Some(read("s-other")),
        )
        .await;
    assert_eq!(other.status, 200, "{}", other.body);
    let mut asked = read("s-3");
    asked["tool"] = json!("ClaudeDesign");
    let authorize = gateway
        .post("/v1/authorize", Some(AGENT), Some(asked))
        .await;
    assert_eq!(authorize.status, 429, "{}", authorize.body);
    assert!(authorize.headers.contains_key("retry-after"));

    let logged: Vec<Value> = decisions(logs.path())
        .into_iter()
        .filter(|record| record["policies"] == json!([GATE]))
        .collect();
    assert_eq!(logged.len(), 2, "every limit hit is a logged decision");
    assert_eq!(logged[0]["decision"], "deny");
    assert_eq!(
        logged[0]["facts"]["context"]["caller"]["usage"]["rate_limited"], true,
        "{}",
        logged[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_door_and_the_hook_name_the_wait_and_no_limit_is_the_default() {
    let logs = tempfile::tempdir().unwrap();
    let gateway = limited(logs.path()).await;
    gateway.record_consent().await;
    let mut client = McpClient::new(&gateway, Some(AGENT));
    assert_eq!(client.initialize(json!({})).await.status, 200);
    let mut texts = Vec::new();
    for _ in 0..3 {
        let (result, _) = client
            .call(
                "ClaudeDesign",
                json!({"operation": "get_project", "arguments": {"project_id": "p1"}}),
            )
            .await;
        texts.push(result);
    }
    let last = &texts[2];
    assert_eq!(last["isError"], true, "{last}");
    assert!(last.to_string().contains("try again in"), "{last}");
    assert!(last.to_string().contains(GATE), "{last}");

    let hook = json!({
        "session_id": "cc-rate", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "ClaudeDesign", "tool_use_id": "toolu_rate",
        "tool_input": {"operation": "get_project", "arguments": {"project_id": "p1"}}
    });
    let reply = gateway
        .post("/v1/hooks/claude-code", Some(AGENT), Some(hook))
        .await;
    let specific = &reply.body["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny", "{}", reply.body);
    let reason = specific["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains(GATE) && reason.contains("try again in"),
        "{reason}"
    );

    // Without `limits`, the same burst is not limited.
    let free = Gateway::start().await;
    free.record_consent().await;
    for n in 0..5 {
        let reply = free
            .post(
                "/v1/design/call",
                Some(AGENT),
                Some(read(&format!("f-{n}"))),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
}
