//! server::caller: who is calling — a bearer token from the configuration, mapped to a role
//! and a principal. Roles are exclusive (SPEC §11): an agent token can never approve, consent,
//! revoke or reload, and an approver token can never ask (so nobody approves their own call).
//! Also the random tokens askgate gives out itself (console sessions, CSRF, link keys).

use std::collections::HashMap;

use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};

use super::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Agent,
    Approver,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub role: Role,
    pub principal: String,
    /// The session facts of this caller's MCP sessions (the caller's configuration, never the
    /// model's).
    pub defaults: SessionDefaults,
}

/// Per-caller session facts from the configuration file (`callers[].session`), used where the
/// client does not send them itself (MCP). Missing keys take the `Session` defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionDefaults {
    pub agent: crate::facts::AgentKind,
    pub mode: crate::facts::Mode,
    pub interactive: bool,
    pub permission_hook: bool,
    /// bypassPermissions may be entered by this caller's client. An MCP call's hook
    /// attestation that claims bypass mode counts only when this is set (or `mode` is
    /// bypassPermissions): the agent token lives in the client's environment, so whatever can
    /// read it can post a hook input (`gates.mcp-attested-bypass-unavailable`).
    pub bypass_available: bool,
}

impl Default for SessionDefaults {
    fn default() -> Self {
        let session = crate::facts::Session::default();
        Self {
            agent: session.agent,
            mode: session.mode,
            interactive: session.interactive,
            permission_hook: session.permission_hook,
            bypass_available: session.bypass_available,
        }
    }
}

/// The request's `Authorization: Bearer` token.
fn bearer(headers: &HeaderMap) -> Result<&str, ApiError> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .ok_or(ApiError::Unauthenticated("missing bearer token"))?;
    let token = header
        .strip_prefix("Bearer ")
        .ok_or(ApiError::Unauthenticated(
            "the authorization header is not a bearer token",
        ))?;
    Ok(token.trim())
}

/// The request carries exactly `expected` as its bearer token (compared in constant time);
/// used by endpoints guarded by a token of their own (`metrics_token`).
pub fn require_token(headers: &HeaderMap, expected: &str) -> Result<(), ApiError> {
    use subtle::ConstantTimeEq;
    let token = bearer(headers)?;
    if bool::from(token.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::Unauthenticated("unknown bearer token"))
    }
}

/// The configured bearer tokens. Tokens are compared whole and never logged.
#[derive(Debug, Clone, Default)]
pub struct Callers {
    by_token: HashMap<String, Caller>,
}

impl Callers {
    pub fn new(entries: impl IntoIterator<Item = (String, Caller)>) -> Self {
        Self {
            by_token: entries.into_iter().collect(),
        }
    }

    /// The caller a token names (the console's sign-in form).
    pub fn by_token(&self, token: &str) -> Option<Caller> {
        self.by_token.get(token).cloned()
    }

    /// The caller behind the request's `Authorization: Bearer` header.
    pub fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, ApiError> {
        let token = bearer(headers)?;
        self.by_token
            .get(token)
            .cloned()
            .ok_or(ApiError::Unauthenticated("unknown bearer token"))
    }

    /// The caller, if its role is `role`; the other role is 403.
    pub fn require(&self, headers: &HeaderMap, role: Role) -> Result<Caller, ApiError> {
        let caller = self.authenticate(headers)?;
        match (role, caller.role) {
            (Role::Agent, Role::Agent) | (Role::Approver, Role::Approver) => Ok(caller),
            (Role::Approver, Role::Agent) => {
                Err(ApiError::Forbidden("only an approver can do this"))
            }
            (Role::Agent, Role::Approver) => Err(ApiError::Forbidden(
                "an approver token cannot ask for calls: use an agent token",
            )),
        }
    }
}

/// 256 random bits from the operating system, hex-encoded.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness means no safe token: a uuid v4 from a seeded CSPRNG is the fallback.
        return format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
