//! A scripted fake of the Anthropic Messages API for driving the real Claude Code client.
//!
//! Each test scripts the model's turns ([`Turn`]): a tool call or a final text. The turn
//! answered is chosen by how many assistant messages the request already carries, so a
//! retried request gets the same answer and the script needs no server-side cursor. Requests
//! without `tools` are the client's side requests (titles and the like) and get a short text.
//! Every request body is kept, so a test can read what the model was sent back (the
//! `tool_result` blocks). Streaming answers are standard Messages SSE events.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub enum Turn {
    /// The model calls `name` with `input`.
    ToolUse { name: String, input: Value },
    /// The model answers with text and ends its turn.
    Text(String),
}

impl Turn {
    pub fn tool(name: &str, input: Value) -> Turn {
        Turn::ToolUse {
            name: name.to_string(),
            input,
        }
    }
}

#[derive(Default)]
struct Script {
    turns: Vec<Turn>,
    requests: Vec<Value>,
}

/// A running fake; dropped with the test's runtime.
pub struct FakeMessages {
    pub url: String,
    script: Arc<Mutex<Script>>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl FakeMessages {
    pub async fn start(turns: Vec<Turn>) -> FakeMessages {
        let script = Arc::new(Mutex::new(Script {
            turns,
            requests: Vec::new(),
        }));
        let router = Router::new()
            .route("/v1/messages", post(messages))
            .fallback(|| async { (StatusCode::NOT_FOUND, "not part of the fake") })
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        FakeMessages {
            url,
            script,
            _shutdown: shutdown,
        }
    }

    /// Every request that offered tools (the agent's own turns), in arrival order.
    pub fn agent_requests(&self) -> Vec<Value> {
        let script = self.script.lock().expect("script lock");
        script
            .requests
            .iter()
            .filter(|request| has_tools(request))
            .cloned()
            .collect()
    }

    /// The `tool_result` blocks the model was sent back, in order, with their text joined.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        let mut results: Vec<ToolResult> = Vec::new();
        for request in self.agent_requests() {
            for block in user_blocks(&request) {
                if block["type"] != "tool_result" {
                    continue;
                }
                let id = block["tool_use_id"].as_str().unwrap_or("").to_string();
                if results.iter().any(|known| known.tool_use_id == id) {
                    continue;
                }
                results.push(ToolResult {
                    tool_use_id: id,
                    is_error: block["is_error"].as_bool().unwrap_or(false),
                    text: block_text(&block["content"]),
                });
            }
        }
        results
    }

    /// The names of the tools offered to the model in its first turn.
    pub fn offered_tools(&self) -> Vec<String> {
        self.agent_requests()
            .first()
            .and_then(|request| request["tools"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_string))
            .collect()
    }
}

/// What the client sent back for one tool call.
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub tool_use_id: String,
    pub is_error: bool,
    pub text: String,
}

fn has_tools(request: &Value) -> bool {
    request["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty())
}

fn user_blocks(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "user")
        .filter_map(|message| message["content"].as_array().cloned())
        .flatten()
        .collect()
}

fn block_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

async fn messages(
    State(script): State<Arc<Mutex<Script>>>,
    Json(request): Json<Value>,
) -> Response {
    let turn = {
        let mut script = script.lock().expect("script lock");
        script.requests.push(request.clone());
        if has_tools(&request) {
            let done = assistant_turns(&request);
            script
                .turns
                .get(done)
                .cloned()
                .unwrap_or_else(|| Turn::Text("done".to_string()))
        } else {
            Turn::Text("askgate test".to_string())
        }
    };
    let id = format!("toolu_{:04}", assistant_turns(&request));
    if request["stream"].as_bool().unwrap_or(false) {
        let body = stream_body(&turn, &id);
        ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
    } else {
        Json(message(&turn, &id, true)).into_response()
    }
}

fn assistant_turns(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|message| message["role"] == "assistant")
                .count()
        })
        .unwrap_or(0)
}

/// The whole message (non-streaming); with `filled` false the content is empty, as in
/// `message_start`.
fn message(turn: &Turn, id: &str, filled: bool) -> Value {
    let (content, stop) = match turn {
        Turn::ToolUse { name, input } => (
            json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
            "tool_use",
        ),
        Turn::Text(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
    };
    json!({
        "id": format!("msg_{id}"), "type": "message", "role": "assistant",
        "model": "claude-fake", "content": if filled { content } else { json!([]) },
        "stop_reason": if filled { json!(stop) } else { Value::Null },
        "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}
    })
}

fn stream_body(turn: &Turn, id: &str) -> String {
    let (start, delta, stop) = match turn {
        Turn::ToolUse { name, input } => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        Turn::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
    };
    let events = [
        json!({"type": "message_start", "message": message(turn, id, false)}),
        json!({"type": "content_block_start", "index": 0, "content_block": start}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ];
    events
        .iter()
        .map(|event| {
            format!(
                "event: {}\ndata: {event}\n\n",
                event["type"].as_str().unwrap_or("")
            )
        })
        .collect()
}
