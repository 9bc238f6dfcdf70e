//! server::mcp::auth: the layer in front of `/mcp` — every request carries an agent's bearer
//! token (a missing or unknown token is 401 with `WWW-Authenticate`; an approver's is 403), a
//! request naming an MCP session is served only for the principal that opened it (anyone else
//! gets 404, as for an unknown session: N3), a new session is admitted under the session
//! quotas (per principal and in total) or closed at once with 503, and the authenticated
//! caller travels to the MCP handler in the request's extensions. A client that answers the
//! 401 by trying OAuth registration is told to send an agent token ([`no_registration`]). A stateless 2026-07-28
//! request opens no session, so it is never refused for a full session table.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use serde_json::json;

use super::owners::SessionOwners;
use crate::server::auth::ProtectedResource;
use crate::server::caller::{Caller, Role};
use crate::server::gateway::Pipeline;

/// The authenticated caller of one `/mcp` request, put there by [`require_agent`].
#[derive(Debug, Clone)]
pub struct McpCaller(pub Caller);

/// What the layer needs: the callers, rmcp's open sessions and who opened each.
#[derive(Clone)]
pub struct Gate {
    pub state: Pipeline,
    pub sessions: Arc<LocalSessionManager>,
    pub owners: Arc<SessionOwners>,
}

/// The header a client echoes once `initialize` gave it a session.
pub const SESSION_HEADER: &str = "mcp-session-id";

pub async fn require_agent(State(gate): State<Gate>, mut request: Request, next: Next) -> Response {
    let now = gate.state.inner().clock.now();
    let caller = match gate
        .state
        .inner()
        .callers
        .authenticate(request.headers(), now)
        .await
    {
        Ok(caller) => caller,
        Err(error) => {
            let resource = gate.state.inner().callers.resource().cloned();
            return unauthorized(&error.to_string(), resource.as_ref());
        }
    };
    if caller.role != Role::Agent {
        return refused(
            StatusCode::FORBIDDEN,
            "an approver token cannot use the MCP tools: connect with an agent token",
        );
    }
    let named = session_named(&request);
    if let Some(id) = &named {
        if !gate.owners.belongs(id, &caller.principal) {
            return not_found();
        }
    }
    let deleting = request.method() == Method::DELETE;
    let principal = caller.principal.clone();
    request.extensions_mut().insert(McpCaller(caller));
    let response = next.run(request).await;
    match named {
        Some(id) if deleting && response.status().is_success() => gate.owners.closed(&id),
        Some(_) => {}
        None => return gate.admitted(response, &principal).await,
    }
    response
}

/// The session id a request names, if any (trimmed, as rmcp reads it).
fn session_named(request: &Request) -> Option<String> {
    request
        .headers()
        .get(SESSION_HEADER)
        .map(|value| value.to_str().unwrap_or("\u{fffd}").trim().to_string())
}

impl Gate {
    /// A response that opened a session is admitted under the quotas; past them the session
    /// is closed at once and the client told why (503).
    async fn admitted(&self, response: Response, principal: &str) -> Response {
        let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
        else {
            return response;
        };
        let live: HashSet<String> = self
            .sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|id| id.to_string())
            .collect();
        match self.owners.opened(&id, principal, &live) {
            Ok(()) => response,
            Err(limit) => {
                if let Err(error) = self.sessions.close_session(&id.as_str().into()).await {
                    tracing::warn!(%error, "a session past the quota could not be closed");
                }
                refused(StatusCode::SERVICE_UNAVAILABLE, &limit.to_string())
            }
        }
    }
}

/// Where an OAuth client registers itself when the server publishes no metadata: Claude Code
/// falls back to it after a 401 and prints its answer (`claude mcp list`).
pub const REGISTER_PATH: &str = "/register";

/// askgate has no OAuth: a client that tries to register is told, in the words the client
/// shows its user, to send an agent token instead (RFC 7591's error shape), with the command
/// that does it for this server (A6: runnable as printed, the name before the URL).
pub async fn no_registration(
    axum::extract::State(public_url): axum::extract::State<Option<String>>,
    headers: axum::http::HeaderMap,
) -> Response {
    let base = public_url.or_else(|| host_base(&headers));
    let body = json!({
        "error": "invalid_client_metadata",
        "error_description": no_oauth(base.as_deref()),
    });
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// `http://<Host>` when the `Host` header is a plain host (and port): it is echoed to the
/// client, so nothing else is.
fn host_base(headers: &axum::http::HeaderMap) -> Option<String> {
    let host = headers.get(axum::http::header::HOST)?.to_str().ok()?;
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    (!host.is_empty() && host.len() <= 255 && host.chars().all(plain))
        .then(|| format!("http://{host}"))
}

/// What a client that tried OAuth is told: the header to send, and the `claude mcp add`
/// command that configures it for the server at `base`. The header is single-quoted so the
/// client keeps `${ASKGATE_AGENT_TOKEN}` and expands it from its environment when it starts:
/// no token is written into its configuration.
pub fn no_oauth(base: Option<&str>) -> String {
    let url = base.map_or_else(
        || "URL".to_string(),
        |base| format!("{base}{}", super::PATH),
    );
    format!(
        "askgate needs an agent token, not OAuth: give the MCP server the header \
         `Authorization: Bearer <agent token>` (`claude mcp add --transport http askgate {url} \
         --header 'Authorization: Bearer ${{ASKGATE_AGENT_TOKEN}}'`, or `askgate connect \
         claude-code`)"
    )
}

/// 404 for a session the caller did not open, worded as rmcp words an unknown one.
fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// 401 with the bearer challenge (RFC 6750). With `identity.issuers` configured, askgate is
/// an OAuth protected resource: the challenge names its metadata (RFC 9728
/// `resource_metadata`) and the scopes a token needs, so a client can fetch a token from the
/// IdP; without, its tokens come from its configuration and the challenge names neither.
fn unauthorized(message: &str, resource: Option<&ProtectedResource>) -> Response {
    let mut response = refused(StatusCode::UNAUTHORIZED, message);
    let mut challenge = "Bearer realm=\"askgate\"".to_string();
    if let Some(url) = resource.and_then(ProtectedResource::metadata_url) {
        challenge.push_str(&format!(", resource_metadata=\"{url}\""));
    }
    if let Some(resource) = resource.filter(|resource| !resource.scopes.is_empty()) {
        challenge.push_str(&format!(", scope=\"{}\"", resource.scopes.join(" ")));
    }
    let described = format!(
        "{challenge}, error=\"invalid_token\", error_description=\"{}\"",
        message.replace(['"', '\\'], "'")
    );
    let value = HeaderValue::from_str(&described)
        .or_else(|_| HeaderValue::from_str(&challenge))
        .unwrap_or_else(|_| HeaderValue::from_static("Bearer realm=\"askgate\""));
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, value);
    response
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`: askgate's RFC 9728 metadata when
/// `identity.issuers` is configured, else 404 (askgate takes only its configured tokens).
pub async fn protected_resource(State(state): State<Pipeline>) -> Response {
    match state.inner().callers.resource() {
        Some(resource) => Json(resource.document()).into_response(),
        None => refused(
            StatusCode::NOT_FOUND,
            "askgate is not an OAuth protected resource here: no identity.issuers are configured",
        ),
    }
}

fn refused(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message}}))).into_response()
}
