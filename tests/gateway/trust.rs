//! What a caller may claim about its session, on every front door (issue 32 §1, finding P1 and
//! concern 1 of findings/trust-2026-12-04.md): over real HTTP on loopback, a claim beyond what
//! the caller's configuration makes available is denied by a `gates.caller-*` policy naming the
//! setting, and nothing goes upstream; within it, the call is decided as usual.

use serde_json::{json, Value};

use super::harness::{assert_policy, Gateway, AGENT, APPROVER};
use super::mcp_client::McpClient;

fn session(mode: &str, agent: &str) -> Value {
    json!({"id": "s-trust", "agent": agent, "mode": mode, "interactive": true})
}

fn delete_input() -> Value {
    json!({"operation": "delete_files", "arguments": {"project_id": "p1", "paths": ["index.html"]}})
}

fn callers(raw: &mut askgate::server::config::RawConfig, agent_session: Value) {
    raw.callers = Some(vec![
        serde_json::from_value(json!({"token": AGENT, "role": "agent",
            "principal": "agent-one", "session": agent_session}))
        .unwrap(),
        serde_json::from_value(json!({"token": APPROVER, "role": "approver",
            "principal": "lead"}))
        .unwrap(),
    ]);
}

fn hook_input(mode: &str, agent_id: Option<&str>, tool_input: Value) -> Value {
    let mut input = json!({
        "session_id": "cc-trust", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": mode, "hook_event_name": "PreToolUse",
        "tool_name": "ClaudeDesign", "tool_input": tool_input, "tool_use_id": "toolu_trust"
    });
    if let Some(agent_id) = agent_id {
        input["agent_id"] = json!(agent_id);
    }
    input
}

fn hook_decision(output: &Value) -> (&str, &str) {
    let specific = &output["hookSpecificOutput"];
    (
        specific["permissionDecision"].as_str().unwrap_or(""),
        specific["permissionDecisionReason"].as_str().unwrap_or(""),
    )
}

/// P1: the demo agent (no bypass made available) states bypassPermissions over the HTTP API:
/// every route that decides denies it by the gate, naming the setting, and the sandbox never
/// sees the delete. The same body in default mode asks, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p1_a_bypass_claim_over_http_is_denied_on_every_route_and_nothing_runs_upstream() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let gate = "gates.caller-bypass-not-allowed";
    for (mode, available) in [("bypassPermissions", false), ("plan", true)] {
        let mut claimed = session(mode, "main");
        claimed["bypass_available"] = json!(available);
        let denied = gateway
            .post(
                "/v1/design/call",
                Some(AGENT),
                Some(json!({"session": claimed, "input": delete_input()})),
            )
            .await;
        assert_eq!(denied.status, 403, "{mode}: {}", denied.body);
        assert_eq!(denied.policies(), vec![gate.to_string()], "{}", denied.body);
        let reason = denied.body["reason"].as_str().unwrap();
        assert!(
            reason.contains("callers[].session.bypass_available"),
            "{reason}"
        );
        let authorized = gateway
            .post(
                "/v1/authorize",
                Some(AGENT),
                Some(json!({"session": claimed, "tool": "ClaudeDesign", "input": delete_input()})),
            )
            .await;
        assert_eq!(authorized.decision(), "deny", "{}", authorized.body);
        assert_policy(&authorized, gate);
        let projects = gateway
            .post(
                "/v1/projects/call",
                Some(AGENT),
                Some(json!({"session": claimed, "input": {"method": "project_info"}})),
            )
            .await;
        assert_eq!(projects.status, 403, "{}", projects.body);
        assert_policy(&projects, gate);
    }
    assert_eq!(gateway.tool_calls("delete_files").await, 0);
    let asked = gateway
        .design(
            &session("default", "main"),
            "delete_files",
            delete_input()["arguments"].clone(),
        )
        .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_policy(&asked, "design.destructive-asks");
    assert_eq!(gateway.tool_calls("delete_files").await, 0);
}

