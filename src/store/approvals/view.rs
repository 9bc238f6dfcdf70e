//! store::approvals::view: what an approval holds and shows — the held call, the statuses of
//! its life, the view approvers and the asking agent see, and the bytes a held call costs.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use super::ballot::Ballot;
use super::binding::Binding;
use crate::authz::CallSummary;
use crate::authz::{Approval, ApprovalKind};
use crate::call::{DesignCall, ProjectsCall, WriteSource};
use crate::facts::{AgentKind, Attestation, Mode, Session};

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

    /// The bytes of file bodies the call would upload: a Design call's `files[].data`, a
    /// Projects `project_write`'s content, or its local file's size (`local_file_bytes`, as
    /// the decision saw it). Counted in the caller's usage (`uploaded_bytes_*`).
    pub fn uploaded_bytes(&self, local_file_bytes: Option<u64>) -> u64 {
        match self {
            Self::Design(call) => call
                .arguments
                .get("files")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|file| file.get("data").and_then(Value::as_str))
                .map(len)
                .fold(0, u64::saturating_add),
            Self::Projects(call) => match &call.source {
                Some(WriteSource::Content(text)) => len(text),
                Some(WriteSource::LocalPath(_)) => local_file_bytes.unwrap_or(0),
                None => 0,
            },
        }
    }
}

/// A call as it came in, whole: whose session, the session's facts and the parsed call. What
/// a decision gathers its facts for, what an approval keeps (moved, never copied) and what a
/// re-decision — on this replica or another — gathers again; nothing is rebuilt by hand.
#[derive(Debug, Clone)]
pub struct Intake {
    /// Whose session the call came from (its plans are that key's).
    pub session_key: crate::state::SessionKey,
    pub session: Session,
    pub call: ApprovedCall,
}

/// A held call, moved into its approval (never copied but to be written to a shared store):
/// its intake and the approval kinds the card asks for. Stored as its wire type,
/// `store::rows::held::HeldCallV1` (through which it serializes).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(
    into = "crate::store::rows::held::HeldCallV1",
    from = "crate::store::rows::held::HeldCallV1"
)]
pub struct PendingCall {
    pub intake: Intake,
    pub kinds: Vec<ApprovalKind>,
    /// The asking call's span as a W3C `traceparent`, when it was exported: the release links
    /// back to it (`crate::trace::link`).
    pub trace: Option<String>,
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

/// What approvers and the asking agent see. Stored, sent over HTTP and in the webhook as
/// its wire type, `store::rows::approval::ApprovalV1` (through which it serializes).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(
    into = "crate::store::rows::approval::ApprovalV1",
    from = "crate::store::rows::approval::ApprovalV1"
)]
pub struct ApprovalView {
    pub id: String,
    pub status: ApprovalStatus,
    pub requested_by: String,
    pub session_id: String,
    pub summary: CallSummary,
    pub card: Approval,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
    pub approved_by: Option<String>,
    pub result: Option<Value>,
    /// Who asked, as the call's session facts said: main agent or subagent (and which), the
    /// permission mode, and whether the client's hook attested them (A17).
    pub asked_as: AskedAs,
    /// Whether a client is waiting for the result (A16).
    pub client: ClientWait,
    /// How many distinct approvers must approve before the call runs: the largest `@quorum`
    /// of the policies that asked (issue 35 §2); 1 when none says (a row written before
    /// quorums reads as 1).
    pub quorum: u8,
    /// Every answer given so far, oldest first (at most `ballot::MAX_VOTES`).
    pub votes: Vec<Ballot>,
    /// It went unanswered past `escalation.after_seconds` and was handed to the second group
    /// (issue 35 §2); the approving policies read it (`resource.escalated`), so a rule can
    /// widen who may approve once it is.
    pub escalated: bool,
    /// The call and the policy set it was asked for (issue 35 §3); `None` only for an
    /// approval held by a replica older than the binding, whose call runs as before.
    pub bound: Option<Binding>,
}

/// The session facts an approver needs to judge who asks (a subagent's write is not the main
/// agent's), taken from the call's session when it was held.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedAs {
    pub agent: AgentKind,
    /// The subagent's id, when the client named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    pub mode: Mode,
    /// `attested` (the client's hook vouched for these facts), `unattested` (the caller's
    /// configured facts), or `none` (the caller stated them itself: the HTTP API).
    pub attestation: Attestation,
}

impl AskedAs {
    pub fn of(session: &Session) -> AskedAs {
        AskedAs {
            agent: session.agent,
            agent_id: session.agent_id.clone().filter(|id| !id.is_empty()),
            mode: session.mode,
            attestation: session.attestation,
        }
    }
}

/// Whether anybody waits for an approval's result (A16).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientWait {
    /// The caller reads the result from the approvals API when it wants (the HTTP API).
    #[default]
    Polls,
    /// An MCP call is held open for the result.
    Waiting,
    /// A 2026-07-28 MCP client was told where to approve and has not come back with its
    /// retry: the call runs only once it does, so a client that went away is never run for.
    NotYet,
}

impl ClientWait {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Polls => "polls",
            Self::Waiting => "waiting",
            Self::NotYet => "not_yet",
        }
    }

    /// What it means, for a person.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Polls => {
                "no call is held open: the agent reads the result from the approvals API"
            }
            Self::Waiting => "the agent's call is waiting for the answer",
            Self::NotYet => {
                "not yet: the agent's MCP client was sent this page and has not come back for \
                 the result; approved, the call runs only when it does"
            }
        }
    }
}

impl ApprovalView {
    /// `1 of 2 approvals`.
    pub fn tally(&self) -> String {
        super::ballot::tally(&self.votes, self.quorum)
    }

    /// Whether `by` has already approved it.
    pub fn has_approved(&self, by: &str) -> bool {
        super::ballot::has_approved(&self.votes, by)
    }

    /// Whether one more approval completes the quorum.
    pub fn one_short(&self) -> bool {
        super::ballot::approvals_given(&self.votes).saturating_add(1) >= usize::from(self.quorum)
    }

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
