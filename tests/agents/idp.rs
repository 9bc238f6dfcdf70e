//! Issue 34 §2 with the real client: Claude Code calls askgate's `/mcp` with a token from the
//! organisation's IdP and no askgate secret in its configuration. Its MCP server entry names a
//! `headersHelper` that fetches a client-credentials access token from the test provider for
//! every connection; askgate verifies it (issuer, audience, signature) and the decision is the
//! agent's, named `iss|sub` in the log.

use std::time::Duration;

use serde_json::{json, Value};

use crate::gateway::harness::Gateway;
use crate::identity::{op_config, RESOURCE};
use crate::support::claude_code::Run;
use crate::support::fake_messages::{FakeMessages, Turn};
use crate::support::oidc::Op;

const DESIGN_TOOL: &str = "mcp__askgate__ClaudeDesign";

/// A `headersHelper` that prints `{"Authorization": "Bearer <fresh token>"}`: a client
/// credentials grant at `issuer`'s token endpoint for askgate's resource.
fn headers_helper(dir: &std::path::Path, issuer: &str) -> String {
    let script = dir.join("askgate-token.mjs");
    let source = format!(
        r#"const body = new URLSearchParams({{grant_type: "client_credentials",
  resource: "{RESOURCE}", scope: "askgate:agent"}});
const response = await fetch("{issuer}/token", {{method: "POST", body,
  headers: {{authorization: "Basic " + Buffer.from("agent:agent-secret").toString("base64")}}}});
if (!response.ok) {{ console.error("token endpoint:", response.status); process.exit(1); }}
const {{access_token}} = await response.json();
process.stdout.write(JSON.stringify({{Authorization: "Bearer " + access_token}}));
"#
    );
    std::fs::write(&script, source).unwrap();
    format!("node {}", script.display())
}

/// The client in `home` (with `mcp_config`, or what `home` configures) asked by the model to
/// list design projects through askgate: the one tool result, checked to be no error.
pub(super) async fn lists_projects(
    home: &std::path::Path,
    mcp_config: Option<Value>,
) -> Vec<crate::support::fake_messages::ToolResult> {
    let fake = FakeMessages::start(vec![
        Turn::tool(
            DESIGN_TOOL,
            json!({"operation": "list_projects", "arguments": {}}),
        ),
        Turn::Text("listed".to_string()),
    ])
    .await;
    let out = Run {
        api_url: &fake.url,
        prompt: "list my design projects",
        mcp_config,
        settings: None,
        allowed_tools: vec![DESIGN_TOOL.to_string()],
        args: Vec::new(),
        env: Vec::new(),
        timeout: Duration::from_secs(150),
    }
    .json_in(home)
    .await;
    assert_eq!(out["result"], "listed", "{out}");
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}; client output {out}");
    assert!(!results[0].is_error, "{:?}", results[0]);
    results
}

/// The decision records of `operation` in the log directory `logs`.
pub(super) fn decisions(logs: &std::path::Path, operation: &str) -> Vec<Value> {
    std::fs::read_dir(logs)
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default())
        .flat_map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .collect::<Vec<_>>()
        })
        .filter(|record| record["kind"] == "decision" && record["operation"] == operation)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i34_the_real_client_calls_with_the_token_its_headers_helper_fetches_from_the_idp() {
    let op = Op::start(op_config()).await;
    let logs = tempfile::tempdir().unwrap();
    let log_dir = logs.path().to_path_buf();
    let identity = json!({"issuers": [{
        "issuer": op.issuer,
        "audience": RESOURCE,
        "agent_scopes": ["askgate:agent"],
        "approver_groups": ["askgate-approvers"],
    }]});
    let gateway = Gateway::start_with(|raw| {
        raw.identity = Some(serde_json::from_value(identity).unwrap());
        raw.log_dir = Some(log_dir);
    })
    .await;
    // Consent is an approver's: the provider's approver bot.
    let approver = op
        .client_credentials("approver-bot", "approver-secret", RESOURCE, "askgate:read")
        .await;
    let consent = gateway
        .post("/v1/design/consent", Some(&approver), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    // Without a token the client's server is refused: askgate takes no call unauthenticated.
    let bare = gateway.post("/mcp", None, Some(json!({}))).await;
    assert_eq!(bare.status, 401, "{}", bare.body);

    let helper_dir = tempfile::tempdir().unwrap();
    let helper = headers_helper(helper_dir.path(), &op.issuer);
    let mcp_config = json!({"mcpServers": {"askgate": {
        "type": "http", "url": format!("{}/mcp", gateway.url), "headersHelper": helper}}});
    let home = tempfile::tempdir().unwrap();
    let results = lists_projects(home.path(), Some(mcp_config)).await;
    assert!(results[0].text.contains("Q3 deck"), "{:?}", results[0]);
    assert_eq!(gateway.tool_calls("list_projects").await, 1);

    let decided = decisions(logs.path(), "list_projects");
    assert_eq!(decided.len(), 1, "{decided:?}");
    assert_eq!(decided[0]["front_door"], "mcp", "{:?}", decided[0]);
    assert_eq!(
        decided[0]["facts"]["context"]["caller"]["principal"],
        format!("{}|agent", op.issuer),
        "the agent is the IdP's client, named by issuer and subject"
    );
    assert_eq!(
        decided[0]["facts"]["context"]["caller"]["client"], "agent",
        "{:?}",
        decided[0]
    );
}
