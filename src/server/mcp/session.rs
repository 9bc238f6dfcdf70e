//! server::mcp::session: who an MCP request is from and the session facts it is decided with.
//! The principal comes from the bearer token; `agent`, `mode`, `interactive` and
//! `permission_hook` from that caller's configuration (`callers[].session`), beside what the
//! caller may claim (`Caller::stating`). Plans are kept
//! per (principal, MCP session): the session id is the `Mcp-Session-Id` of a 2025-11-25
//! session that this principal opened (the auth layer refuses any other, N3); a 2026-07-28
//! request has no protocol session and is never filed under a header's id: its plans are the
//! principal's. Nothing here comes from the tool arguments or `_meta`, which the model or the
//! client could shape (`_meta` tells which revision rmcp served the request under, and its
//! `claudecode/toolUseId` only names which of this principal's hook attestations to take:
//! the attested facts come from the hook, [`McpSession::attest`]).

use axum::http::request::Parts;
use rmcp::model::RequestMetaObject;

use super::auth::{McpCaller, SESSION_HEADER};
use crate::facts::Session;
use crate::server::caller::Caller;
use crate::state::SessionKey;
use crate::store::attestations::Found;

pub struct McpSession {
    pub caller: Caller,
    /// Whose session the call's plans are kept under.
    pub key: SessionKey,
    pub facts: Session,
    /// `scheme://host` the client reached this service at (or the configured public URL).
    pub base_url: String,
}

impl McpSession {
    /// `None` when the request did not pass the auth layer (it always does on `/mcp`).
    pub fn of(parts: &Parts, meta: &RequestMetaObject, public_url: Option<&str>) -> Option<Self> {
        let McpCaller(caller) = parts.extensions.get::<McpCaller>()?.clone();
        let stateless = meta.protocol_version().is_some();
        let key = SessionKey::new(
            caller.principal.clone(),
            session_id(parts, &caller, stateless),
        );
        let defaults = caller.defaults;
        let facts = caller.stating(Session {
            agent: defaults.agent,
            agent_id: None,
            mode: defaults.mode,
            interactive: defaults.interactive,
            permission_hook: defaults.permission_hook,
            bypass_available: defaults.bypass_available
                || defaults.mode == crate::facts::Mode::BypassPermissions,
            ..Session::default()
        });
        let base_url = public_url.map_or_else(|| request_base(parts), str::to_string);
        Some(Self {
            caller,
            key,
            facts,
            base_url,
        })
    }
}

/// The MCP session id of a request in a 2025-11-25 session (the auth layer has checked it is
/// the caller's own); a stateless 2026-07-28 request files its plans under the principal.
fn session_id(parts: &Parts, caller: &Caller, stateless: bool) -> String {
    let header = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|id| !id.is_empty() && id.len() <= super::owners::SESSION_ID_BYTES);
    match header {
        Some(id) if !stateless => format!("mcp:{id}"),
        _ => format!("mcp-principal:{}", caller.principal),
    }
}

impl McpSession {
    /// Decides the call with what the client's hook attested for it, if it did: the attested
    /// agent, permission mode and session (plans are kept per real client session, under an
    /// id in askgate's own namespace, `mcp-attested:`); otherwise the configured facts stand
    /// and the call is `unattested`, `mismatched` or `foreign` (`store::attestations::Found`).
    /// `required` is `mcp.require_attestation`, which the policies read.
    pub fn attest(&mut self, found: Found, required: bool) {
        self.facts.attestation_required = required;
        self.facts.attestation = found.fact();
        if let Found::Matching(attestation) = found {
            self.key = SessionKey::new(
                self.caller.principal.clone(),
                format!("{ATTESTED_PREFIX}{}", attestation.session_id),
            );
            self.facts = attestation.facts(&self.facts);
        }
    }
}

/// The session-id namespace of attested client sessions (reserved for the HTTP API too).
pub const ATTESTED_PREFIX: &str = "mcp-attested:";

fn request_base(parts: &Parts) -> String {
    let host = parts
        .headers
        .get(axum::http::header::HOST)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}
