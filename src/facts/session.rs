//! facts::session: the caller-supplied session facts (who is calling, in which permission
//! mode, whether a prompt can reach a human) and their Cedar form.

use serde::{Deserialize, Serialize};

use crate::authz::context::SessionContext;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    #[default]
    Main,
    Subagent,
}

/// Permission modes (client-facts §11); `manual` is accepted for `default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Mode {
    #[default]
    #[serde(rename = "default", alias = "manual")]
    Default,
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    #[serde(rename = "plan")]
    Plan,
    #[serde(rename = "auto")]
    Auto,
    #[serde(rename = "dontAsk")]
    DontAsk,
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::Auto => "auto",
            Self::DontAsk => "dontAsk",
            Self::BypassPermissions => "bypassPermissions",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Session {
    pub agent: AgentKind,
    pub agent_id: Option<String>,
    pub mode: Mode,
    pub interactive: bool,
    pub permission_hook: bool,
    pub bypass_available: bool,
}

impl Default for Session {
    fn default() -> Self {
        Self {
            agent: AgentKind::Main,
            agent_id: None,
            mode: Mode::Default,
            interactive: true,
            permission_hook: false,
            bypass_available: false,
        }
    }
}

impl Session {
    /// The principal's entity id: the agent id, or `main` / `subagent` when none is given.
    pub fn principal_id(&self) -> String {
        match (&self.agent_id, self.agent) {
            (Some(id), _) if !id.is_empty() => id.clone(),
            (_, AgentKind::Main) => "main".to_string(),
            (_, AgentKind::Subagent) => "subagent".to_string(),
        }
    }

    pub fn to_context(&self) -> SessionContext {
        SessionContext {
            agent: match self.agent {
                AgentKind::Main => "main".to_string(),
                AgentKind::Subagent => "subagent".to_string(),
            },
            agent_id: self.agent_id.clone().unwrap_or_default(),
            mode: self.mode.as_str().to_string(),
            interactive: self.interactive,
            permission_hook: self.permission_hook,
            bypass_available: self.bypass_available,
        }
    }
}
