//! sandbox::mcp: `POST /v1/design/mcp`, JSON-RPC 2.0 over HTTP with `Mcp-Session-Id` sessions:
//! `initialize`, `tools/list`, `tools/call`. It owns the wire and the sessions; the operations
//! and their checks are `design` and `enforce`.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use dashmap::DashSet;
use serde_json::{json, Value};

use super::design::{self, ToolOutcome};
use super::{catalog, SharedState};

pub const MCP_PATH: &str = "/v1/design/mcp";
pub const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "2025-03-26";

/// The live MCP sessions.
#[derive(Debug, Default)]
pub struct SessionBook {
    sessions: DashSet<String>,
}

impl SessionBook {
    pub fn open(&self) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        self.sessions.insert(id.clone());
        id
    }

    pub fn is_live(&self, id: &str) -> bool {
        self.sessions.contains(id)
    }

    pub fn expire(&self, id: &str) {
        self.sessions.remove(id);
    }

    pub fn clear(&self) {
        self.sessions.clear();
    }
}

fn rpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, Json(body)).into_response()
}

fn rpc_result(id: Value, result: Value) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

pub async fn handle(
    State(shared): State<SharedState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32700, "parse error");
    };
    let id = message.get("id").cloned();
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        let id = id.unwrap_or(Value::Null);
        return rpc_error(StatusCode::BAD_REQUEST, id, -32600, "missing `method`");
    };
    if method == "initialize" {
        return initialize(&shared, id.unwrap_or(Value::Null));
    }
    let session = headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok());
    let Some(session) = session else {
        let id = id.unwrap_or(Value::Null);
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            -32600,
            "missing `mcp-session-id`",
        );
    };
    if !shared.sessions.is_live(session) {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "session_not_found"})),
        )
            .into_response();
    }
    // A notification (no id) gets no JSON-RPC answer.
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    match method {
        "tools/list" => {
            shared.counters.tools_list.increment();
            rpc_result(id, json!({"tools": catalog::tools()}))
        }
        "tools/call" => tools_call(&shared, id, &params),
        "ping" => rpc_result(id, json!({})),
        _ => rpc_error(
            StatusCode::OK,
            id,
            -32601,
            &format!("unknown method `{method}`"),
        ),
    }
}

fn initialize(shared: &SharedState, id: Value) -> Response {
    shared.counters.initialize.increment();
    let session = shared.sessions.open();
    let result = json!({
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "askgate-sandbox", "version": env!("CARGO_PKG_VERSION")},
    });
    let mut response = rpc_result(id, result);
    if let Ok(value) = session.parse() {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

fn tools_call(shared: &SharedState, id: Value, params: &Value) -> Response {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return rpc_error(StatusCode::OK, id, -32602, "missing `params.name`");
    };
    shared.counters.count_tool_call(name);
    let arguments = params.get("arguments").unwrap_or(&Value::Null);
    match design::call(shared, name, arguments) {
        ToolOutcome::Refused(refusal) => {
            (StatusCode::FORBIDDEN, Json(refusal.body())).into_response()
        }
        ToolOutcome::Answered { content, is_error } => {
            rpc_result(id, json!({"content": content, "isError": is_error}))
        }
    }
}
