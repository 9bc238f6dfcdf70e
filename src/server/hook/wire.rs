//! server::hook::wire: Claude Code's `PreToolUse` hook input and output, as the client sends and
//! reads them (reference/agent-integration-facts.md §2). The input is the client's format, not
//! ours: fields it adds in later versions are accepted and ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The hook event this adapter answers.
pub const PRE_TOOL_USE: &str = "PreToolUse";

/// The fields of a `PreToolUse` input askgate reads.
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    pub session_id: String,
    pub hook_event_name: String,
    /// `default`, `plan`, `acceptEdits`, `auto`, `dontAsk`, `bypassPermissions`.
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// Set inside a subagent.
    #[serde(default)]
    pub agent_id: Option<String>,
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    pub tool_use_id: String,
}

/// What the hook answers: nothing (the client's own checks decide) or a decision.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
pub struct HookOutput {
    #[serde(rename = "hookSpecificOutput", skip_serializing_if = "Option::is_none")]
    pub specific: Option<PreToolUseOutput>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PreToolUseOutput {
    pub hook_event_name: &'static str,
    /// `deny` or `ask`: askgate only ever tightens.
    pub permission_decision: &'static str,
    pub permission_decision_reason: String,
}

/// The client caps hook output strings at 10,000 characters; keep well under it.
const REASON_CHARS: usize = 2_000;

impl HookOutput {
    /// No opinion: the client's own permission checks run as usual.
    pub fn no_opinion() -> Self {
        Self::default()
    }

    pub fn deny(reason: &str) -> Self {
        Self::decided("deny", reason)
    }

    pub fn ask(reason: &str) -> Self {
        Self::decided("ask", reason)
    }

    fn decided(decision: &'static str, reason: &str) -> Self {
        let reason: String = reason.chars().take(REASON_CHARS).collect();
        Self {
            specific: Some(PreToolUseOutput {
                hook_event_name: PRE_TOOL_USE,
                permission_decision: decision,
                permission_decision_reason: reason,
            }),
        }
    }
}
