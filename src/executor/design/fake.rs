//! A small in-test claude.ai for the Design client, following the gateway's common contract: bearer
//! auth, rotating tokens, MCP sessions, scripted faults, consent and grant routes. Test-only.
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const ACCESS: &str = "sk-ant-oat01-first";
pub const REFRESH: &str = "refresh-first";

/// A scripted misbehaviour for the next MCP request it matches.
#[derive(Debug, Clone)]
pub enum Fault {
    /// 404 on the next request holding a session id, forgetting every session.
    SessionExpired,
    /// 401 `invalid_token` whatever the token.
    TokenExpired,
    Sse,
    Delay(u64),
    /// A 200 JSON body of this many bytes, without a declared length when `chunked`.
    Oversized {
        bytes: usize,
        chunked: bool,
    },
    Status(u16, Value),
}

#[derive(Default)]
pub struct FakeState {
    pub access: Mutex<String>,
    pub refresh: Mutex<String>,
    pub token_refreshes: AtomicU64,
    pub initialize: AtomicU64,
    pub tools_call: AtomicU64,
    pub consent_posts: AtomicU64,
    pub grant_gets: AtomicU64,
    pub grant_posts: AtomicU64,
    pub initialize_delay_ms: AtomicU64,
    pub grants_delay_ms: AtomicU64,
    pub sessions: Mutex<HashSet<String>>,
    pub faults: Mutex<VecDeque<Fault>>,
    pub consent: Mutex<Option<bool>>,
    /// The grants GET answer: status and raw body.
    pub grants_answer: Mutex<(u16, String)>,
}

pub struct Fake {
    pub state: Arc<FakeState>,
    pub base_url: String,
}

impl Fake {
    pub async fn start() -> Self {
        let state = Arc::new(FakeState::default());
        *state.access.lock().unwrap() = ACCESS.to_owned();
        *state.refresh.lock().unwrap() = REFRESH.to_owned();
        *state.grants_answer.lock().unwrap() = (200, json!({"grants": []}).to_string());
        let router = Router::new()
            .route("/v1/design/mcp", post(mcp))
            .route("/v1/oauth/token", post(token))
            .route(
                "/v1/design/consent",
                axum::routing::get(consent_get)
                    .post(consent_post)
                    .delete(consent_delete),
            )
            .route(
                "/v1/design/grants",
                axum::routing::get(grants_get).post(grants_post),
            )
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self {
            state,
            base_url: format!("http://{address}"),
        }
    }

    pub fn fault(&self, fault: Fault) {
        self.state.faults.lock().unwrap().push_back(fault);
    }

    pub fn count(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::SeqCst)
    }
}

fn authorized(state: &FakeState, headers: &HeaderMap) -> bool {
    let expected = format!("Bearer {}", state.access.lock().unwrap());
    headers.get("authorization").and_then(|v| v.to_str().ok()) == Some(expected.as_str())
}

fn invalid_token() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({"error": "invalid_token"})),
    )
        .into_response()
}

fn status(code: u16, body: Value) -> Response {
    (StatusCode::from_u16(code).unwrap(), Json(body)).into_response()
}

fn take_fault(state: &FakeState, holds_session: bool) -> Option<Fault> {
    let mut faults = state.faults.lock().unwrap();
    let first = faults.front()?;
    if matches!(first, Fault::SessionExpired) && !holds_session {
        return None;
    }
    faults.pop_front()
}

async fn apply(state: &FakeState, fault: Fault) -> Option<Response> {
    match fault {
        Fault::SessionExpired => {
            state.sessions.lock().unwrap().clear();
            Some(status(404, json!({"error": "session_not_found"})))
        }
        Fault::TokenExpired => Some(invalid_token()),
        Fault::Sse => {
            Some(([("content-type", "text/event-stream")], "data: {}\n\n").into_response())
        }
        Fault::Delay(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            None
        }
        Fault::Oversized { bytes, chunked } => {
            let body = format!("\"{}\"", "x".repeat(bytes.saturating_sub(2)));
            if chunked {
                let stream = futures_util::stream::iter(
                    body.into_bytes()
                        .chunks(1000)
                        .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
                        .collect::<Vec<_>>(),
                );
                let headers = [("content-type", "application/json")];
                Some((headers, axum::body::Body::from_stream(stream)).into_response())
            } else {
                Some(([("content-type", "application/json")], body).into_response())
            }
        }
        Fault::Status(code, body) => Some(status(code, body)),
    }
}

