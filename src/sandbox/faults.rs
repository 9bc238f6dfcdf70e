//! sandbox::faults: faults scripted through `POST /_sandbox/faults` for the next N matching
//! requests, and the middleware that plays them. It must not touch Design state except to
//! expire the MCP session a `session_expired` fault names.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::connection::ConnectionHandle;
use super::mcp::{MCP_PATH, SESSION_HEADER};
use super::projects::ProjectsFault;
use super::SharedState;

/// Largest MCP body read to find the tool name a fault filters on.
const TOOL_FILTER_BODY_LIMIT: usize = 64 * 1024 * 1024;
const DEFAULT_OVERSIZED_BYTES: usize = 3_000_000;
const DEFAULT_DELAY_MS: u64 = 100;

/// The wire shape of `POST /_sandbox/faults`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRequest {
    pub fault: String,
    pub count: Option<u32>,
    pub path_prefix: Option<String>,
    pub tool: Option<String>,
    pub ms: Option<u64>,
    pub bytes: Option<usize>,
    pub status: Option<u16>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    SessionExpired,
    TokenExpired,
    EventStream,
    Delay(Duration),
    Oversized(usize),
    Status(StatusCode),
    Drop,
}

#[derive(Debug, Clone)]
struct Fault {
    kind: FaultKind,
    remaining: u32,
    path_prefix: Option<String>,
    tool: Option<String>,
}

/// Where a parsed request goes: a generic fault here, or a Projects fault over there.
pub enum ParsedFault {
    Generic(FaultKind),
    Projects(ProjectsFault),
}

/// Reads the `fault` kind and its parameters; errors name the field.
pub fn parse_kind(request: &FaultRequest) -> Result<ParsedFault, String> {
    let kind = match request.fault.as_str() {
        "session_expired" => FaultKind::SessionExpired,
        "token_expired" => FaultKind::TokenExpired,
        "sse" => FaultKind::EventStream,
        "delay" => FaultKind::Delay(Duration::from_millis(
            request.ms.unwrap_or(DEFAULT_DELAY_MS),
        )),
        "oversized" => FaultKind::Oversized(request.bytes.unwrap_or(DEFAULT_OVERSIZED_BYTES)),
        "drop" => FaultKind::Drop,
        "status" => {
            let code = request.status.unwrap_or(503);
            match StatusCode::from_u16(code) {
                Ok(status) if (200..=599).contains(&code) => FaultKind::Status(status),
                _ => return Err(format!("`status` must be 200 to 599, got `{code}`")),
            }
        }
        "search_forbidden" => return Ok(ParsedFault::Projects(ProjectsFault::SearchForbidden)),
        "raw_size_mismatch" => return Ok(ParsedFault::Projects(ProjectsFault::RawSizeMismatch)),
        other => return Err(format!("unknown `fault` kind `{other}`")),
    };
    Ok(ParsedFault::Generic(kind))
}

#[derive(Debug, Default)]
pub struct FaultBook {
    faults: Mutex<Vec<Fault>>,
}

impl FaultBook {
    fn lock(&self) -> MutexGuard<'_, Vec<Fault>> {
        self.faults.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn add(&self, kind: FaultKind, request: &FaultRequest) {
        self.lock().push(Fault {
            kind,
            remaining: request.count.unwrap_or(1),
            path_prefix: request.path_prefix.clone(),
            tool: request.tool.clone(),
        });
    }

    pub fn clear(&self) {
        self.lock().clear();
    }

    fn wants_tool_name(&self) -> bool {
        self.lock().iter().any(|fault| fault.tool.is_some())
    }

    fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Takes one use of the first fault matching this request, oldest first.
    fn take(&self, path: &str, has_session: bool, tool: Option<&str>) -> Option<FaultKind> {
        let mut faults = self.lock();
        let index = faults.iter().position(|fault| {
            let path_matches = fault
                .path_prefix
                .as_deref()
                .is_none_or(|prefix| path.starts_with(prefix));
            let tool_matches = fault
                .tool
                .as_deref()
                .is_none_or(|wanted| tool == Some(wanted));
            let applicable = fault.kind != FaultKind::SessionExpired || has_session;
            path_matches && tool_matches && applicable
        })?;
        let fault = faults.get_mut(index)?;
        fault.remaining = fault.remaining.saturating_sub(1);
        let kind = fault.kind.clone();
        if fault.remaining == 0 {
            faults.remove(index);
        }
        Some(kind)
    }
}

/// The name of the tool a JSON-RPC `tools/call` body calls.
fn called_tool(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    if value.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    Some(value.get("params")?.get("name")?.as_str()?.to_owned())
}

