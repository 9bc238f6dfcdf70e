//! Boundaries between principals (issue 18 §2–§4, findings N2, N3, N4): state belongs to the
//! principal that made it, roles are exclusive, one agent cannot take every slot, and the MCP
//! front door accepts no browser origin unless listed. Two agents and an approver from a real
//! configuration, over real HTTP.

use serde_json::{json, Value};

use super::harness::{covered_write_args, main_session, text_of, write_args, Gateway, Reply};
use super::mcp_client::McpClient;

const AGENT_ONE: &str = "agent-one-secret-token-0123456789abcdef";
const AGENT_TWO: &str = "agent-two-secret-token-0123456789abcdef";
const ALICE: &str = "alice-approver-secret-token-0123456789ab";
const METRICS: &str = "metrics-scraper-secret-token-0123456789";

fn two_agents(raw: &mut askgate::server::config::RawConfig) {
    raw.callers = Some(
        serde_json::from_value(json!([
            {"token": AGENT_ONE, "role": "agent", "principal": "agent-one"},
            {"token": AGENT_TWO, "role": "agent", "principal": "agent-two"},
            {"token": ALICE, "role": "approver", "principal": "alice"}
        ]))
        .unwrap(),
    );
}

async fn design_as(
    gateway: &Gateway,
    token: &str,
    session: &Value,
    operation: &str,
    arguments: Value,
) -> Reply {
    let body =
        json!({"session": session, "input": {"operation": operation, "arguments": arguments}});
    gateway
        .post("/v1/design/call", Some(token), Some(body))
        .await
}