/// P1's other half: where the operator made bypass available to the caller
/// (`callers[].session.bypass_available`), its bypass is honoured over HTTP as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p1_bypass_the_operator_made_available_is_honoured_over_http() {
    let gateway = Gateway::start_with(|raw| callers(raw, json!({"bypass_available": true}))).await;
    gateway.record_consent().await;
    let allowed = gateway
        .design(
            &session("bypassPermissions", "main"),
            "delete_files",
            delete_input()["arguments"].clone(),
        )
        .await;
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    assert_policy(&allowed, "modes.bypass");
    assert_eq!(gateway.tool_calls("delete_files").await, 1);
}

/// Concern 1: a caller configured as a subagent in dontAsk mode is held to it on the HTTP API
/// and the hook endpoint as over MCP: claiming the main agent or another mode is denied, naming
/// the setting; its own facts are decided as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p1_concern_1_a_configured_subagent_is_held_to_it_on_every_door() {
    let gateway = Gateway::start_with(|raw| {
        callers(raw, json!({"agent": "subagent", "mode": "dontAsk"}));
    })
    .await;
    gateway.record_consent().await;
    let read = json!({"project_id": "p1"});
    let as_main = gateway
        .design(&session("dontAsk", "main"), "get_project", read.clone())
        .await;
    assert_eq!(as_main.status, 403, "{}", as_main.body);
    assert_eq!(
        as_main.policies(),
        vec!["gates.caller-agent-not-allowed".to_string()]
    );
    assert!(as_main.body["reason"]
        .as_str()
        .unwrap()
        .contains("callers[].session.agent"));
    let other_mode = gateway
        .design(&session("default", "subagent"), "get_project", read.clone())
        .await;
    assert_eq!(other_mode.status, 403, "{}", other_mode.body);
    assert_eq!(
        other_mode.policies(),
        vec!["gates.caller-mode-not-allowed".to_string()]
    );
    let own = gateway
        .design(&session("dontAsk", "subagent"), "get_project", read.clone())
        .await;
    assert_eq!(own.status, 200, "{}", own.body);

    // The hook endpoint: the hook input states the main agent (no agent_id) in default mode.
    let design_read = json!({"operation": "get_project", "arguments": read});
    let hooked = gateway
        .post(
            "/v1/hooks/claude-code",
            Some(AGENT),
            Some(hook_input("default", None, design_read.clone())),
        )
        .await;
    let (decision, reason) = hook_decision(&hooked.body);
    assert_eq!(decision, "deny", "{}", hooked.body);
    assert!(reason.contains("gates.caller-"), "{reason}");
    let within = gateway
        .post(
            "/v1/hooks/claude-code",
            Some(AGENT),
            Some(hook_input("dontAsk", Some("a1"), design_read)),
        )
        .await;
    assert_eq!(
        within.body,
        json!({}),
        "no opinion on a claim within bounds"
    );

    // MCP, unattested: the configured facts are the caller's own, so a read runs.
    let mut client = McpClient::new(&gateway, Some(AGENT));
    assert_eq!(client.initialize(json!({})).await.status, 200);
    let (result, _) = client
        .call_with_meta(
            "ClaudeDesign",
            json!({"operation": "get_project", "arguments": {"project_id": "p1"}}),
            None,
        )
        .await;
    assert_ne!(result["isError"], json!(true), "{result}");
}

/// P1 on the hook endpoint: a hook input stating bypassPermissions from a caller without bypass
/// is denied (the hook door only tightens, and the claim is beyond the caller).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p1_a_bypass_claim_through_the_hook_endpoint_is_denied() {
    let gateway = Gateway::start().await;
    let write = json!({"operation": "get_project", "arguments": {"project_id": "p1"}});
    let reply = gateway
        .post(
            "/v1/hooks/claude-code",
            Some(AGENT),
            Some(hook_input("bypassPermissions", None, write)),
        )
        .await;
    let (decision, reason) = hook_decision(&reply.body);
    assert_eq!(decision, "deny", "{}", reply.body);
    assert!(
        reason.contains("gates.caller-bypass-not-allowed"),
        "{reason}"
    );
    assert_eq!(gateway.stats().await["requests"], 0);
}
