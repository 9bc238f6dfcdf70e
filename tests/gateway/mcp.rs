//! The MCP front door over real HTTP (issue 10 §1): bearer auth on `/mcp`, the tools the
//! policies leave open, and `tools/call` through the gateway pipeline — allow, deny, bad
//! input, and an ask held until an approver decides (with progress and the URL elicitation)
//! or until the call stops waiting, which withdraws the approval.

use std::time::Duration;

use askgate::server::mcp::RawMcp;
use serde_json::{json, Value};

use super::harness::{text_of, write_args, Gateway, AGENT, APPROVER};
use super::mcp_client::{McpClient, McpReply};

async fn connected<'a>(gateway: &'a Gateway, capabilities: Value) -> McpClient<'a> {
    let mut client = McpClient::new(gateway, Some(AGENT));
    let reply = client.initialize(capabilities).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        client.session.is_some(),
        "initialize gives a session: {reply:?}"
    );
    client
}

pub(super) fn quick_holds(raw: &mut askgate::server::config::RawConfig, wait: u64) {
    raw.mcp = Some(RawMcp {
        approval_wait_seconds: Some(wait),
        progress_seconds: Some(1),
        ..RawMcp::default()
    });
}

/// The pending approval the held call created, polled through the approvals API.
pub(super) async fn pending_approval(gateway: &Gateway) -> Value {
    for _ in 0..100 {
        let reply = gateway.get("/v1/approvals", Some(APPROVER)).await;
        if let Some(first) = reply.body["approvals"].as_array().and_then(|a| a.first()) {
            return first.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no pending approval appeared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_without_a_known_token_is_401_with_a_bearer_challenge() {
    let gateway = Gateway::start().await;
    for token in [None, Some("not-a-configured-token")] {
        let mut client = McpClient::new(&gateway, token);
        let reply = client.initialize(json!({})).await;
        assert_eq!(reply.status, 401, "{reply:?}");
        let challenge = reply.www_authenticate.unwrap_or_default();
        assert!(challenge.starts_with("Bearer "), "{challenge}");
        assert!(
            !reply.text.contains("not-a-configured-token"),
            "{}",
            reply.text
        );
    }
}

/// Claude Code answers a 401 by trying OAuth and prints the registration endpoint's answer
/// (`claude mcp list`: "Dynamic Client Registration rejected (HTTP 404):" and nothing else,
/// before): askgate's answer names the fix (issue 19 §5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_trying_oauth_registration_is_told_to_send_an_agent_token() {
    let gateway = Gateway::start().await;
    let reply = gateway
        .post(
            "/register",
            None,
            Some(json!({"client_name": "claude-code"})),
        )
        .await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert_eq!(reply.body["error"], "invalid_client_metadata");
    let description = reply.body["error_description"].as_str().unwrap_or("");
    assert!(
        description.contains("needs an agent token"),
        "{description}"
    );
    assert!(
        description.contains("Authorization: Bearer"),
        "{description}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_refuses_an_approver_token() {
    let gateway = Gateway::start().await;
    let mut client = McpClient::new(&gateway, Some(APPROVER));
    let reply = client.initialize(json!({})).await;
    assert_eq!(reply.status, 403, "{reply:?}");
    assert!(reply.text.contains("approver token"), "{}", reply.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_lists_both_tools_with_the_reference_shapes() {
    let gateway = Gateway::start().await;
    let mut client = connected(&gateway, json!({})).await;
    let reply = client.request("tools/list", json!({})).await;
    let tools = reply.response(2)["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["ClaudeDesign", "Projects"]);
    let design = &tools[0]["inputSchema"];
    assert_eq!(design["required"], json!(["operation"]));
    let operations = design["properties"]["operation"]["enum"]
        .as_array()
        .unwrap();
    assert!(operations.contains(&json!("write_files")), "{design}");
    assert!(tools[1]["inputSchema"]["properties"]["method"]["enum"]
        .as_array()
        .unwrap()
        .contains(&json!("project_delete")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_lists_no_projects_tool_without_an_attached_project() {
    let gateway = Gateway::start_with(|raw| {
        raw.environment = Some(askgate::facts::Environment {
            attached_project: Some(String::new()),
            ..Default::default()
        });
    })
    .await;
    let mut client = connected(&gateway, json!({})).await;
    assert_eq!(client.tool_names().await, ["ClaudeDesign"]);
    let (result, _) = client
        .call("Projects", json!({"method": "project_info"}))
        .await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("gates.projects-not-attached"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_lists_no_design_tool_when_the_design_flag_is_off() {
    let gateway = Gateway::start_with(|raw| {
        raw.environment = Some(askgate::facts::Environment {
            feature_flags: [("tengu_omelette_fouet".to_string(), false)].into(),
            ..Default::default()
        });
    })
    .await;
    let mut client = connected(&gateway, json!({})).await;
    assert_eq!(client.tool_names().await, ["Projects"]);
    let list = json!({"operation": "list_projects", "arguments": {}});
    let (result, _) = client.call("ClaudeDesign", list).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("gates.design-feature-off"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_bad_input_is_a_tool_error_naming_the_field() {
    let gateway = Gateway::start().await;
    let mut client = connected(&gateway, json!({})).await;
    let (result, _) = client
        .call(
            "ClaudeDesign",
            json!({"operation": "read_file", "arguments": {"project_id": "p1", "bogus": 1}}),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(&result);
    assert!(text.contains("invalid input `arguments"), "{text}");
    assert!(text.contains("bogus"), "{text}");
    let (result, _) = client.call("Bash", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(text_of(&result).contains("`name`"), "{result}");
    assert_eq!(gateway.stats().await["tools_call"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_read_returns_the_upstream_result_as_content() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let mut client = connected(&gateway, json!({})).await;
    let (result, _) = client
        .call(
            "ClaudeDesign",
            json!({"operation": "list_projects", "arguments": {}}),
        )
        .await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(text_of(&result).contains("Q3 deck"), "{result}");
    assert_eq!(gateway.tool_calls("list_projects").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_deny_names_the_reason_the_policies_and_the_decision() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let mut client = connected(&gateway, json!({})).await;
    let (result, _) = client
        .call(
            "ClaudeDesign",
            json!({"operation": "write_files", "arguments": write_args("p1", &["CLAUDE.md"])}),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(&result);
    assert!(text.contains("askgate denied this call"), "{text}");
    let denied = &result["structuredContent"];
    assert!(
        !denied["policies"].as_array().unwrap().is_empty(),
        "{result}"
    );
    let id = denied["decision_id"].as_str().unwrap();
    assert!(text.contains(id), "{text}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
}

/// A tokenless write asks for the project grant; the call is held while the test approves.
async fn held_write(
    gateway: &Gateway,
    client: &mut McpClient<'_>,
    meta: Value,
) -> (Value, McpReply) {
    gateway.record_consent().await;
    client
        .call_with_meta(
            "ClaudeDesign",
            json!({"operation": "write_files", "arguments": write_args("p1", &["held.html"])}),
            Some(meta),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_ask_is_held_with_progress_until_approved_then_returns_the_result() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    let mut client = connected(&gateway, json!({})).await;
    let approve = async {
        let approval = pending_approval(&gateway).await;
        assert_eq!(gateway.tool_calls("write_files").await, 0, "held, not run");
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let id = approval["id"].as_str().unwrap().to_string();
        let approved = gateway.approve(&id).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
    };
    let ((result, reply), ()) = tokio::join!(
        held_write(&gateway, &mut client, json!({"progressToken": "p-1"})),
        approve
    );
    assert_eq!(result["isError"], false, "{result}");
    let progress: Vec<&Value> = reply
        .messages
        .iter()
        .filter(|message| message["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "{reply:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "p-1");
    let said = progress[0]["params"]["message"].as_str().unwrap_or("");
    assert!(said.contains("/console/approvals/ap_"), "{said}");
    assert!(
        text_of(&result).contains("/console/approvals/ap_"),
        "{result}"
    );
    assert_eq!(gateway.stats().await["grant_posts"], 1);
    assert_eq!(
        gateway.read_file("p1", "held.html").await.as_deref(),
        Some("<p>held.html</p>")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_refused_approval_is_a_tool_error_saying_so() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    let mut client = connected(&gateway, json!({})).await;
    let refuse = async {
        let approval = pending_approval(&gateway).await;
        // The card promises the time the call really waits (30 s, and the 2 s after it in
        // which the call withdraws it: A12), not the approval TTL.
        let created = time::OffsetDateTime::parse(
            approval["created_at"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        let expires = time::OffsetDateTime::parse(
            approval["expires_at"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        assert_eq!((expires - created).whole_seconds(), 32, "{approval}");
        let id = approval["id"].as_str().unwrap();
        let refused = gateway
            .post(
                &format!("/v1/approvals/{id}/refuse"),
                Some(APPROVER),
                Some(json!({"note": "use staging/ instead"})),
            )
            .await;
        assert_eq!(refused.status, 200, "{}", refused.body);
    };
    let ((result, _), ()) = tokio::join!(held_write(&gateway, &mut client, json!({})), refuse);
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(&result);
    assert!(text.contains("an approver refused it"), "{result}");
    // The model reads who refused and why, and where the approval is.
    assert!(text.contains("use staging/ instead"), "{result}");
    assert!(text.contains("/console/approvals/ap_"), "{result}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
}

/// Once the held call stops waiting nobody would receive its result, so the approval is
/// withdrawn: an approver who comes later is told so (and by what) and the call never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_hold_that_ends_withdraws_the_approval_and_a_late_approver_cannot_run_it() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        quick_holds(raw, 1);
        raw.log_dir = Some(log_dir);
    })
    .await;
    let mut client = connected(&gateway, json!({})).await;
    let (result, _) = held_write(&gateway, &mut client, json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("askgate withdrew the approval"),
        "{result}"
    );
    assert_eq!(
        result["structuredContent"]["status"], "withdrawn",
        "{result}"
    );
    let id = result["structuredContent"]["approval_id"].as_str().unwrap();
    let why = "it waited 1 s (`mcp.approval_wait_seconds`) and gave up";
    assert_withdrawn_and_never_run(&gateway, id, why).await;
    assert_eq!(withdrawals_logged(log.path()), [id.to_string()]);
}

/// An approver who comes after the withdrawal: refused by name, the approval shows what
/// withdrew it, it is no longer pending, and the sandbox never sees the write.
async fn assert_withdrawn_and_never_run(gateway: &Gateway, id: &str, why: &str) {
    let late = gateway.approve(id).await;
    assert_eq!(late.status, 409, "{}", late.body);
    let message = late.body.to_string();
    assert!(message.contains("is already withdrawn"), "{message}");
    assert!(message.contains(why), "{message}");
    let shown = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(shown.body["status"], "withdrawn", "{}", shown.body);
    assert_eq!(shown.body["result"]["error"], "withdrawn", "{}", shown.body);
    let text = text_of(&shown.body["result"]);
    assert!(text.starts_with("withdrawn by askgate"), "{text}");
    assert!(text.contains(why), "{text}");
    let pending = gateway.get("/v1/approvals", Some(APPROVER)).await;
    assert_eq!(pending.body["approvals"], json!([]), "{}", pending.body);
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    assert_eq!(gateway.stats().await["grant_posts"], 0);
}

/// The approval ids of the `withdrawn` records in the decision log.
fn withdrawals_logged(dir: &std::path::Path) -> Vec<String> {
    super::hook_log::records(dir)
        .into_iter()
        .filter(|record| record["kind"] == "approval" && record["action"] == "withdrawn")
        .map(|record| {
            assert_eq!(record["by"], "askgate", "{record}");
            record["approval_id"].as_str().unwrap().to_string()
        })
        .collect()
}

/// A 2026-07-28 client (no session) that gives up on its held call: the request is dropped
/// mid-hold, askgate sees the client go and withdraws the approval at once, long before the
/// configured wait would have ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_client_that_goes_away_mid_hold_withdraws_its_approval() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        quick_holds(raw, 60);
        raw.log_dir = Some(log_dir);
    })
    .await;
    gateway.record_consent().await;
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "ClaudeDesign",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "askgate-tests", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}},
        "arguments": {"operation": "write_files", "arguments": write_args("p1", &["held.html"])}}});
    let request = gateway
        .http
        .post(format!("{}/mcp", gateway.url))
        .bearer_auth(AGENT)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ClaudeDesign")
        .body(call.to_string())
        .send();
    let gave_up = async {
        let approval = pending_approval(&gateway).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        approval
    };
    let approval = tokio::select! {
        answered = request => panic!("the held call answered early: {answered:?}"),
        approval = gave_up => approval,
    };
    let id = approval["id"].as_str().unwrap();
    let mut status = Value::Null;
    for _ in 0..100 {
        let shown = gateway
            .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
            .await;
        status = shown.body["status"].clone();
        if status != "pending" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, "withdrawn");
    let why = "its MCP client cancelled the call or went away";
    assert_withdrawn_and_never_run(&gateway, id, why).await;
    assert_eq!(withdrawals_logged(log.path()), [id.to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_url_elicitation_points_at_the_approval_and_form_mode_is_never_used() {
    for (capabilities, expect_url) in [
        (json!({"elicitation": {"url": {}, "form": {}}}), true),
        (json!({"elicitation": {"form": {}}}), false),
    ] {
        let gateway = Gateway::start_with(|raw| quick_holds(raw, 1)).await;
        let mut client = connected(&gateway, capabilities).await;
        let (result, reply) = held_write(&gateway, &mut client, json!({})).await;
        assert_eq!(result["isError"], true, "{result}");
        let approval = result["structuredContent"]["approval_id"].as_str().unwrap();
        let elicitations: Vec<&Value> = reply
            .messages
            .iter()
            .filter(|message| message["method"] == "elicitation/create")
            .collect();
        assert_eq!(elicitations.len(), usize::from(expect_url), "{reply:?}");
        for elicitation in elicitations {
            assert_eq!(elicitation["params"]["mode"], "url", "{elicitation}");
            let url = elicitation["params"]["url"].as_str().unwrap();
            assert!(
                url.ends_with(&format!("/console/approvals/{approval}")),
                "{url}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_session_facts_come_from_the_callers_configuration() {
    let gateway = Gateway::start_with(|raw| {
        raw.callers = Some(vec![
            serde_json::from_value(
                json!({"token": "headless-agent-token-0001-abcdefghij", "role": "agent",
                "principal": "ci-bot", "session": {"interactive": false}}),
            )
            .unwrap(),
            serde_json::from_value(json!({"token": APPROVER, "role": "approver",
                "principal": "lead"}))
            .unwrap(),
        ]);
    })
    .await;
    gateway.record_consent().await;
    let mut client = McpClient::new(&gateway, Some("headless-agent-token-0001-abcdefghij"));
    assert_eq!(client.initialize(json!({})).await.status, 200);
    let (result, _) = client
        .call(
            "ClaudeDesign",
            json!({"operation": "write_files", "arguments": write_args("p1", &["a.html"])}),
        )
        .await;
    assert_eq!(result["isError"], true, "{result}");
    let policies = &result["structuredContent"]["policies"];
    assert!(
        policies
            .as_array()
            .unwrap()
            .contains(&json!("grants.non-interactive-denied")),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_holds_at_most_max_held_calls_and_answers_the_next_with_an_error() {
    let gateway = Gateway::start_with(|raw| {
        raw.mcp = Some(RawMcp {
            approval_wait_seconds: Some(3),
            max_held: Some(1),
            ..RawMcp::default()
        });
    })
    .await;
    let mut first = connected(&gateway, json!({})).await;
    let mut second = connected(&gateway, json!({})).await;
    let later = async {
        pending_approval(&gateway).await;
        second
            .call(
                "ClaudeDesign",
                json!({"operation": "write_files", "arguments": write_args("p1", &["b.html"])}),
            )
            .await
    };
    let ((held, _), (refused, _)) =
        tokio::join!(held_write(&gateway, &mut first, json!({})), later);
    assert!(
        text_of(&held).contains("askgate withdrew the approval"),
        "{held}"
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("too many calls"), "{refused}");
    // Nobody receives the unheld call's result, so its approval is withdrawn too.
    assert!(text_of(&refused).contains("is withdrawn"), "{refused}");
}

/// A `finalize_plan` approved in one MCP session mints a plan for that session only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_plans_are_kept_per_mcp_session() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 2)).await;
    gateway.record_consent().await;
    let mut planner = connected(&gateway, json!({})).await;
    let mut other = connected(&gateway, json!({})).await;
    let plan = json!({"operation": "finalize_plan",
        "arguments": {"project_id": "p1", "writes": ["site/a.html"], "scope": "paths"}});
    let approve = async {
        let approval = pending_approval(&gateway).await;
        assert_eq!(approval["card"]["kind"], "plan", "{approval}");
        gateway.approve(approval["id"].as_str().unwrap()).await;
    };
    let ((planned, _), ()) = tokio::join!(planner.call("ClaudeDesign", plan), approve);
    assert_eq!(planned["isError"], false, "{planned}");
    let token: Value =
        serde_json::from_str(planned["content"][0]["text"].as_str().unwrap()).unwrap();
    // The held call's result names the approval it ran under and where it was decided.
    assert!(
        text_of(&planned).contains("/console/approvals/ap_"),
        "{planned}"
    );
    let token = token["plan_token"].as_str().unwrap().to_string();
    let write = json!({"operation": "write_files", "arguments":
        super::harness::covered_write_args("p1", &token, &["site/a.html"])});
    let (elsewhere, _) = other.call("ClaudeDesign", write.clone()).await;
    assert_eq!(elsewhere["isError"], true, "{elsewhere}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    let (covered, _) = planner.call("ClaudeDesign", write).await;
    assert_eq!(covered["isError"], false, "{covered}");
    assert_eq!(gateway.tool_calls("write_files").await, 1);
}

/// A 2026-07-28 client that declared URL elicitation is told where to approve: the ask answers
/// `input_required` with a URL elicitation for the approval's console page and a sealed
/// `requestState`; the retry (whatever the elicitation's answer) is held until the approver
/// decides. A state opens once, for its caller and its call only (issue 19 §2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_stateless_ask_answers_input_required_with_the_approval_link_and_the_retry_is_held() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    gateway.record_consent().await;
    let mut client = McpClient::stateless(&gateway, Some(AGENT));
    client.capabilities = json!({"elicitation": {"url": {}}});
    let arguments =
        json!({"operation": "write_files", "arguments": write_args("p1", &["mrtr.html"])});
    let first = client
        .request(
            "tools/call",
            json!({"name": "ClaudeDesign", "arguments": arguments}),
        )
        .await;
    let result = first.response(1)["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{first:?}");
    let elicitation = &result["inputRequests"]["askgate_approval"];
    assert_eq!(elicitation["method"], "elicitation/create", "{result}");
    assert_eq!(elicitation["params"]["mode"], "url", "{result}");
    let url = elicitation["params"]["url"].as_str().unwrap().to_string();
    let approval = pending_approval(&gateway).await;
    let id = approval["id"].as_str().unwrap().to_string();
    assert!(url.ends_with(&format!("/console/approvals/{id}")), "{url}");
    let state = result["requestState"].as_str().unwrap().to_string();
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    // Another call (other arguments) cannot redeem it.
    let other = json!({"operation": "write_files", "arguments": write_args("p1", &["other.html"])});
    let (forged, _) = client
        .call_with_params(json!({"name": "ClaudeDesign", "arguments": other,
            "requestState": state, "inputResponses": {"askgate_approval": {"action": "accept"}}}))
        .await;
    assert!(text_of(&forged).contains("does not verify"), "{forged}");
    // The real retry, answered `cancel` as headless Claude Code does: held until approved.
    let retry = json!({"name": "ClaudeDesign", "arguments": arguments, "requestState": state,
        "inputResponses": {"askgate_approval": {"action": "cancel"}}});
    let approve = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        assert_eq!(gateway.tool_calls("write_files").await, 0, "held, not run");
        assert_eq!(gateway.approve(&id).await.status, 200);
    };
    let ((held, _), ()) = tokio::join!(client.call_with_params(retry.clone()), approve);
    assert_eq!(held["isError"], false, "{held}");
    assert!(text_of(&held).contains(&url), "{held}");
    assert_eq!(gateway.stats().await["grant_posts"], 1);
    // Redeemed once.
    let (again, _) = client.call_with_params(retry).await;
    assert!(text_of(&again).contains("already used"), "{again}");
}

/// A 2026-07-28 client (URL elicitation declared) whose `ClaudeDesign` call with `arguments`
/// asks: the client, the sealed `requestState` and the pending approval's id.
async fn asked_with_a_link<'a>(
    gateway: &'a Gateway,
    arguments: &Value,
) -> (McpClient<'a>, String, String) {
    let mut client = McpClient::stateless(gateway, Some(AGENT));
    client.capabilities = json!({"elicitation": {"url": {}}});
    let first = client
        .request(
            "tools/call",
            json!({"name": "ClaudeDesign", "arguments": arguments}),
        )
        .await;
    let result = first.response(1)["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{first:?}");
    let state = result["requestState"].as_str().unwrap().to_string();
    let id = pending_approval(gateway).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    (client, state, id)
}

/// Concern 6 of findings/trust-2026-12-04.md: the `requestState` digest is over the call in a
/// canonical form, so a retry whose arguments carry the same keys in another order (a client or
/// proxy that rebuilt the object) is held and answered, not refused as `does not verify`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concern_6_a_retry_with_its_arguments_in_another_key_order_is_held() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    gateway.record_consent().await;
    let inner = write_args("p1", &["order.html"]);
    let arguments = json!({"operation": "write_files", "arguments": inner.clone()});
    let (mut client, state, id) = asked_with_a_link(&gateway, &arguments).await;
    // The same call, every object's keys reversed.
    let reversed_inner: serde_json::Map<String, Value> = inner
        .as_object()
        .unwrap()
        .iter()
        .rev()
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let reordered = json!({"arguments": reversed_inner, "operation": "write_files"});
    assert_ne!(
        serde_json::to_string(&reordered).unwrap(),
        serde_json::to_string(&arguments).unwrap()
    );
    let retry = json!({"name": "ClaudeDesign", "arguments": reordered, "requestState": state,
        "inputResponses": {"askgate_approval": {"action": "accept"}}});
    let approve = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(gateway.approve(&id).await.status, 200);
    };
    let ((held, _), ()) = tokio::join!(client.call_with_params(retry), approve);
    assert!(!text_of(&held).contains("does not verify"), "{held}");
    assert_eq!(held["isError"], false, "{held}");
    assert!(text_of(&held).contains("order.html"), "{held}");
    assert_eq!(gateway.stats().await["grant_posts"], 1);
}

/// The retry of a 2026-07-28 ask that comes while the approved call is still running (a slow
/// upstream, or a loaded machine) is held until the run ends and answers its result. Found by
/// the real-client tests under load: the retry answered "it did not run" while the approved
/// call ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_stateless_retry_while_the_approved_call_runs_waits_for_its_result() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    gateway.record_consent().await;
    let arguments =
        json!({"operation": "write_files", "arguments": write_args("p1", &["slow.html"])});
    let (mut client, state, id) = asked_with_a_link(&gateway, &arguments).await;
    // The approved write takes 1.5 s upstream; the retry comes while it runs.
    gateway
        .fault(json!({"fault": "delay", "ms": 1500, "tool": "write_files"}))
        .await;
    // Approved before the client is back: answered at once, nothing runs until the retry.
    let approve = async {
        let approved = gateway.approve(&id).await;
        assert_eq!(approved.status, 202, "{}", approved.body);
        assert_eq!(approved.body["client"], "not_yet", "{}", approved.body);
    };
    let retry = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let running = gateway
            .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
            .await;
        assert_eq!(running.body["status"], "running", "{}", running.body);
        assert_eq!(
            gateway.tool_calls("write_files").await,
            0,
            "not run before the retry"
        );
        client
            .call_with_params(json!({"name": "ClaudeDesign", "arguments": arguments,
                "requestState": state, "inputResponses": {"askgate_approval": {"action": "cancel"}}}))
            .await
    };
    let ((), (held, _)) = tokio::join!(approve, retry);
    assert_eq!(held["isError"], false, "{held}");
    assert!(text_of(&held).contains("ran once"), "{held}");
    // Ran once: the tokenless write's first answer is `needs_project_grant`, the grant is POSTed
    // (once) and the write sent again (client-facts §5), as without the delay.
    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 1, "{stats}");
    assert_eq!(stats["tools_call"]["write_files"], 2, "{stats}");
}