/// Middleware: plays the first matching fault, or passes the request on.
pub async fn apply(State(shared): State<SharedState>, request: Request, next: Next) -> Response {
    if shared.faults.is_empty() {
        return next.run(request).await;
    }
    let path = request.uri().path().to_owned();
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .filter(|_| path == MCP_PATH);
    let (request, tool) = if path == MCP_PATH && shared.faults.wants_tool_name() {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, TOOL_FILTER_BODY_LIMIT).await else {
            return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large").into_response();
        };
        let tool = called_tool(&bytes);
        (Request::from_parts(parts, Body::from(bytes)), tool)
    } else {
        (request, None)
    };
    let Some(kind) = shared
        .faults
        .take(&path, session.is_some(), tool.as_deref())
    else {
        return next.run(request).await;
    };
    match kind {
        FaultKind::SessionExpired => {
            if let Some(session) = &session {
                shared.sessions.expire(session);
            }
            let body = json!({"error": "session_not_found"});
            (StatusCode::NOT_FOUND, Json(body)).into_response()
        }
        FaultKind::TokenExpired => super::auth::invalid_token(),
        FaultKind::EventStream => event_stream(),
        FaultKind::Delay(duration) => {
            tokio::time::sleep(duration).await;
            next.run(request).await
        }
        FaultKind::Oversized(bytes) => oversized(bytes),
        FaultKind::Status(status) => {
            let body = json!({"error": "injected_fault", "status": status.as_u16()});
            (status, Json(body)).into_response()
        }
        FaultKind::Drop => drop_connection(&request),
    }
}

fn event_stream() -> Response {
    let data = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": false}});
    let body = format!("event: message\ndata: {data}\n\n");
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

/// A 200 JSON-RPC result padded to exactly `bytes` bytes (or its bare frame when smaller).
pub fn oversized(bytes: usize) -> Response {
    let frame = |text: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}], "isError": false}})
            .to_string()
    };
    let overhead = frame("").len();
    let body = frame(&"x".repeat(bytes.saturating_sub(overhead)));
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Kills the connection so no response reaches the client. Without connection info (the
/// router served by someone else) the best available is a body that fails after the head.
fn drop_connection(request: &Request) -> Response {
    if let Some(ConnectInfo(handle)) = request.extensions().get::<ConnectInfo<ConnectionHandle>>() {
        handle.kill();
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let failing = futures_util::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::other("connection dropped by fault"))
    });
    Response::new(Body::from_stream(failing))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(fault: &str) -> FaultRequest {
        serde_json::from_value(json!({"fault": fault, "count": 2, "tool": "write_files"})).unwrap()
    }

    #[test]
    fn faults_match_by_tool_and_run_out_after_count() {
        let book = FaultBook::default();
        let spec = request("token_expired");
        let ParsedFault::Generic(kind) = parse_kind(&spec).unwrap() else {
            panic!("generic");
        };
        book.add(kind, &spec);
        assert_eq!(book.take(MCP_PATH, false, Some("read_file")), None);
        assert_eq!(
            book.take(MCP_PATH, false, Some("write_files")),
            Some(FaultKind::TokenExpired)
        );
        assert_eq!(
            book.take(MCP_PATH, false, Some("write_files")),
            Some(FaultKind::TokenExpired)
        );
        assert_eq!(book.take(MCP_PATH, false, Some("write_files")), None);
        assert!(book.is_empty());
    }

    #[test]
    fn session_expired_needs_a_session_and_bad_kinds_are_named() {
        let book = FaultBook::default();
        let spec: FaultRequest =
            serde_json::from_value(json!({"fault": "session_expired"})).unwrap();
        book.add(FaultKind::SessionExpired, &spec);
        assert_eq!(book.take(MCP_PATH, false, None), None);
        assert_eq!(
            book.take(MCP_PATH, true, None),
            Some(FaultKind::SessionExpired)
        );
        let error = parse_kind(&request("melt")).err().unwrap();
        assert_eq!(error, "unknown `fault` kind `melt`");
        let status: FaultRequest =
            serde_json::from_value(json!({"fault": "status", "status": 600})).unwrap();
        assert!(parse_kind(&status).is_err());
    }

    #[test]
    fn called_tool_reads_only_tools_call() {
        let call = br#"{"method":"tools/call","params":{"name":"write_files"}}"#;
        assert_eq!(called_tool(call).as_deref(), Some("write_files"));
        assert_eq!(called_tool(br#"{"method":"tools/list"}"#), None);
        assert_eq!(called_tool(b"not json"), None);
    }
}