async fn mcp(State(state): State<Arc<FakeState>>, headers: HeaderMap, body: String) -> Response {
    if !authorized(&state, &headers) {
        return invalid_token();
    }
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(fault) = take_fault(&state, session.is_some()) {
        if let Some(response) = apply(&state, fault).await {
            return response;
        }
    }
    let request: Value = serde_json::from_str(&body).unwrap();
    let method = request["method"].as_str().unwrap_or_default();
    if method == "initialize" {
        state.initialize.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(
            state.initialize_delay_ms.load(Ordering::SeqCst),
        ))
        .await;
        let id = uuid::Uuid::new_v4().to_string();
        state.sessions.lock().unwrap().insert(id.clone());
        let answer =
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-03-26"}});
        return ([("mcp-session-id", id)], Json(answer)).into_response();
    }
    let Some(session) = session else {
        return status(400, json!({"error": "missing session"}));
    };
    if !state.sessions.lock().unwrap().contains(&session) {
        return status(404, json!({"error": "session_not_found"}));
    }
    match method {
        "tools/list" => Json(json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "get_project"}]}})).into_response(),
        "tools/call" => {
            state.tools_call.fetch_add(1, Ordering::SeqCst);
            tool(&headers, &request["params"]).await
        }
        other => Json(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found", "data": {"method": other}}})).into_response(),
    }
}

fn text_result(text: &str, is_error: bool) -> Response {
    Json(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}], "isError": is_error}})).into_response()
}

async fn tool(headers: &HeaderMap, params: &Value) -> Response {
    let arguments = &params["arguments"];
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    match params["name"].as_str().unwrap_or_default() {
        "echo" => text_result(&json!({"arguments": arguments, "authorization": authorization}).to_string(), false),
        "get_project" if arguments["project_id"] == "p1" => text_result(
            &json!({"id": "p1", "name": "Q3 deck", "sharing": {"scope": "invited"}, "url": "https://claude.ai/design/p/p1", "members": 2}).to_string(),
            false,
        ),
        "get_project" if arguments["project_id"] == "garbled" => text_result("not json", false),
        "get_project" => text_result("unknown project", true),
        "render_preview" => {
            let size = arguments["size"].as_u64().unwrap_or(10) as usize;
            let image = json!({"type": "image", "data": "A".repeat(size), "mimeType": "image/png"});
            let content = json!([image, {"type": "text", "text": "rendered"}]);
            Json(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": content, "isError": false}})).into_response()
        }
        "needs_consent" => status(403, json!({"error": "needs_consent", "consent": arguments["consent"]})),
        "needs_grant" => status(403, json!({"error": "needs_project_grant", "project_id": arguments["project_id"]})),
        "leak" => status(500, json!({"error": format!("bad {authorization}")})),
        "rpc_error" => Json(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad arguments", "data": {"field": "path"}}})).into_response(),
        _ => text_result("unknown tool", true),
    }
}

async fn token(State(state): State<Arc<FakeState>>, Json(body): Json<Value>) -> Response {
    let mut refresh = state.refresh.lock().unwrap();
    if body["refresh_token"] != *refresh {
        return status(400, json!({"error": "invalid_grant"}));
    }
    let number = state.token_refreshes.fetch_add(1, Ordering::SeqCst) + 1;
    let access = format!("sk-ant-oat01-refreshed-{number}");
    *state.access.lock().unwrap() = access.clone();
    *refresh = format!("refresh-{number}");
    Json(json!({"access_token": access, "refresh_token": *refresh, "expires_in": 3600}))
        .into_response()
}

async fn consent_get(State(state): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return invalid_token();
    }
    match *state.consent.lock().unwrap() {
        Some(bit) => Json(json!({"agent_design_projects": bit})).into_response(),
        None => status(500, json!({"error": "down"})),
    }
}

async fn consent_post(
    State(state): State<Arc<FakeState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorized(&state, &headers) {
        return invalid_token();
    }
    state.consent_posts.fetch_add(1, Ordering::SeqCst);
    if body["consent"] != "agent_design_projects" {
        return status(400, json!({"error": "unknown consent"}));
    }
    *state.consent.lock().unwrap() = Some(true);
    Json(json!({"ok": true})).into_response()
}

async fn consent_delete(State(state): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return invalid_token();
    }
    let mut consent = state.consent.lock().unwrap();
    if *consent != Some(true) {
        return status(404, json!({"error": "not_found"}));
    }
    *consent = Some(false);
    Json(json!({"ok": true})).into_response()
}

async fn grants_get(State(state): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    if !authorized(&state, &headers) {
        return invalid_token();
    }
    state.grant_gets.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(
        state.grants_delay_ms.load(Ordering::SeqCst),
    ))
    .await;
    let (code, body) = state.grants_answer.lock().unwrap().clone();
    if code == 0 {
        return ([("content-type", "text/event-stream")], "data: x\n\n").into_response();
    }
    (
        StatusCode::from_u16(code).unwrap(),
        [("content-type", "application/json")],
        body,
    )
        .into_response()
}

async fn grants_post(
    State(state): State<Arc<FakeState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if !authorized(&state, &headers) {
        return invalid_token();
    }
    state.grant_posts.fetch_add(1, Ordering::SeqCst);
    match body["project_id"].as_str() {
        Some("shared-1") => status(404, json!({"error": "not_grantable"})),
        Some("boom") => status(503, json!({"error": "unavailable"})),
        Some(id) => {
            Json(json!({"project_id": id, "created_at": "2026-01-01T00:00:00Z"})).into_response()
        }
        None => status(400, json!({"error": "project_id"})),
    }
}
