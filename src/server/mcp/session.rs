//! server::mcp::session: who an MCP request is from and the session facts it is decided with.
//! The principal comes from the bearer token; `agent`, `mode`, `interactive` and
//! `permission_hook` from that caller's configuration (`callers[].session`); the askgate
//! session id is the MCP session id, so plans are kept per MCP session. Nothing here comes
//! from the tool arguments or `_meta`, which the model or the client could shape.

use axum::http::request::Parts;
use rmcp::service::RequestContext;
use rmcp::RoleServer;

use super::auth::{McpCaller, SESSION_HEADER};
use crate::server::caller::Caller;
use crate::server::wire::SessionBody;

/// The longest session id taken from the header, in bytes (rmcp's own are UUIDs).
const SESSION_ID_BYTES: usize = 128;

pub struct McpSession {
    pub caller: Caller,
    pub facts: SessionBody,
    /// `scheme://host` the client reached this service at (or the configured public URL).
    pub base_url: String,
}

impl McpSession {
    /// `None` when the request did not pass the auth layer (it always does on `/mcp`).
    pub fn of(context: &RequestContext<RoleServer>, public_url: Option<&str>) -> Option<Self> {
        let parts = context.extensions.get::<Parts>()?;
        let McpCaller(caller) = parts.extensions.get::<McpCaller>()?.clone();
        let id = session_id(parts, &caller);
        let defaults = caller.defaults;
        let facts = SessionBody {
            id,
            agent: defaults.agent,
            agent_id: None,
            mode: defaults.mode,
            interactive: defaults.interactive,
            permission_hook: defaults.permission_hook,
            bypass_available: false,
        };
        let base_url = public_url.map_or_else(|| request_base(parts), str::to_string);
        Some(Self {
            caller,
            facts,
            base_url,
        })
    }
}

/// The MCP session id; a stateless (2026-07-28) request has none, and its plans are then kept
/// per principal.
fn session_id(parts: &Parts, caller: &Caller) -> String {
    parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|id| !id.is_empty() && id.len() <= SESSION_ID_BYTES)
        .map_or_else(
            || format!("mcp-principal:{}", caller.principal),
            |id| format!("mcp:{id}"),
        )
}

fn request_base(parts: &Parts) -> String {
    let host = parts
        .headers
        .get(axum::http::header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}
