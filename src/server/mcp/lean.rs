//! server::mcp::lean: the stateless fast path of `/mcp`. A 2026-07-28 `tools/call` — no
//! session, its protocol version in the header and in its `_meta`, the SEP-2243 `Mcp-Method`
//! and `Mcp-Name` headers plain and matching its body — is served here from rmcp's own model
//! types: the body is parsed into a `ClientJsonRpcMessage`, the call goes through the same
//! [`super::call`] as on rmcp's service, and the answer is a `ServerJsonRpcMessage`. What it
//! skips is rmcp's per-request service loop (a peer, a oneshot transport, four tasks and the
//! channels between them), which made a call over MCP cost ~1.4× the same call over HTTP.
//!
//! Everything else goes to rmcp's service unchanged: every other method, a session's request,
//! an `Origin`, a `Host` this path does not match exactly as rmcp would, any header it does not
//! check (an `Mcp-Param-*`, an encoded `Mcp-Name`), a body without a length. So the fast path
//! answers only requests rmcp would answer the same way, and a request it declines costs one
//! parse more.
//!
//! A held call answers as rmcp's does: JSON when its result is the first message, SSE when a
//! progress notification comes first (the call then finishes on its own task, and a client that
//! goes away cancels it through the stream's drop).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, StreamExt};
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcRequest,
    ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::StreamableHttpService;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::handler::Front;
use super::request::{CallRequest, Notices};

/// rmcp's service for everything the fast path declines.
pub type Full = StreamableHttpService<Front, LocalSessionManager>;

/// `/mcp`: the fast path in front of rmcp's service.
#[derive(Clone)]
pub struct Entry {
    pub front: Front,
    pub full: Full,
    /// `mcp.allowed_hosts`, as rmcp's service checks them.
    pub allowed_hosts: Arc<[String]>,
    pub max_body_bytes: usize,
}

/// Messages a held call may have waiting before its result (progress, one per
/// `progress_every`); past it a notice is dropped, never waited for.
const STREAM_BOUND: usize = 16;

pub async fn entry(State(entry): State<Entry>, request: Request) -> Response {
    // Every body is read here within `http.max_body_bytes` and `http.body_read_timeout_ms`, as
    // on every other route (P3): an unfinished body gets the JSON 408 and its connection
    // closes, whichever path would serve it.
    let mut limits = crate::server::body::limits_of(&request);
    limits.max_bytes = limits.max_bytes.min(entry.max_body_bytes);
    let takes = entry.takes(request.method(), request.headers());
    let (parts, body) = request.into_parts();
    let bytes = match crate::server::body::read_within(body, limits).await {
        Ok(bytes) => bytes,
        Err(error) => return error.into_response(),
    };
    if !takes {
        return entry
            .to_full(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    match lean_call(&parts.headers, &bytes) {
        Some((id, meta, params)) => {
            let metrics = &entry.front.state.inner().metrics;
            metrics.mcp_call(crate::server::metrics::McpPath::Fast);
            entry.serve(parts, id, meta, params).await
        }
        None => {
            entry
                .to_full(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

impl Entry {
    async fn to_full(&self, request: Request) -> Response {
        match self.full.clone().oneshot(request).await {
            Ok(response) => response.map(Body::new),
            Err(never) => match never {},
        }
    }

    /// Whether the request's headers are those of a call this path serves.
    fn takes(&self, method: &Method, headers: &HeaderMap) -> bool {
        method == Method::POST
            && !headers.contains_key(super::auth::SESSION_HEADER)
            && !headers.contains_key(header::ORIGIN)
            && single(headers, "mcp-protocol-version") == Some(VERSION)
            && single(headers, "mcp-method") == Some("tools/call")
            && !headers
                .keys()
                .any(|name| name.as_str().starts_with("mcp-param-"))
            && content_length(headers).is_some_and(|length| length <= self.max_body_bytes)
            && json_content(headers)
            && accepts_json_and_sse(headers)
            && host_allowed(headers, &self.allowed_hosts)
    }

    /// Serves the call: JSON when its result comes first, SSE when a notification does.
    async fn serve(
        self,
        parts: Parts,
        id: RequestId,
        meta: RequestMetaObject,
        params: CallToolRequestParams,
    ) -> Response {
        let (sender, mut messages) = mpsc::channel(STREAM_BOUND);
        let cancelled = CancellationToken::new();
        let front = self.front;
        let resource = front.state.inner().callers.resource().cloned();
        let call_cancelled = cancelled.clone();
        let mut call = Detached::new(
            async move {
                let request = CallRequest {
                    meta: &meta,
                    parts: &parts,
                    cancelled: call_cancelled,
                    notices: Notices::Stream(&sender),
                };
                front.calls().call(params, &request).await
            },
            cancelled.clone(),
        );
        tokio::select! {
            biased;
            response = call.finish() => match step_up(&response) {
                // A deny a token with more scope would not meet: OAuth's step-up (2026-07-28).
                Some(scopes) => stepped_up(&answer(id, response), resource.as_ref(), &scopes),
                None => json(&answer(id, response)),
            },
            Some(first) = messages.recv() => {
                let (last, rest) = tokio::sync::oneshot::channel();
                if let Some(call) = call.detach() {
                    tokio::spawn(async move {
                        let response = call.await;
                        let _ = last.send(answer(id, response));
                    });
                }
                stream(first, messages, rest, cancelled)
            }
        }
    }
}

/// A call that outlives its request: when the request is dropped before the call finished
/// (the client went away), the call is cancelled and finishes on a task of its own, as a call
/// on rmcp's service does — so a held call withdraws its approval and logs it.
struct Detached<F: Future + Send + 'static> {
    call: Option<Pin<Box<F>>>,
    cancelled: CancellationToken,
}

impl<F: Future + Send + 'static> Detached<F> {
    fn new(call: F, cancelled: CancellationToken) -> Self {
        Self {
            call: Some(Box::pin(call)),
            cancelled,
        }
    }

    /// Runs the call to its end (pending forever once it has been taken away).
    async fn finish(&mut self) -> F::Output {
        let Some(call) = self.call.as_mut() else {
            return std::future::pending().await;
        };
        let output = call.await;
        self.call = None;
        output
    }

    /// The call, to be finished elsewhere.
    fn detach(&mut self) -> Option<Pin<Box<F>>> {
        self.call.take()
    }
}

impl<F: Future + Send + 'static> Drop for Detached<F> {
    fn drop(&mut self) {
        let Some(call) = self.call.take() else {
            return;
        };
        self.cancelled.cancel();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                call.await;
            });
        }
    }
}

