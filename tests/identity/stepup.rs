//! Issue 34 §2, step-up: a `@step_up("askgate:write")` policy denies writes to a token without
//! that scope (`context.caller.scopes`), and the front doors answer OAuth's step-up challenge —
//! 403 `insufficient_scope` naming the scope and askgate's protected-resource metadata — on
//! the HTTP API and on `/mcp` (2026-07-28); a token granted the scope is not denied by it; a
//! deny another policy also makes is a plain 403; the annotation is checked when policies load.

use serde_json::{json, Value};

use super::{op_config, RESOURCE};
use crate::gateway::harness::{main_session, Gateway};
use crate::support::oidc::Op;

const STEP_UP: &str = r#"@id("org.writes-need-write-scope")
@reason("writing to a design project needs the askgate:write scope")
@step_up("askgate:write")
forbid (principal, action in Action::"ClaudeDesign", resource)
when { !context.design.read_only && !context.caller.scopes.contains("askgate:write") };
"#;

const METADATA: &str = "https://askgate.test/.well-known/oauth-protected-resource/mcp";

async fn serving(op: &Op, policies: &str) -> (Gateway, tempfile::TempDir) {
    let managed = tempfile::tempdir().unwrap();
    std::fs::write(managed.path().join("org.cedar"), policies).unwrap();
    let identity = json!({"issuers": [{
        "issuer": op.issuer, "audience": RESOURCE,
        "agent_scopes": ["askgate:agent"], "approver_groups": ["askgate-approvers"],
    }]});
    let gateway = Gateway::start_with(|raw| {
        raw.identity = Some(serde_json::from_value(identity).unwrap());
        raw.policies = Some(vec![managed.path().to_path_buf()]);
    })
    .await;
    (gateway, managed)
}

fn write_arguments() -> Value {
    json!({"project_id": "p1", "files": [{"path": "brand.html", "data": "<p>b</p>"}]})
}

/// `POST path` with `token` and extra headers: status, `WWW-Authenticate`, body.
async fn post(
    gateway: &Gateway,
    path: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> (u16, String, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", gateway.url))
        .bearer_auth(token)
        .json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, challenge, body)
}

fn assert_step_up(challenge: &str) {
    for part in [
        "error=\"insufficient_scope\"",
        "scope=\"askgate:write\"",
        &format!("resource_metadata=\"{METADATA}\""),
    ] {
        assert!(challenge.contains(part), "{part} in {challenge}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i34_a_step_up_policy_answers_insufficient_scope_on_http_and_mcp() {
    let op = Op::start(op_config()).await;
    let (gateway, _managed) = serving(&op, STEP_UP).await;
    let agent = op
        .client_credentials("agent", "agent-secret", RESOURCE, "askgate:agent")
        .await;
    let call = json!({"session": main_session("s-step"),
                      "input": {"operation": "write_files", "arguments": write_arguments()}});

    let (status, challenge, body) =
        post(&gateway, "/v1/design/call", &agent, &[], call.clone()).await;
    assert_eq!(status, 403, "{body}");
    assert_step_up(&challenge);
    assert_eq!(body["step_up"], json!(["askgate:write"]), "{body}");
    assert_eq!(
        body["policies"],
        json!(["org.writes-need-write-scope"]),
        "{body}"
    );

    // /mcp, as Claude Code sends a 2026-07-28 tools/call.
    let mcp = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "ClaudeDesign",
        "arguments": {"operation": "write_files", "arguments": write_arguments()},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "askgate-tests", "version": "0"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "ClaudeDesign"),
    ];
    let (status, challenge, body) = post(&gateway, "/mcp", &agent, &headers, mcp.clone()).await;
    assert_eq!(status, 403, "{body}");
    assert_step_up(&challenge);
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert!(
        body["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("needs the askgate:write scope"),
        "{body}"
    );

    // The stepped-up token is not denied by it, on either door.
    let stepped = op
        .client_credentials(
            "agent",
            "agent-secret",
            RESOURCE,
            "askgate:agent askgate:write",
        )
        .await;
    let (status, challenge, body) = post(&gateway, "/v1/design/call", &stepped, &[], call).await;
    assert_ne!(status, 403, "{body}");
    assert!(challenge.is_empty(), "{challenge}");
    let (status, _, body) = post(&gateway, "/mcp", &stepped, &headers, mcp).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        !body.to_string().contains("org.writes-need-write-scope"),
        "{body}"
    );
}

/// A deny another (non-step-up) policy also makes is a plain 403: more scope would not lift it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i34_a_deny_more_scope_would_not_lift_is_no_step_up() {
    let op = Op::start(op_config()).await;
    let also = format!(
        "{STEP_UP}\n@id(\"org.no-brand\")\n@reason(\"brand.html is frozen\")\n\
         forbid (principal, action in Action::\"ClaudeDesign\", resource)\n\
         when {{ !context.design.read_only }};\n"
    );
    let (gateway, _managed) = serving(&op, &also).await;
    let agent = op
        .client_credentials("agent", "agent-secret", RESOURCE, "askgate:agent")
        .await;
    let call = json!({"session": main_session("s-plain"),
                      "input": {"operation": "write_files", "arguments": write_arguments()}});
    let (status, challenge, body) = post(&gateway, "/v1/design/call", &agent, &[], call).await;
    assert_eq!(status, 403, "{body}");
    assert!(challenge.is_empty(), "{challenge}");
    assert!(body.get("step_up").is_none(), "{body}");
}

/// `@step_up` on a permit, on an asking forbid, or with something that is not a scope list
/// does not load, and says why with the file and line.
#[test]
fn i34_a_misused_step_up_does_not_load() {
    let dir = tempfile::tempdir().unwrap();
    for (name, policy) in [
        ("permit.cedar", "@id(\"a\")\n@reason(\"r\")\n@step_up(\"askgate:write\")\npermit (principal, action in Action::\"Projects\", resource);\n"),
        ("asks.cedar", "@id(\"b\")\n@reason(\"r\")\n@ask(\"grant\")\n@step_up(\"askgate:write\")\nforbid (principal, action in Action::\"Projects\", resource);\n"),
        ("quoted.cedar", "@id(\"c\")\n@reason(\"r\")\n@step_up(\"askgate:write  x\\\\y\")\nforbid (principal, action in Action::\"Projects\", resource);\n"),
    ] {
        std::fs::write(dir.path().join(name), policy).unwrap();
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["validate", "--policies", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    for needle in [
        "permit.cedar:1: policy `a`: @step_up is only meaningful on a hard forbid",
        "asks.cedar:1: policy `b`: @step_up is only meaningful on a hard forbid",
        "quoted.cedar:1: policy `c`: @step_up(`askgate:write  x\\y`) is not a list of OAuth scopes",
    ] {
        assert!(stderr.contains(needle), "{needle} in:\n{stderr}");
    }
}
