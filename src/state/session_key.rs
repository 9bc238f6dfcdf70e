//! Whose session a piece of state belongs to: the caller's principal and the session id it
//! named (SPEC §11). Plans and every other per-session store are keyed by both, so the same
//! session id sent under another token names another, empty session (finding N2). It owns the
//! key only; it must not read ids from anywhere but the authenticated caller and its request.

use std::fmt;

/// A session as the service files it: (principal, session id).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct SessionKey {
    /// The authenticated caller's principal (from its token, never from the request body).
    pub principal: String,
    /// The session id the caller named (HTTP `session.id`, the hook's `session_id`, or the one
    /// askgate gives an MCP session).
    pub id: String,
}

impl SessionKey {
    pub fn new(principal: impl Into<String>, id: impl Into<String>) -> Self {
        Self {
            principal: principal.into(),
            id: id.into(),
        }
    }

    /// The session id alone, as cards, the console and the log show it beside the principal.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The principal whose state this is.
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// About how many bytes the key holds (the plan store's byte bound counts it).
    pub fn bytes(&self) -> usize {
        self.principal.len() + self.id.len()
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.principal, self.id)
    }
}
