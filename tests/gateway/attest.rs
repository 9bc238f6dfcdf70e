//! Hook-attested MCP calls over real HTTP (issue 19 §3): the client's `PreToolUse` input for
//! `mcp__askgate__ClaudeDesign` is posted to the hook endpoint, then the `tools/call` carrying
//! the same `_meta["claudecode/toolUseId"]` is decided with the attested agent, permission mode
//! and session; an attestation is used once and only by its own principal, and
//! `mcp.require_attestation` denies a call without one.

use std::time::Duration;

use askgate::server::mcp::RawMcp;
use serde_json::{json, Value};

use super::harness::{covered_write_args, text_of, write_args, Gateway, AGENT, APPROVER};
use super::hook_log::logged;
use super::mcp_client::McpClient;

const OTHER_AGENT: &str = "second-agent-token-0001-abcdefghijkl";

/// What Claude Code's hook posts for an MCP tool before it sends the `tools/call`.
/// The hook's input for the MCP call of `tool_input` (what the client shows the hook is the
/// call's arguments, which the attestation is bound to).
fn hook_input(
    tool_use_id: &str,
    session: &str,
    mode: &str,
    agent_id: Option<&str>,
    tool_input: &Value,
) -> Value {
    let mut input = json!({
        "session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": mode, "hook_event_name": "PreToolUse",
        "tool_name": "mcp__askgate__ClaudeDesign", "tool_input": tool_input,
        "tool_use_id": tool_use_id
    });
    if let Some(agent_id) = agent_id {
        input["agent_id"] = json!(agent_id);
        input["agent_type"] = json!("general-purpose");
    }
    input
}

/// Posts the hook input as `token`; askgate has no opinion on its own MCP tools.
async fn attest(gateway: &Gateway, token: &str, input: Value) {
    let reply = gateway
        .post("/v1/hooks/claude-code", Some(token), Some(input))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body, json!({}), "no opinion on an MCP tool");
}

fn meta(tool_use_id: &str) -> Option<Value> {
    Some(json!({"claudecode/toolUseId": tool_use_id}))
}

fn write(paths: &[&str]) -> Value {
    json!({"operation": "write_files", "arguments": write_args("p1", paths)})
}

fn policies(result: &Value) -> Vec<String> {
    serde_json::from_value(result["structuredContent"]["policies"].clone()).unwrap_or_default()
}

fn two_agents(raw: &mut askgate::server::config::RawConfig) {
    raw.callers = Some(vec![
        serde_json::from_value(json!({"token": AGENT, "role": "agent", "principal": "agent"}))
            .unwrap(),
        serde_json::from_value(
            json!({"token": OTHER_AGENT, "role": "agent", "principal": "other-agent"}),
        )
        .unwrap(),
        serde_json::from_value(json!({"token": APPROVER, "role": "approver",
            "principal": "lead"}))
        .unwrap(),
    ]);
}

fn mcp(raw: &mut askgate::server::config::RawConfig, wait: u64, require: bool) {
    raw.mcp = Some(RawMcp {
        approval_wait_seconds: Some(wait),
        progress_seconds: Some(1),
        require_attestation: Some(require),
        ..RawMcp::default()
    });
}

async fn connected<'a>(gateway: &'a Gateway, token: &'a str) -> McpClient<'a> {
    let mut client = McpClient::new(gateway, Some(token));
    assert_eq!(client.initialize(json!({})).await.status, 200);
    client
}

