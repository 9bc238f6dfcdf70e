//! A scripted fake of the Anthropic Messages API for driving the real Claude Code client.
//!
//! Each test scripts the model's turns ([`Turn`]): a tool call, a final text, or a turn made
//! from the tool results the agent was sent so far. The turn answered is chosen by how many
//! assistant messages the request already carries, so a retried request gets the same answer
//! and the script needs no server-side cursor. The main agent and the subagents it starts
//! (the Agent tool) reach the same fake; a subagent's requests say so in their system prompt
//! (`cc_is_subagent=true`), so each is answered from its own script. Requests without `tools`
//! are the client's side requests (titles and the like) and get a short text. Every request
//! body is kept, so a test can read what the model was sent back (the `tool_result` blocks).
//! Streaming answers are standard Messages SSE events.

use std::fmt;
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
    /// The model's turn depends on what it was sent back (e.g. a write with the plan token a
    /// `finalize_plan` returned).
    After(Later),
}

type MakeTurn = dyn Fn(&[ToolResult]) -> Turn + Send + Sync;

/// Makes a turn from the tool results this agent's conversation holds so far, in order.
#[derive(Clone)]
pub struct Later(Arc<MakeTurn>);

impl fmt::Debug for Later {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Later(..)")
    }
}

impl Turn {
    pub fn tool(name: &str, input: Value) -> Turn {
        Turn::ToolUse {
            name: name.to_string(),
            input,
        }
    }

    pub fn after(make: impl Fn(&[ToolResult]) -> Turn + Send + Sync + 'static) -> Turn {
        Turn::After(Later(Arc::new(make)))
    }
}

/// Who sent a request: the main agent, or a subagent it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Main,
    Subagent,
}

impl Caller {
    /// Tool-use ids differ per caller, so a subagent's never repeats the main agent's.
    fn id_prefix(self) -> &'static str {
        match self {
            Caller::Main => "toolu_",
            Caller::Subagent => "toolu_sub_",
        }
    }
}

#[derive(Default)]
struct Script {
    main: Vec<Turn>,
    /// Without turns of its own, a subagent ends at once.
    subagent: Vec<Turn>,
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
        FakeMessages::start_with_subagent(turns, Vec::new()).await
    }

    /// A fake whose subagents (started with the Agent tool) follow `subagent`.
    pub async fn start_with_subagent(main: Vec<Turn>, subagent: Vec<Turn>) -> FakeMessages {
        let script = Arc::new(Mutex::new(Script {
            main,
            subagent,
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

    /// Every request of the main agent that offered tools (its own turns), in arrival order.
    pub fn agent_requests(&self) -> Vec<Value> {
        self.requests_of(Caller::Main)
    }

    /// Every request of `caller` that offered tools, in arrival order.
    pub fn requests_of(&self, caller: Caller) -> Vec<Value> {
        let script = self.script.lock().expect("script lock");
        script
            .requests
            .iter()
            .filter(|request| has_tools(request) && caller_of(request) == caller)
            .cloned()
            .collect()
    }

    /// The `tool_result` blocks the main agent was sent back, in order, with their text joined.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        self.tool_results_of(Caller::Main)
    }

    /// The `tool_result` blocks `caller` was sent back, in order.
    pub fn tool_results_of(&self, caller: Caller) -> Vec<ToolResult> {
        let mut results: Vec<ToolResult> = Vec::new();
        for request in self.requests_of(caller) {
            for result in results_in(&request) {
                if !results
                    .iter()
                    .any(|known| known.tool_use_id == result.tool_use_id)
                {
                    results.push(result);
                }
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

/// The tool results one request carries (its conversation so far), in order.
fn results_in(request: &Value) -> Vec<ToolResult> {
    user_blocks(request)
        .into_iter()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| ToolResult {
            tool_use_id: block["tool_use_id"].as_str().unwrap_or("").to_string(),
            is_error: block["is_error"].as_bool().unwrap_or(false),
            text: block_text(&block["content"]),
        })
        .collect()
}

/// A subagent's system prompt opens with the client's billing line saying so.
fn caller_of(request: &Value) -> Caller {
    if block_text(&request["system"]).contains("cc_is_subagent=true") {
        Caller::Subagent
    } else {
        Caller::Main
    }
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
    let caller = caller_of(&request);
    let turn = {
        let mut script = script.lock().expect("script lock");
        script.requests.push(request.clone());
        let turns = match caller {
            Caller::Main => &script.main,
            Caller::Subagent => &script.subagent,
        };
        if has_tools(&request) {
            turns
                .get(assistant_turns(&request))
                .cloned()
                .unwrap_or_else(|| Turn::Text("done".to_string()))
        } else {
            Turn::Text("askgate test".to_string())
        }
    };
    let turn = answer(turn, &request);
    let id = format!("{}{:04}", caller.id_prefix(), assistant_turns(&request));
    if request["stream"].as_bool().unwrap_or(false) {
        let body = stream_body(&turn, &id);
        ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
    } else {
        Json(message(&turn, &id, true)).into_response()
    }
}

/// What the model answers: a tool call or a text, once a turn made from the conversation's
/// results is made.
enum Answer {
    ToolUse { name: String, input: Value },
    Text(String),
}

fn answer(turn: Turn, request: &Value) -> Answer {
    match turn {
        Turn::ToolUse { name, input } => Answer::ToolUse { name, input },
        Turn::Text(text) => Answer::Text(text),
        Turn::After(Later(make)) => answer(make(&results_in(request)), request),
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
fn message(turn: &Answer, id: &str, filled: bool) -> Value {
    let (content, stop) = match turn {
        Answer::ToolUse { name, input } => (
            json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
            "tool_use",
        ),
        Answer::Text(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
    };
    json!({
        "id": format!("msg_{id}"), "type": "message", "role": "assistant",
        "model": "claude-fake", "content": if filled { content } else { json!([]) },
        "stop_reason": if filled { json!(stop) } else { Value::Null },
        "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}
    })
}

fn stream_body(turn: &Answer, id: &str) -> String {
    let (start, delta, stop) = match turn {
        Answer::ToolUse { name, input } => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        Answer::Text(text) => (
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
