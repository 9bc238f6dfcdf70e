//! Issue 19 §4: the stateless fast path of `/mcp` (`server::mcp::lean`) answers a 2026-07-28
//! `tools/call` as rmcp's service does — the same result for the same call, progress then the
//! result for a held one — and leaves to rmcp every request whose headers it does not check
//! exactly as rmcp would, which rmcp then answers (here: refuses) itself.

use std::time::Duration;

use serde_json::{json, Value};

use super::harness::{text_of, write_args, Gateway, AGENT};
use super::mcp::{pending_approval, quick_holds};

/// Claude Code's headers on a 2026-07-28 `tools/call` of `ClaudeDesign`.
const PLAIN: &[(&str, &str)] = &[
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "ClaudeDesign"),
];

/// The same, with an `Accept` the fast path does not read (a weight): rmcp's service serves it.
const WEIGHTED: &[(&str, &str)] = &[
    ("accept", "application/json;q=1, text/event-stream"),
    ("content-type", "application/json"),
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
    ("mcp-name", "ClaudeDesign"),
];

fn call(id: u64, arguments: Value, meta: Value) -> Value {
    let mut meta = meta;
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "askgate-tests", "version": "0"});
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "ClaudeDesign", "arguments": arguments, "_meta": meta}})
}

struct Answer {
    status: u16,
    content_type: String,
    text: String,
}

impl Answer {
    /// The JSON-RPC messages: the body, or each SSE `data:` line.
    fn messages(&self) -> Vec<Value> {
        if let Ok(one) = serde_json::from_str::<Value>(&self.text) {
            return vec![one];
        }
        self.text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect()
    }

    /// The result of request `id`, its decision id blanked (each call is a new decision).
    fn result(&self, id: u64) -> Value {
        let messages = self.messages();
        let response = messages
            .iter()
            .find(|message| message["id"] == json!(id))
            .unwrap_or_else(|| panic!("no response {id}: {}", self.text));
        let text = response["result"].to_string();
        let decision = response["result"]["structuredContent"]["decision_id"]
            .as_str()
            .map(str::to_string);
        let text = match decision {
            Some(decision) => text.replace(&decision, "DECISION"),
            None => text,
        };
        serde_json::from_str(&text).unwrap()
    }
}

async fn post(gateway: &Gateway, body: &Value, headers: &[(&str, &str)]) -> Answer {
    let mut request = gateway
        .http
        .post(format!("{}/mcp", gateway.url))
        .bearer_auth(AGENT)
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_string();
    Answer {
        status: response.status().as_u16(),
        content_type,
        text: response.text().await.unwrap(),
    }
}

/// `(fast, service)`: the `tools/call`s each path served, from `/metrics`.
async fn served(gateway: &Gateway) -> (u64, u64) {
    let metrics = gateway.get("/metrics", None).await.body;
    let text = metrics.as_str().unwrap_or("");
    let count = |path: &str| {
        let line = format!("askgate_mcp_tool_calls_total{{path=\"{path}\"}} ");
        text.lines()
            .find_map(|found| found.strip_prefix(line.as_str()))
            .unwrap_or_else(|| panic!("no {line} in\n{text}"))
            .parse::<u64>()
            .unwrap()
    };
    (count("fast"), count("service"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i19_the_fast_path_answers_a_stateless_call_as_rmcps_service_does() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let read = json!({"operation": "list_projects", "arguments": {}});
    let denied = json!({"operation": "write_files", "arguments": write_args("p1", &["CLAUDE.md"])});
    let mut id = 0;
    for arguments in [read, denied] {
        let mut answers = Vec::new();
        for headers in [PLAIN, WEIGHTED] {
            id += 1;
            let answer = post(&gateway, &call(id, arguments.clone(), json!({})), headers).await;
            assert_eq!(answer.status, 200, "{}", answer.text);
            assert!(
                answer.content_type.starts_with("application/json"),
                "{}",
                answer.content_type
            );
            answers.push(answer.result(id));
        }
        assert_eq!(
            answers[0], answers[1],
            "the fast path and rmcp's service differ"
        );
        assert!(text_of(&answers[0]).len() > 10, "{}", answers[0]);
    }
    assert_eq!(served(&gateway).await, (2, 2));
    assert_eq!(gateway.tool_calls("list_projects").await, 2);
    assert_eq!(gateway.tool_calls("write_files").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i19_headers_the_fast_path_does_not_match_go_to_rmcp_which_refuses_them() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let read = call(
        1,
        json!({"operation": "list_projects", "arguments": {}}),
        json!({}),
    );
    let with = |name: &'static str, value: &'static str| {
        let mut headers: Vec<(&str, &str)> = PLAIN
            .iter()
            .copied()
            .filter(|(held, _)| *held != name)
            .collect();
        headers.push((name, value));
        headers
    };
    for (headers, status) in [
        (with("mcp-name", "Projects"), 400),
        (with("mcp-method", "tools/list"), 400),
        (with("host", "evil.example"), 403),
        (with("mcp-protocol-version", "2025-11-25"), 400),
    ] {
        let answer = post(&gateway, &read, &headers).await;
        assert_eq!(answer.status, status, "{headers:?}: {}", answer.text);
    }
    assert_eq!(served(&gateway).await.0, 0, "the fast path served none");
    assert_eq!(gateway.tool_calls("list_projects").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i19_a_held_call_on_the_fast_path_streams_progress_then_its_result() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    gateway.record_consent().await;
    let write = json!({"operation": "write_files", "arguments": write_args("p1", &["held.html"])});
    let body = call(9, write, json!({"progressToken": "p-9"}));
    let approve = async {
        let approval = pending_approval(&gateway).await;
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let approved = gateway.approve(approval["id"].as_str().unwrap()).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
    };
    let (answer, ()) = tokio::join!(post(&gateway, &body, PLAIN), approve);
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert!(
        answer.content_type.starts_with("text/event-stream"),
        "{}",
        answer.content_type
    );
    let messages = answer.messages();
    let progress = messages
        .iter()
        .find(|message| message["method"] == "notifications/progress")
        .unwrap_or_else(|| panic!("no progress: {}", answer.text));
    assert_eq!(progress["params"]["progressToken"], "p-9");
    let said = progress["params"]["message"].as_str().unwrap_or("");
    assert!(said.contains("/console/approvals/ap_"), "{said}");
    let result = answer.result(9);
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(messages.last().unwrap()["id"], 9, "the result comes last");
    assert_eq!(served(&gateway).await, (1, 0));
    assert_eq!(
        gateway.read_file("p1", "held.html").await.as_deref(),
        Some("<p>held.html</p>")
    );
}