/// The one pending approval, polled through the approvals API.
async fn pending_approval(gateway: &Gateway) -> Option<Value> {
    for _ in 0..200 {
        let reply = gateway.get("/v1/approvals", Some(APPROVER)).await;
        if let Some(first) = reply.body["approvals"].as_array().and_then(|a| a.first()) {
            return Some(first.clone());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// An MCP write that asks: the card kind its approval shows; the approval is then refused.
async fn asked_card_kind(
    gateway: &Gateway,
    client: &mut McpClient<'_>,
    write: Value,
    id: Option<&str>,
) -> String {
    let refuse = async {
        let approval = pending_approval(gateway).await?;
        gateway.refuse(approval["id"].as_str().unwrap()).await;
        Some(approval["card"]["kind"].as_str().unwrap_or("").to_string())
    };
    let ((result, _), kind) = tokio::join!(
        client.call_with_meta("ClaudeDesign", write, id.and_then(meta)),
        refuse
    );
    assert_eq!(result["isError"], true, "refused: {result}");
    kind.unwrap_or_else(|| panic!("the write did not ask: {result}"))
}

/// Unattested, the caller's configured facts (the main agent) apply and a tokenless write
/// offers a durable grant; attested as a subagent's, the same write is refused (a subagent
/// never mints a grant) and a write with a plan token asks for this batch only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attested_subagent_write_asks_per_batch_instead_of_minting_a_grant() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        mcp(raw, 30, false);
        raw.log_dir = Some(log_dir);
    })
    .await;
    gateway.record_consent().await;
    let mut client = connected(&gateway, AGENT).await;
    let kind = asked_card_kind(&gateway, &mut client, write(&["a.html"]), None).await;
    assert_eq!(kind, "grant");
    let sub = |id, input: &Value| hook_input(id, "cc-1", "default", Some("agent-7"), input);
    attest(&gateway, AGENT, sub("toolu_sub_1", &write(&["a.html"]))).await;
    let (tokenless, _) = client
        .call_with_meta("ClaudeDesign", write(&["a.html"]), meta("toolu_sub_1"))
        .await;
    assert_eq!(tokenless["isError"], true, "{tokenless}");
    assert!(
        policies(&tokenless).contains(&"grants.subagent-or-hook-denied".to_string()),
        "{tokenless}"
    );
    let planned = json!({"operation": "write_files",
        "arguments": covered_write_args("p1", "no-such-plan", &["a.html"])});
    attest(&gateway, AGENT, sub("toolu_sub_2", &planned)).await;
    let kind = asked_card_kind(&gateway, &mut client, planned, Some("toolu_sub_2")).await;
    assert_eq!(kind, "batch", "a subagent's ask is for this call only");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    let records = logged(log.path());
    let sessions: Vec<&Value> = records
        .iter()
        .filter(|record| record["operation"] == "write_files")
        .map(|record| &record["facts"]["context"]["session"])
        .collect();
    assert_eq!(sessions.len(), 3, "{records:?}");
    assert_eq!(sessions[0]["attestation"], "unattested", "{}", sessions[0]);
    for attested in &sessions[1..] {
        assert_eq!(attested["attestation"], "attested", "{attested}");
        assert_eq!(attested["agent"], "subagent");
        assert_eq!(attested["agent_id"], "agent-7");
        assert_eq!(attested["may_record"], false);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attested_permission_mode_reaches_the_decision() {
    let gateway = Gateway::start_with(|raw| mcp(raw, 30, false)).await;
    gateway.record_consent().await;
    let mut client = connected(&gateway, AGENT).await;
    for (id, mode, policy) in [
        ("toolu_dont_ask", "dontAsk", "modes.dont-ask"),
        ("toolu_plan", "plan", "grants.plan-mode-denied"),
    ] {
        attest(
            &gateway,
            AGENT,
            hook_input(id, "cc-1", mode, None, &write(&["a.html"])),
        )
        .await;
        let (result, _) = client
            .call_with_meta("ClaudeDesign", write(&["a.html"]), meta(id))
            .await;
        assert_eq!(result["isError"], true, "{mode}: {result}");
        assert!(
            policies(&result).iter().any(|p| p == policy),
            "{mode}: {result}"
        );
    }
    assert_eq!(gateway.tool_calls("write_files").await, 0);
}

/// A hook input claiming bypassPermissions is posted with the agent token, which whatever runs
/// in the client's environment can read (the agents-real finding): bypass counts only for a
/// caller whose configuration makes it available; otherwise the gate refuses, naming the setting,
/// and nothing is sent upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attested_bypass_counts_only_where_the_callers_configuration_makes_it_available() {
    for (available, refused) in [(false, true), (true, false)] {
        let gateway = Gateway::start_with(|raw| {
            mcp(raw, 30, false);
            raw.callers = Some(vec![
                serde_json::from_value(json!({"token": AGENT, "role": "agent",
                    "principal": "agent", "session": {"bypass_available": available}}))
                .unwrap(),
                serde_json::from_value(json!({"token": APPROVER, "role": "approver",
                    "principal": "lead"}))
                .unwrap(),
            ]);
        })
        .await;
        gateway.record_consent().await;
        let mut client = connected(&gateway, AGENT).await;
        let id = "toolu_bypass";
        // A read: allowed in any mode, so only the gate can refuse it.
        let read = json!({"operation": "list_projects", "arguments": {}});
        attest(
            &gateway,
            AGENT,
            hook_input(id, "cc-1", "bypassPermissions", None, &read),
        )
        .await;
        let (result, _) = client
            .call_with_meta("ClaudeDesign", read.clone(), meta(id))
            .await;
        let gate = "gates.caller-bypass-not-allowed".to_string();
        if refused {
            assert_eq!(result["isError"], true, "{result}");
            assert!(policies(&result).contains(&gate), "{result}");
            assert!(
                text_of(&result).contains("callers[].session.bypass_available"),
                "{result}"
            );
            assert_eq!(gateway.tool_calls("list_projects").await, 0);
        } else {
            assert_eq!(result["isError"], false, "bypass, made available: {result}");
            assert!(!policies(&result).contains(&gate), "{result}");
            assert_eq!(gateway.tool_calls("list_projects").await, 1);
        }
    }
}

/// One token, one MCP connection, two client sessions: a plan approved in one is not the
/// other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_attested_client_sessions_on_one_token_keep_separate_plans() {
    let gateway = Gateway::start_with(|raw| mcp(raw, 1, false)).await;
    gateway.record_consent().await;
    let mut client = connected(&gateway, AGENT).await;
    let plan = json!({"operation": "finalize_plan",
        "arguments": {"project_id": "p1", "writes": ["site/a.html"], "scope": "paths"}});
    attest(
        &gateway,
        AGENT,
        hook_input("toolu_plan_a", "cc-A", "default", None, &plan),
    )
    .await;
    let approve = async {
        let approval = pending_approval(&gateway).await.unwrap();
        assert_eq!(approval["card"]["kind"], "plan", "{approval}");
        gateway.approve(approval["id"].as_str().unwrap()).await;
    };
    let ((planned, _), ()) = tokio::join!(
        client.call_with_meta("ClaudeDesign", plan, meta("toolu_plan_a")),
        approve
    );
    assert_eq!(planned["isError"], false, "{planned}");
    let token: Value =
        serde_json::from_str(planned["content"][0]["text"].as_str().unwrap()).unwrap();
    let token = token["plan_token"].as_str().unwrap().to_string();
    let covered = json!({"operation": "write_files",
        "arguments": covered_write_args("p1", &token, &["site/a.html"])});
    attest(
        &gateway,
        AGENT,
        hook_input("toolu_b", "cc-B", "default", None, &covered),
    )
    .await;
    let (elsewhere, _) = client
        .call_with_meta("ClaudeDesign", covered.clone(), meta("toolu_b"))
        .await;
    assert_eq!(elsewhere["isError"], true, "{elsewhere}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    // Unattested on the same MCP session: the plan is not the MCP session's either.
    let (unattested, _) = client.call("ClaudeDesign", covered.clone()).await;
    assert_eq!(unattested["isError"], true, "{unattested}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    attest(
        &gateway,
        AGENT,
        hook_input("toolu_a2", "cc-A", "default", None, &covered),
    )
    .await;
    let (in_a, _) = client
        .call_with_meta("ClaudeDesign", covered, meta("toolu_a2"))
        .await;
    assert_eq!(in_a["isError"], false, "{in_a}");
    assert_eq!(gateway.tool_calls("write_files").await, 1);
}

/// With `require_attestation`, a call with no attestation is denied naming the setting, and one
/// whose tool use only another token's hook attested says that (A15).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a15_require_attestation_denies_a_call_without_one_naming_what_is_missing() {
    let gateway = Gateway::start_with(|raw| {
        two_agents(raw);
        mcp(raw, 30, true);
    })
    .await;
    gateway.record_consent().await;
    let list = json!({"operation": "list_projects", "arguments": {}});
    let mut client = connected(&gateway, AGENT).await;
    // Another principal's attestation of the same tool use is not this caller's.
    attest(
        &gateway,
        OTHER_AGENT,
        hook_input("toolu_x", "cc-1", "default", None, &list),
    )
    .await;
    for (id, gate, says) in [
        (
            None,
            "gates.mcp-attestation-required",
            "install the PreToolUse hook",
        ),
        (
            Some("toolu_x"),
            "gates.mcp-attestation-from-another-token",
            "posted with another agent token",
        ),
    ] {
        let (result, _) = client
            .call_with_meta("ClaudeDesign", list.clone(), id.and_then(meta))
            .await;
        assert_eq!(result["isError"], true, "{id:?}: {result}");
        assert!(
            text_of(&result).contains("mcp.require_attestation"),
            "{result}"
        );
        assert!(text_of(&result).contains(says), "{result}");
        assert_eq!(policies(&result), vec![gate.to_string()], "{result}");
    }
    // The HTTP API states its own facts: the setting is about MCP calls only.
    let http = gateway
        .design(
            &super::harness::main_session("s1"),
            "list_projects",
            json!({}),
        )
        .await;
    assert_eq!(http.decision(), "allow", "{}", http.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attestation_is_used_once() {
    let gateway = Gateway::start_with(|raw| mcp(raw, 30, true)).await;
    gateway.record_consent().await;
    let list = json!({"operation": "list_projects", "arguments": {}});
    let mut client = connected(&gateway, AGENT).await;
    attest(
        &gateway,
        AGENT,
        hook_input("toolu_once", "cc-1", "default", None, &list),
    )
    .await;
    let (first, _) = client
        .call_with_meta("ClaudeDesign", list.clone(), meta("toolu_once"))
        .await;
    assert_eq!(first["isError"], false, "{first}");
    let (again, _) = client
        .call_with_meta("ClaudeDesign", list, meta("toolu_once"))
        .await;
    assert_eq!(again["isError"], true, "{again}");
    assert!(
        policies(&again).contains(&"gates.mcp-attestation-required".to_string()),
        "{again}"
    );
}

/// Concern 2: an attestation is bound to the tool, the server name and the input it was filed
/// for: one filed for `Projects`, for another MCP server or for other arguments does not attest
/// a `ClaudeDesign` call (with `require_attestation`, the gate names it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concern_2_an_attestation_counts_only_for_the_call_it_was_filed_for() {
    let gateway = Gateway::start_with(|raw| mcp(raw, 30, true)).await;
    gateway.record_consent().await;
    let list = json!({"operation": "list_projects", "arguments": {}});
    let mut client = connected(&gateway, AGENT).await;
    let mut projects = hook_input(
        "toolu_p",
        "cc-1",
        "default",
        None,
        &json!({"method": "project_info"}),
    );
    projects["tool_name"] = json!("mcp__askgate__Projects");
    let mut other_server = hook_input("toolu_s", "cc-1", "default", None, &list);
    other_server["tool_name"] = json!("mcp__other-server__ClaudeDesign");
    let other_input = hook_input(
        "toolu_i",
        "cc-1",
        "default",
        None,
        &json!({"operation": "list_projects", "arguments": {"limit": 5}}),
    );
    for (input, id) in [
        (projects, "toolu_p"),
        (other_server, "toolu_s"),
        (other_input, "toolu_i"),
    ] {
        attest(&gateway, AGENT, input).await;
        let (result, _) = client
            .call_with_meta("ClaudeDesign", list.clone(), meta(id))
            .await;
        assert_eq!(result["isError"], true, "{id}: {result}");
        assert_eq!(
            policies(&result),
            vec!["gates.mcp-attestation-mismatched".to_string()],
            "{id}: {result}"
        );
    }
    // The same arguments with their keys in another order are the same call.
    let reordered: Value =
        serde_json::from_str(r#"{"arguments": {}, "operation": "list_projects"}"#).unwrap();
    attest(
        &gateway,
        AGENT,
        hook_input("toolu_ok", "cc-1", "default", None, &reordered),
    )
    .await;
    let (ok, _) = client
        .call_with_meta("ClaudeDesign", list, meta("toolu_ok"))
        .await;
    assert_eq!(ok["isError"], false, "{ok}");
    assert_eq!(gateway.tool_calls("list_projects").await, 1);
}
