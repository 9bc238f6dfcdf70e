//! facts::session: the session facts a caller states (which agent, in which permission mode,
//! whether a prompt can reach a human) beside who the caller is as askgate verified it and what
//! it may claim (`facts::caller`), the facts derived from them once for the policies and the
//! follow-ups alike (`bypass`, `may_record`), their Cedar form, and the limits on the session's
//! identifiers (F3).

use serde::{Deserialize, Serialize};

use super::caller::CallerFacts;
use crate::authz::context::SessionContext;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    #[default]
    Main,
    Subagent,
}

impl AgentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Subagent => "subagent",
        }
    }
}

/// Permission modes (client-facts §11); `manual` is accepted for `default`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
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
    /// Where these facts come from on an MCP call (`server::attest`); `none` elsewhere.
    pub attestation: Attestation,
    /// `mcp.require_attestation`: an MCP call needs a hook attestation (set on MCP calls only).
    pub attestation_required: bool,
    /// Who states these facts, as askgate verified it, and what it may claim. Unstated (a
    /// scenario file, `check`): a caller that may claim anything. A front door always sets it
    /// from the credential ([`CallerFacts::default`] allows nothing).
    #[serde(default = "CallerFacts::unrestricted")]
    pub caller: CallerFacts,
}

/// Whether a call's session facts were attested by the client's `PreToolUse` hook (issue 19
/// §3). The HTTP API and the hook state their facts themselves (`none`); an MCP call is
/// `attested` when it took the attestation of this very call; otherwise the caller's configured
/// facts apply and it is `unattested` (nothing filed), `mismatched` (the hook filed the id for
/// another tool, server name or input) or `foreign` (only another token's hook filed it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Attestation {
    #[default]
    None,
    Attested,
    Unattested,
    Mismatched,
    Foreign,
}

impl Attestation {
    /// Every value, as the policies compare it.
    pub const ALL: [Self; 5] = [
        Self::None,
        Self::Attested,
        Self::Unattested,
        Self::Mismatched,
        Self::Foreign,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Attested => "attested",
            Self::Unattested => "unattested",
            Self::Mismatched => "mismatched",
            Self::Foreign => "foreign",
        }
    }
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
            attestation: Attestation::None,
            attestation_required: false,
            caller: CallerFacts::default(),
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

    /// bypassPermissions, or plan mode with bypass available: safety asks become allows
    /// (client-facts §11). The one place this condition is written.
    pub fn bypass(&self) -> bool {
        self.mode == Mode::BypassPermissions || (self.mode == Mode::Plan && self.bypass_available)
    }

    /// Approvals in this session may record consent, grants and plans (SPEC §5): the main agent
    /// without a permission-request hook, with a prompt that reaches a human, not in bypass.
    pub fn may_record(&self) -> bool {
        self.agent == AgentKind::Main && !self.permission_hook && self.interactive && !self.bypass()
    }

    pub fn to_context(&self) -> SessionContext {
        SessionContext {
            agent: self.agent.as_str().to_string(),
            agent_id: self.agent_id.clone().unwrap_or_default(),
            mode: self.mode.as_str().to_string(),
            interactive: self.interactive,
            permission_hook: self.permission_hook,
            bypass_available: self.bypass_available,
            bypass: self.bypass(),
            may_record: self.may_record(),
            attestation: self.attestation.as_str().to_string(),
            attestation_required: self.attestation_required,
        }
    }
}

/// The longest `session.id` or `agent_id`, in UTF-8 bytes.
pub const SESSION_TEXT_MAX_BYTES: usize = 256;

/// Why a session identifier is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionTextError {
    #[error("`{field}` must not be empty")]
    Empty { field: &'static str },
    #[error("`{field}` is {bytes} bytes long: at most {SESSION_TEXT_MAX_BYTES} bytes")]
    TooLong { field: &'static str, bytes: usize },
    #[error(
        "`{field}` holds the unprintable character U+{code:04X}: use printable characters only"
    )]
    Unprintable { field: &'static str, code: u32 },
    #[error("`{field}` may not start with `{prefix}`: askgate names its own sessions so")]
    Reserved {
        field: &'static str,
        prefix: &'static str,
    },
}

impl SessionTextError {
    pub fn field(&self) -> &'static str {
        match self {
            Self::Empty { field }
            | Self::TooLong { field, .. }
            | Self::Unprintable { field, .. }
            | Self::Reserved { field, .. } => field,
        }
    }
}

/// Checks a session identifier: at most 256 UTF-8 bytes of printable characters (no control,
/// format or bidi characters, no line or paragraph separators). `required` refuses "".
pub fn check_session_text(
    field: &'static str,
    value: &str,
    required: bool,
) -> Result<(), SessionTextError> {
    if required && value.trim().is_empty() {
        return Err(SessionTextError::Empty { field });
    }
    if value.len() > SESSION_TEXT_MAX_BYTES {
        return Err(SessionTextError::TooLong {
            field,
            bytes: value.len(),
        });
    }
    match value.chars().find(|character| !printable(*character)) {
        Some(character) => Err(SessionTextError::Unprintable {
            field,
            code: u32::from(character),
        }),
        None => Ok(()),
    }
}

/// Not a control character (Cc), nor a format, bidi, invisible or separator code point that
/// would make two ids look alike in logs and cards.
fn printable(character: char) -> bool {
    !character.is_control()
        && !matches!(
            u32::from(character),
            0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
                | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
                | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFFB | 0xE0000..=0xE0FFF
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_text_is_bounded_and_printable() {
        assert!(check_session_text("session.id", "s1", true).is_ok());
        assert!(check_session_text("session.id", &"é".repeat(128), true).is_ok());
        let long = check_session_text("session.id", &"é".repeat(129), true).unwrap_err();
        assert_eq!(
            long.to_string(),
            "`session.id` is 258 bytes long: at most 256 bytes"
        );
        let nul = check_session_text("session.agent_id", "s\u{0}1", false).unwrap_err();
        assert_eq!(nul.field(), "session.agent_id");
        assert!(check_session_text("session.id", "s\u{202e}1", true).is_err());
        assert!(check_session_text("session.id", "a\u{2060}b", true).is_err());
        assert!(check_session_text("session.agent_id", "", false).is_ok());
        assert_eq!(
            check_session_text("session.id", "  ", true).unwrap_err(),
            SessionTextError::Empty {
                field: "session.id"
            }
        );
    }

    #[test]
    fn a_stated_session_without_a_caller_may_claim_anything_but_the_default_nothing() {
        let stated: Session = serde_json::from_str(r#"{"mode": "plan"}"#).unwrap();
        assert_eq!(stated.caller, CallerFacts::unrestricted());
        assert_eq!(Session::default().caller, CallerFacts::default());
    }

    #[test]
    fn bypass_and_may_record_are_derived_once() {
        let plan = Session {
            mode: Mode::Plan,
            bypass_available: true,
            ..Session::default()
        };
        assert!(plan.bypass() && !plan.may_record());
        let context = plan.to_context();
        assert!(context.bypass && !context.may_record);
        assert!(Session::default().may_record());
        let hook = Session {
            permission_hook: true,
            ..Session::default()
        };
        assert!(!hook.may_record() && !hook.bypass());
    }
}