/// The protocol revision this path serves.
const VERSION: &str = "2026-07-28";

/// The call's id, `_meta` and params, when the body is one `tools/call` this path serves:
/// its `_meta` names this revision (as the header does) and carries every key the revision
/// requires, and the `Mcp-Name` header is the tool it names.
fn lean_call(
    headers: &HeaderMap,
    body: &[u8],
) -> Option<(RequestId, RequestMetaObject, CallToolRequestParams)> {
    let message = serde_json::from_slice::<ClientJsonRpcMessage>(body).ok()?;
    let ClientJsonRpcMessage::Request(JsonRpcRequest {
        id, mut request, ..
    }) = message
    else {
        return None;
    };
    let revision = ProtocolVersion::V_2026_07_28;
    let meta = request.get_meta();
    if meta.protocol_version() != Some(revision.clone())
        || !meta.missing_required_keys(&revision).is_empty()
    {
        return None;
    }
    let meta = std::mem::take(request.get_meta_mut());
    let ClientRequest::CallToolRequest(call) = request else {
        return None;
    };
    if single(headers, "mcp-name") != Some(call.params.name.as_ref()) {
        return None;
    }
    Some((id, meta, call.params))
}

/// The scopes a denied call's result asks for (`@step_up`), if any.
fn step_up(response: &rmcp::model::CallToolResponse) -> Option<Vec<String>> {
    match response {
        rmcp::model::CallToolResponse::Complete(result) => super::outcome::step_up_of(result),
        _ => None,
    }
}

/// 403 with OAuth's `insufficient_scope` challenge; the body is the denial as the client would
/// have read it, for a client that does not step up.
fn stepped_up(
    message: &ServerJsonRpcMessage,
    resource: Option<&crate::server::auth::ProtectedResource>,
    scopes: &[String],
) -> Response {
    let mut response = json(message);
    *response.status_mut() = StatusCode::FORBIDDEN;
    let challenge = crate::server::auth::resource::insufficient_scope(resource, scopes);
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn answer(id: RequestId, response: rmcp::model::CallToolResponse) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::response(ServerResult::from(response), id)
}

fn json(message: &ServerJsonRpcMessage) -> Response {
    match serde_json::to_vec(message) {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
        Err(error) => {
            let message =
                format!("Internal Server Error: the answer could not be written ({error})");
            (StatusCode::INTERNAL_SERVER_ERROR, message).into_response()
        }
    }
}

