//! store::approvals::view: what an approval holds and shows — the held call, the statuses of
//! its life, the view approvers and the asking agent see, and the bytes a held call costs.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::authz::CallSummary;
use crate::authz::{Approval, ApprovalKind};
use crate::call::{DesignCall, ProjectsCall, WriteSource};
use crate::facts::Session;

/// The call an approval will run.
/// Kept as data by a shared store (tagged by service).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "service", content = "call", rename_all = "snake_case")]
pub enum ApprovedCall {
    Design(DesignCall),
    Projects(ProjectsCall),
}

impl ApprovedCall {
    /// About what the held call costs in memory: its arguments as JSON text (file bodies are
    /// almost all of it). Counted against `approvals.max_held_bytes`.
    pub fn held_bytes(&self) -> u64 {
        match self {
            Self::Design(call) => {
                let operation = len(&call.operation);
                call.arguments
                    .iter()
                    .map(|(key, value)| len(key) + json_bytes(value))
                    .fold(operation, u64::saturating_add)
            }
            Self::Projects(call) => {
                let source = match &call.source {
                    Some(WriteSource::Content(text) | WriteSource::LocalPath(text)) => len(text),
                    None => 0,
                };
                [call.path.as_deref(), call.query.as_deref()]
                    .into_iter()
                    .flatten()
                    .map(len)
                    .fold(source, u64::saturating_add)
            }
        }
    }
}

/// A held call, moved into its approval (never copied): the session it came from, the call
/// and the approval kinds the card asks for.
#[derive(Debug, Serialize, Deserialize)]
pub struct PendingCall {
    /// Whose session the call came from (its plans are that key's).
    pub session_key: crate::state::SessionKey,
    pub session: Session,
    pub call: ApprovedCall,
    pub kinds: Vec<ApprovalKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a human.
    Pending,
    /// Approved; the re-decision, the follow-up and the call are under way.
    Running,
    /// The call ran and the upstream answered (its result may still be a tool error).
    Completed,
    /// Approved, but the work did not carry the call out: the re-decision refused it, the
    /// follow-up or the call failed, or the run deadline passed.
    Failed,
    Refused,
    Expired,
    /// The asking call stopped waiting before anyone answered (an MCP call's wait ended, or
    /// its client cancelled or went away): nobody would receive the result, so it never runs.
    /// `result.message` says what withdrew it.
    Withdrawn,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Refused => "refused",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
        }
    }

    /// Pending or running: the approval still holds its place under the caps.
    pub fn is_open(self) -> bool {
        matches!(self, Self::Pending | Self::Running)
    }
}

/// What approvers and the asking agent see.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApprovalView {
    pub id: String,
    pub status: ApprovalStatus,
    pub requested_by: String,
    pub session_id: String,
    pub summary: CallSummary,
    pub card: Approval,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    pub approved_by: Option<String>,
    pub result: Option<Value>,
}

impl ApprovalView {
    /// What withdrew a withdrawn approval (its result's message); `None` otherwise.
    pub fn withdrawn_because(&self) -> Option<&str> {
        if self.status != ApprovalStatus::Withdrawn {
            return None;
        }
        let content = self.result.as_ref()?.get("content")?;
        content.get(0)?.get("text")?.as_str()
    }
}

fn len(text: &str) -> u64 {
    u64::try_from(text.len()).unwrap_or(u64::MAX)
}

/// The length of `value` as compact JSON, near enough (escapes are not counted). Recursion
/// is bounded by serde_json's nesting limit of 128.
pub fn json_bytes(value: &Value) -> u64 {
    match value {
        Value::String(text) => len(text).saturating_add(2),
        Value::Array(items) => items
            .iter()
            .map(|item| json_bytes(item).saturating_add(1))
            .fold(2, u64::saturating_add),
        Value::Object(map) => map
            .iter()
            .map(|(key, item)| len(key).saturating_add(4).saturating_add(json_bytes(item)))
            .fold(2, u64::saturating_add),
        Value::Null | Value::Bool(_) | Value::Number(_) => 8,
    }
}
