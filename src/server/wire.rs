//! server::wire: the HTTP JSON bodies of the gateway (wire types, not domain types), converted
//! at the boundary. A body is parsed by [`parse_body`], which first refuses a key sent twice
//! anywhere in it (`duplicates`).

mod duplicates;

use serde::{Deserialize, Serialize};

pub use duplicates::{first_duplicate_key, DuplicateKey};

use crate::authz::Decision;
use crate::facts::session::{check_session_text, SessionTextError};
use crate::facts::{AgentKind, Mode, Session};

/// Parses a JSON body into `T`, refusing a duplicated key (C5) before the typed parse, whose
/// errors name the body.
pub fn parse_body<T: serde::de::DeserializeOwned>(
    body: &[u8],
) -> Result<T, super::error::ApiError> {
    if let Some(DuplicateKey { key, path }) = first_duplicate_key(body) {
        return Err(super::error::ApiError::DuplicateKey { key, path });
    }
    serde_json::from_slice(body).map_err(|error| super::error::ApiError::BadBody(error.to_string()))
}

/// The session facts that come with every call.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// Plans and per-session bookkeeping are keyed by this id.
    pub id: String,
    pub agent: AgentKind,
    #[serde(default)]
    pub agent_id: Option<String>,
    pub mode: Mode,
    pub interactive: bool,
    #[serde(default)]
    pub permission_hook: bool,
    #[serde(default)]
    pub bypass_available: bool,
}

/// The session-id prefixes askgate gives its own sessions (MCP): an HTTP caller may not name
/// a session so, which would share an MCP session's plans (N2).
pub const RESERVED_SESSION_PREFIXES: [&str; 3] = ["mcp:", "mcp-principal:", "mcp-attested:"];

impl SessionBody {
    /// The checks an HTTP caller's session ids pass: printable and bounded
    /// (`check_session_text`), and `session.id` not in askgate's own namespace.
    pub fn checked(&self) -> Result<(), SessionTextError> {
        check_session_text("session.id", &self.id, true)?;
        if let Some(agent_id) = &self.agent_id {
            check_session_text("session.agent_id", agent_id, false)?;
        }
        match RESERVED_SESSION_PREFIXES
            .iter()
            .find(|prefix| self.id.starts_with(**prefix))
        {
            Some(prefix) => Err(SessionTextError::Reserved {
                field: "session.id",
                prefix,
            }),
            None => Ok(()),
        }
    }

    pub fn facts(&self) -> Session {
        Session {
            agent: self.agent,
            agent_id: self.agent_id.clone(),
            mode: self.mode,
            interactive: self.interactive,
            permission_hook: self.permission_hook,
            bypass_available: self.bypass_available,
            ..Session::default()
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallBody {
    pub session: SessionBody,
    /// The raw tool input: `{operation, arguments}` for Design, `{method, ...}` for Projects.
    pub input: serde_json::Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthorizeBody {
    pub session: SessionBody,
    /// `ClaudeDesign` or `Projects`.
    pub tool: String,
    pub input: serde_json::Value,
    /// Include the exact Cedar requests evaluated.
    #[serde(default)]
    pub explain: bool,
}

/// A decision as the gateway returns it.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionBody<'a> {
    pub decision_id: &'a str,
    pub decision: &'a str,
    pub reason: &'a str,
    pub policies: &'a [String],
    pub errors: &'a [String],
    pub snapshot: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<&'a crate::authz::decision::Requests>,
    /// The OAuth scopes a token would need to be spared this deny (`@step_up`).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub step_up: &'a [String],
}

impl<'a> DecisionBody<'a> {
    pub fn new(decision_id: &'a str, decision: &'a Decision) -> Self {
        Self {
            decision_id,
            decision: decision.decision.as_str(),
            reason: &decision.reason,
            policies: &decision.policies,
            errors: &decision.errors,
            snapshot: &decision.snapshot,
            approval: None,
            result: None,
            requests: None,
            step_up: &decision.step_up,
        }
    }
}