/// The held call's messages as SSE: the first notification, those after it, then the result.
/// Dropping the stream (the client went away) cancels the call, which withdraws its approval.
fn stream(
    first: ServerJsonRpcMessage,
    rest: mpsc::Receiver<ServerJsonRpcMessage>,
    last: tokio::sync::oneshot::Receiver<ServerJsonRpcMessage>,
    cancelled: CancellationToken,
) -> Response {
    let guard = cancelled.drop_guard();
    let notices = stream::unfold(rest, |mut rest| async move {
        rest.recv().await.map(|message| (message, rest))
    });
    let result = stream::once(last).filter_map(|last| async move { last.ok() });
    let messages = stream::once(async move { first })
        .chain(notices)
        .chain(result)
        .map(move |message| {
            let _alive = &guard;
            Ok::<_, Infallible>(event(&message))
        });
    Sse::new(messages)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn event(message: &ServerJsonRpcMessage) -> Event {
    Event::default().json_data(message).unwrap_or_else(|error| {
        // INVARIANT: rmcp's messages serialize; were one not to, the stream says so.
        tracing::error!(%error, "an MCP message could not be written");
        Event::default().comment(format!("unwritable message: {error}"))
    })
}

/// The one value of a header, when it has exactly one and it is text.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

fn content_length(headers: &HeaderMap) -> Option<usize> {
    single(headers, "content-length")?.parse().ok()
}

fn json_content(headers: &HeaderMap) -> bool {
    single(headers, "content-type").is_some_and(|value| {
        let essence = value.split(';').next().unwrap_or("");
        essence.trim().eq_ignore_ascii_case("application/json")
    })
}

/// The `Accept` header names both media types plainly (any weight or wildcard: rmcp decides).
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let Some(accept) = single(headers, "accept") else {
        return false;
    };
    let mut json = false;
    let mut sse = false;
    for range in accept.split(',') {
        let range = range.trim();
        if range.contains(';') || range.contains('"') {
            return false;
        }
        json |= range.eq_ignore_ascii_case("application/json");
        sse |= range.eq_ignore_ascii_case("text/event-stream");
    }
    json && sse
}

/// The `Host` is one that rmcp's DNS-rebinding check admits: a plain name (no brackets) equal
/// to an allowed entry, on the entry's port when it names one.
fn host_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(host) = single(headers, "host") else {
        return false;
    };
    let Ok(host) = host.parse::<axum::http::uri::Authority>() else {
        return false;
    };
    if host.host().starts_with('[') {
        return false;
    }
    if allowed.is_empty() {
        return true;
    }
    allowed.iter().any(|entry| {
        entry
            .trim()
            .parse::<axum::http::uri::Authority>()
            .is_ok_and(|entry| {
                !entry.host().starts_with('[')
                    && entry.host().eq_ignore_ascii_case(host.host())
                    && entry
                        .port_u16()
                        .is_none_or(|port| host.port_u16() == Some(port))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                *name,
                HeaderValue::from_str(value).unwrap_or_else(|_| unreachable!()),
            );
        }
        headers
    }

    #[test]
    fn the_host_check_admits_only_what_rmcp_admits() {
        let allowed: Vec<String> = vec!["localhost".into(), "127.0.0.1:8080".into()];
        let host = |value| host_allowed(&headers(&[("host", value)]), &allowed);
        assert!(host("localhost:1234"));
        assert!(host("LOCALHOST"));
        assert!(host("127.0.0.1:8080"));
        assert!(!host("127.0.0.1:8081"));
        assert!(!host("127.0.0.1"));
        assert!(!host("evil.example"));
        assert!(!host("[::1]:8080"));
        assert!(!host_allowed(&HeaderMap::new(), &allowed));
        let two = headers(&[("host", "localhost"), ("host", "localhost")]);
        assert!(!host_allowed(&two, &allowed));
    }

    #[test]
    fn accept_must_name_both_types_plainly() {
        let accept = |value| accepts_json_and_sse(&headers(&[("accept", value)]));
        assert!(accept("application/json, text/event-stream"));
        assert!(!accept("application/json"));
        assert!(!accept("application/json;q=0, text/event-stream"));
        assert!(!accept("*/*"));
    }

    #[test]
    fn only_a_2026_07_28_call_naming_its_tool_is_served_here() {
        let plain = headers(&[("mcp-name", "ClaudeDesign")]);
        let body = |version: &str, name: &str| {
            serde_json::json!({
                "jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": name, "arguments": {"operation": "list_projects"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": version,
                        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                        "io.modelcontextprotocol/clientCapabilities": {}
                    }}
            })
            .to_string()
        };
        let served = lean_call(&plain, body("2026-07-28", "ClaudeDesign").as_bytes());
        let (id, meta, params) = served.unwrap_or_else(|| unreachable!("a plain call is served"));
        assert_eq!(id, RequestId::Number(7));
        assert_eq!(meta.protocol_version(), Some(ProtocolVersion::V_2026_07_28));
        assert_eq!(params.name, "ClaudeDesign");
        assert!(lean_call(&plain, body("2026-07-28", "Projects").as_bytes()).is_none());
        assert!(lean_call(&plain, body("2025-11-25", "ClaudeDesign").as_bytes()).is_none());
        assert!(lean_call(&plain, b"{not json").is_none());
        let listing = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
        assert!(lean_call(&plain, listing.as_bytes()).is_none());
    }
}