async fn consent(gateway: &Gateway) {
    let reply = gateway.post("/v1/design/consent", Some(ALICE), None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

/// agent-one asks for a plan over `writes` in p1 and alice approves it: the minted token.
async fn plan_of_agent_one(gateway: &Gateway, session: &Value, writes: &[&str]) -> String {
    let asked = design_as(
        gateway,
        AGENT_ONE,
        session,
        "finalize_plan",
        json!({"project_id": "p1", "writes": writes, "scope": "paths"}),
    )
    .await;
    let id = asked.approval_id();
    let approved = gateway
        .post(&format!("/v1/approvals/{id}/approve"), Some(ALICE), None)
        .await;
    assert_eq!(approved.body["status"], "completed", "{}", approved.body);
    let body: Value = serde_json::from_str(&text_of(&approved.body["result"])).unwrap();
    body["plan_token"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n2_a_plan_belongs_to_its_principal() {
    let gateway = Gateway::start_with(two_agents).await;
    consent(&gateway).await;
    let session = main_session("s-http");
    let token = plan_of_agent_one(&gateway, &session, &["site/a.html"]).await;
    let write = covered_write_args("p1", &token, &["site/a.html"]);
    // agent-two names agent-one's session id and plan token: another, empty session.
    let stolen = design_as(&gateway, AGENT_TWO, &session, "write_files", write.clone()).await;
    assert_eq!(stolen.status, 202, "{}", stolen.body);
    super::harness::assert_policy(&stolen, "plans.uncovered-asks");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    // The plan still covers agent-one's own write.
    let own = design_as(&gateway, AGENT_ONE, &session, "write_files", write).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(gateway.tool_calls("write_files").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n2_http_session_ids_may_not_take_askgates_own_prefixes() {
    let gateway = Gateway::start_with(two_agents).await;
    for id in ["mcp:4f1c", "mcp-principal:agent-one"] {
        let reply = design_as(
            &gateway,
            AGENT_TWO,
            &main_session(id),
            "get_project",
            json!({"project_id": "p1"}),
        )
        .await;
        assert_eq!(reply.status, 400, "{id}: {}", reply.body);
        assert_eq!(reply.body["error"]["field"], "session.id", "{}", reply.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n3_an_mcp_session_belongs_to_the_principal_that_opened_it() {
    let gateway = Gateway::start_with(two_agents).await;
    let mut owner = McpClient::new(&gateway, Some(AGENT_ONE));
    assert_eq!(owner.initialize(json!({})).await.status, 200);
    let mut intruder = McpClient::new(&gateway, Some(AGENT_TWO));
    intruder.session = owner.session.clone();
    let call = intruder
        .request(
            "tools/call",
            json!({"name": "ClaudeDesign", "arguments": {"operation": "list_projects"}}),
        )
        .await;
    assert_eq!(call.status, 404, "{call:?}");
    let cancel = intruder
        .post(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "not yours"}}),
        )
        .await;
    assert_eq!(cancel.status, 404, "{cancel:?}");
    let session = owner.session.clone().unwrap();
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let answer = gateway
            .http
            .request(method.clone(), format!("{}/mcp", gateway.url))
            .bearer_auth(AGENT_TWO)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 404, "{method}");
    }
    // The owner's session is untouched.
    assert!(owner
        .tool_names()
        .await
        .contains(&"ClaudeDesign".to_string()));
}

/// A stateless (2026-07-28) request is never filed under a session id from its headers: a
/// plan approved in agent-one's 2025-11-25 session does not cover agent-one's stateless call
/// that names that session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n3_a_stateless_request_is_never_filed_under_a_header_session() {
    let gateway = Gateway::start_with(|raw| {
        two_agents(raw);
        raw.mcp = Some(askgate::server::mcp::RawMcp {
            approval_wait_seconds: Some(2),
            progress_seconds: Some(1),
            ..Default::default()
        });
    })
    .await;
    consent(&gateway).await;
    let mut planner = McpClient::new(&gateway, Some(AGENT_ONE));
    assert_eq!(planner.initialize(json!({})).await.status, 200);
    let plan = json!({"operation": "finalize_plan",
        "arguments": {"project_id": "p1", "writes": ["site/a.html"], "scope": "paths"}});
    let approve = async {
        let id = loop {
            let page = gateway.get("/v1/approvals", Some(ALICE)).await;
            if let Some(id) = page.body["approvals"][0]["id"].as_str() {
                break id.to_string();
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        gateway
            .post(&format!("/v1/approvals/{id}/approve"), Some(ALICE), None)
            .await;
    };
    let ((planned, _), ()) = tokio::join!(planner.call("ClaudeDesign", plan), approve);
    let token: Value =
        serde_json::from_str(planned["content"][0]["text"].as_str().unwrap()).unwrap();
    let token = token["plan_token"].as_str().unwrap().to_string();
    let write = json!({"operation": "write_files",
        "arguments": covered_write_args("p1", &token, &["site/a.html"])});
    let mut stateless = McpClient::stateless(&gateway, Some(AGENT_ONE));
    stateless.session = planner.session.clone();
    let (result, _) = stateless.call("ClaudeDesign", write.clone()).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    let (covered, _) = planner.call("ClaudeDesign", write).await;
    assert_eq!(covered["isError"], false, "{covered}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_are_exclusive_an_approver_token_asks_for_nothing() {
    let gateway = Gateway::start_with(two_agents).await;
    let read = json!({"session": main_session("s"), "tool": "ClaudeDesign",
        "input": {"operation": "get_project", "arguments": {"project_id": "p1"}}});
    let call = json!({"session": main_session("s"),
        "input": {"operation": "get_project", "arguments": {"project_id": "p1"}}});
    let projects = json!({"session": main_session("s"), "input": {"method": "project_info"}});
    let hook = json!({"session_id": "cc", "hook_event_name": "PreToolUse",
        "tool_name": "Projects", "tool_input": {"method": "project_info"}, "tool_use_id": "t1"});
    for (path, body) in [
        ("/v1/authorize", read),
        ("/v1/design/call", call),
        ("/v1/projects/call", projects),
        ("/v1/hooks/claude-code", hook),
    ] {
        let reply = gateway.post(path, Some(ALICE), Some(body)).await;
        assert_eq!(reply.status, 403, "{path}: {}", reply.body);
    }
    let mut mcp = McpClient::new(&gateway, Some(ALICE));
    assert_eq!(mcp.initialize(json!({})).await.status, 403);
    for path in [
        "/v1/design/consent",
        "/v1/design/revoke",
        "/v1/admin/reload",
    ] {
        let reply = gateway.post(path, Some(AGENT_ONE), None).await;
        assert_eq!(reply.status, 403, "{path}: {}", reply.body);
    }
    let listing = gateway.get("/v1/approvals", Some(AGENT_ONE)).await;
    assert_eq!(listing.status, 403, "{}", listing.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agent_cannot_take_every_mcp_session_and_stateless_calls_never_need_one() {
    let gateway = Gateway::start_with(|raw| {
        two_agents(raw);
        raw.mcp = Some(askgate::server::mcp::RawMcp {
            max_sessions: Some(3),
            max_sessions_per_caller: Some(2),
            ..Default::default()
        });
    })
    .await;
    let mut ones: Vec<McpClient> = Vec::new();
    for _ in 0..2 {
        let mut client = McpClient::new(&gateway, Some(AGENT_ONE));
        assert_eq!(client.initialize(json!({})).await.status, 200);
        ones.push(client);
    }
    let mut third = McpClient::new(&gateway, Some(AGENT_ONE));
    let refused = third.initialize(json!({})).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(
        refused.text.contains("mcp.max_sessions_per_caller"),
        "{refused:?}"
    );
    let mut other = McpClient::new(&gateway, Some(AGENT_TWO));
    assert_eq!(other.initialize(json!({})).await.status, 200);
    // The table is now full (3): another initialize is refused, a stateless call is served.
    let mut fourth = McpClient::new(&gateway, Some(AGENT_TWO));
    assert_eq!(fourth.initialize(json!({})).await.status, 503);
    let mut stateless = McpClient::stateless(&gateway, Some(AGENT_ONE));
    let listed = stateless.request("tools/list", json!({})).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(
        listed.response(1)["result"]["tools"].is_array(),
        "{listed:?}"
    );
    // A closed session frees its place.
    let closed = gateway
        .http
        .delete(format!("{}/mcp", gateway.url))
        .bearer_auth(AGENT_ONE)
        .header("mcp-session-id", ones[0].session.clone().unwrap())
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    assert_eq!(third.initialize(json!({})).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agent_cannot_fill_the_bytes_of_held_calls() {
    let gateway = Gateway::start_with(|raw| {
        two_agents(raw);
        raw.approvals = Some(
            serde_json::from_value(
                json!({"max_held_bytes": 4_000_000, "max_held_bytes_per_caller": 1_000_000}),
            )
            .unwrap(),
        );
    })
    .await;
    consent(&gateway).await;
    let mut big = write_args("p1", &["b.html"]);
    big["files"][0]["data"] = json!("y".repeat(600_000));
    let session = main_session("s-bytes");
    let first = design_as(&gateway, AGENT_ONE, &session, "write_files", big.clone()).await;
    assert_eq!(first.status, 202, "{}", first.body);
    let second = design_as(&gateway, AGENT_ONE, &session, "write_files", big.clone()).await;
    assert_eq!(second.status, 429, "{}", second.body);
    let message = second.body["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("approvals.max_held_bytes_per_caller"),
        "{message}"
    );
    let other = design_as(&gateway, AGENT_TWO, &session, "write_files", big).await;
    assert_eq!(other.status, 202, "{}", other.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_require_the_metrics_token_when_one_is_configured() {
    let open = Gateway::start().await;
    assert_eq!(open.get("/metrics", None).await.status, 200);
    let guarded = Gateway::start_with(|raw| raw.metrics_token = Some(METRICS.into())).await;
    assert_eq!(guarded.get("/metrics", None).await.status, 401);
    let agent = super::harness::AGENT;
    assert_eq!(guarded.get("/metrics", Some(agent)).await.status, 401);
    let scraped = guarded.get("/metrics", Some(METRICS)).await;
    assert_eq!(scraped.status, 200);
    assert!(
        scraped
            .body
            .as_str()
            .unwrap_or("")
            .contains("askgate_pending_approvals 0"),
        "{}",
        scraped.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n4_mcp_refuses_browser_origins_unless_listed() {
    let gateway = Gateway::start().await;
    for origin in ["http://evil.example", "null", "http://localhost:3000"] {
        let mut client = McpClient::new(&gateway, Some(super::harness::AGENT));
        client.headers.push(("origin".into(), origin.into()));
        let refused = client.initialize(json!({})).await;
        assert_eq!(refused.status, 403, "{origin}: {refused:?}");
    }
    let mut plain = McpClient::new(&gateway, Some(super::harness::AGENT));
    assert_eq!(plain.initialize(json!({})).await.status, 200);
    let listed = Gateway::start_with(|raw| {
        raw.mcp = Some(askgate::server::mcp::RawMcp {
            allowed_origins: Some(vec!["http://localhost:3000".into()]),
            ..Default::default()
        });
    })
    .await;
    let mut client = McpClient::new(&listed, Some(super::harness::AGENT));
    client
        .headers
        .push(("origin".into(), "http://localhost:3000".into()));
    assert_eq!(client.initialize(json!({})).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_bodies_obey_max_body_bytes() {
    let gateway = Gateway::start_with(|raw| {
        raw.http = Some(serde_json::from_value(json!({"max_body_bytes": 100_000})).unwrap());
    })
    .await;
    let mut client = McpClient::new(&gateway, Some(super::harness::AGENT));
    assert_eq!(client.initialize(json!({})).await.status, 200);
    let mut big = write_args("p1", &["b.html"]);
    big["files"][0]["data"] = json!("y".repeat(200_000));
    let reply = client
        .request(
            "tools/call",
            json!({"name": "ClaudeDesign",
                "arguments": {"operation": "write_files", "arguments": big}}),
        )
        .await;
    assert_eq!(reply.status, 413, "{reply:?}");
}
