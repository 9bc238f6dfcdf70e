//! `null` where the reference's schema needs a scalar, end to end (issue 18 §7, the concerns of
//! the boundaries findings): a 400 naming the field on every call path, nothing decided or sent
//! upstream — never "no project" (which slipped past project-pinned rules) and never a token.

use serde_json::json;

use super::harness::{main_session, Gateway, AGENT};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i18_null_project_id_and_plan_token_are_input_errors_never_absent_or_a_token() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let before = gateway.stats().await["requests"].as_u64().unwrap_or(0);
    let cases = [
        (
            "get_project",
            json!({"project_id": null}),
            "call.input.arguments.project_id",
        ),
        (
            "write_files",
            json!({"project_id": "p1", "plan_token": null,
                   "files": [{"path": "index.html", "data": "x"}]}),
            "call.input.arguments.plan_token",
        ),
    ];
    for (operation, arguments, field) in cases {
        let input = json!({"operation": operation, "arguments": arguments});
        for path in ["/v1/authorize", "/v1/design/call"] {
            let mut body = json!({"session": main_session("s-nulls"), "input": input});
            if path == "/v1/authorize" {
                body["tool"] = json!("ClaudeDesign");
            }
            let reply = gateway.post(path, Some(AGENT), Some(body)).await;
            assert_eq!(reply.status, 400, "{path} {operation}: {}", reply.body);
            assert_eq!(reply.body["error"]["field"], field, "{}", reply.body);
            let message = reply.body["error"]["message"].as_str().unwrap_or("");
            assert!(message.ends_with("not null"), "{message}");
            assert!(reply.body.get("decision").is_none(), "{}", reply.body);
        }
    }
    assert_eq!(
        gateway.stats().await["requests"].as_u64().unwrap_or(0),
        before,
        "nothing went upstream"
    );
}
