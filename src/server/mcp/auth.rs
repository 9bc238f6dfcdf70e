//! server::mcp::auth: the layer in front of `/mcp` — every request carries an agent's bearer
//! token (a missing or unknown token is 401 with `WWW-Authenticate`; an approver's is 403),
//! a new session is refused once the session cap is reached, and the authenticated caller
//! travels to the MCP handler in the request's extensions.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::json;

use crate::server::caller::{Caller, Role};
use crate::server::gateway::AppState;

/// The authenticated caller of one `/mcp` request, put there by [`require_agent`].
#[derive(Debug, Clone)]
pub struct McpCaller(pub Caller);

/// What the layer needs: the callers and the open sessions.
#[derive(Clone)]
pub struct Gate {
    pub state: AppState,
    pub sessions: Arc<LocalSessionManager>,
}

/// The header a client echoes once `initialize` gave it a session.
pub const SESSION_HEADER: &str = "mcp-session-id";

pub async fn require_agent(State(gate): State<Gate>, mut request: Request, next: Next) -> Response {
    let caller = match gate.state.inner().callers.authenticate(request.headers()) {
        Ok(caller) => caller,
        Err(error) => return unauthorized(&error.to_string()),
    };
    if caller.role != Role::Agent {
        return refused(
            StatusCode::FORBIDDEN,
            "an approver token cannot use the MCP tools: connect with an agent token",
        );
    }
    if opens_session(&request) && gate.full().await {
        return refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many open MCP sessions: try again when one closes",
        );
    }
    request.extensions_mut().insert(McpCaller(caller));
    next.run(request).await
}

impl Gate {
    async fn full(&self) -> bool {
        let open = self.sessions.sessions.read().await.len();
        open >= self.state.inner().mcp.max_sessions
    }
}

/// A POST without a session header is an `initialize` (or a stateless request).
fn opens_session(request: &Request) -> bool {
    request.method() == axum::http::Method::POST && !request.headers().contains_key(SESSION_HEADER)
}

/// 401 with the bearer challenge (RFC 6750). askgate publishes no OAuth metadata: its tokens
/// come from its configuration, so the challenge names no `resource_metadata`.
fn unauthorized(message: &str) -> Response {
    let mut response = refused(StatusCode::UNAUTHORIZED, message);
    let challenge = format!(
        "Bearer realm=\"askgate\", error=\"invalid_token\", error_description=\"{}\"",
        message.replace('"', "'")
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    } else {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"askgate\""),
        );
    }
    response
}

fn refused(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message}}))).into_response()
}
