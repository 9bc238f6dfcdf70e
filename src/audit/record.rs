//! audit::record: the versioned wire types of the decision log (one JSON object per line).
//! Wire types only, never domain types: it must not decide, read files or clocks. Their `"v"`
//! and `"kind"` header is `header`'s; the logged facts and their conversion to and from the
//! domain's are `facts`'s, completing records older than a fact is `upgrade`'s; building a
//! record from a decision (times) is `render`'s.

mod context;
mod facts;
mod header;
mod render;
mod upgrade;

use serde::{Deserialize, Serialize};

use crate::authz::ApprovalKind;

pub use context::LoggedContext;
pub use facts::{EntityV1, FactsError, FactsV1, IdentityV1, SummaryV1, TargetV1};
pub use header::{ApprovalRecordKind, DecisionKind, OutcomeKind, Version, FORMAT_VERSION};
pub use render::{format_time, DecisionOrigin, REDACTED};

/// The logged tri-state outcome (the wire twin of `authz::Outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub const ALL: [Verdict; 3] = [Verdict::Allow, Verdict::Ask, Verdict::Deny];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// The kind of approval an ask requests (the wire twin of `authz::ApprovalKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKindV1 {
    Consent,
    Grant,
    Plan,
    Batch,
}

impl From<ApprovalKind> for ApprovalKindV1 {
    fn from(kind: ApprovalKind) -> Self {
        match kind {
            ApprovalKind::Consent => Self::Consent,
            ApprovalKind::Grant => Self::Grant,
            ApprovalKind::Plan => Self::Plan,
            ApprovalKind::Batch => Self::Batch,
        }
    }
}

impl From<ApprovalKindV1> for ApprovalKind {
    fn from(kind: ApprovalKindV1) -> Self {
        match kind {
            ApprovalKindV1::Consent => Self::Consent,
            ApprovalKindV1::Grant => Self::Grant,
            ApprovalKindV1::Plan => Self::Plan,
            ApprovalKindV1::Batch => Self::Batch,
        }
    }
}

/// Which policy set decided a call (added within format 1: a record without it was decided by
/// the live set, the only one there was).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum PolicySetV1 {
    /// The service's policies (`/v1/authorize`, `/v1/*/call`, `/mcp`, re-decisions).
    #[default]
    Live,
    /// The hook-mode set of `POST /v1/hooks/claude-code` (`sources::load_hook`).
    Hook,
}

impl PolicySetV1 {
    pub fn is_live(&self) -> bool {
        *self == Self::Live
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Hook => "hook",
        }
    }
}

/// Which front door a call came through (added within format 1: absent in older records, and
/// in a decision taken again at approval, whose ask's record has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontDoorV1 {
    Http,
    Mcp,
    Hook,
}

impl FrontDoorV1 {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Mcp => "mcp",
            Self::Hook => "hook",
        }
    }
}

/// What the shadow policy set would have decided (logged only, never enforced).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShadowRecord {
    pub snapshot: String,
    pub decision: Verdict,
    pub policies: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionRecord {
    pub v: Version,
    pub kind: DecisionKind,
    pub id: String,
    pub time: String,
    pub account: String,
    pub session: String,
    /// The client's id for the tool call, when the decision answered a hook (Claude Code's
    /// `tool_use_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// `main`, `subagent` or the agent id: the Cedar principal's id.
    pub agent: String,
    pub tool: String,
    pub operation: String,
    /// Format 2 leaves out what is empty or absent here and below (format 1 wrote it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Normalized target paths (paths are logged; bodies never are).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    pub snapshot: String,
    pub decision: Verdict,
    pub policies: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalKindV1>,
    pub reason: String,
    /// Everything replay needs; the Cedar requests are re-derived from it.
    pub facts: FactsV1,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow: Option<ShadowRecord>,
    /// The set that decided (`live` is not written).
    #[serde(default, skip_serializing_if = "PolicySetV1::is_live")]
    pub policy_set: PolicySetV1,
    /// The front door the call came through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub front_door: Option<FrontDoorV1>,
}

impl DecisionRecord {
    /// The record with what format 2 leaves out put back: the call summary's tool, operation,
    /// project and targets are the record's own (format 1 wrote them twice).
    pub fn completed(mut self) -> Self {
        if self.v != Version::V1 {
            let summary = &mut self.facts.summary;
            summary.tool.clone_from(&self.tool);
            summary.operation.clone_from(&self.operation);
            summary.project_id.clone_from(&self.project);
            summary.targets.clone_from(&self.targets);
        }
        self
    }
}

/// A human's answer to an ask, linked to its decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRecord {
    pub v: Version,
    pub kind: ApprovalRecordKind,
    pub id: String,
    pub time: String,
    pub decision_id: String,
    pub approval_id: String,
    pub action: ApprovalAction,
    pub by: String,
    /// The approver's optional note (added after format 1 was first written; absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The digest of the call the answer was given for (`sha256:…`, the approval's binding,
    /// issue 35 §3; absent for expiries, withdrawals and records written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAction {
    /// The approver's approval completed the quorum (each earlier one is `voted`).
    Approved,
    Refused,
    Expired,
    /// The asking call stopped waiting (an MCP call); `note` says what withdrew it.
    Withdrawn,
    /// An approver approved an approval that needs more approvers (`@quorum`): counted, the
    /// call not run yet (issue 35).
    Voted,
}

impl ApprovalAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Refused => "refused",
            Self::Expired => "expired",
            Self::Withdrawn => "withdrawn",
            Self::Voted => "voted",
        }
    }
}

/// How the executed call ended upstream, linked to its decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeRecord {
    pub v: Version,
    pub kind: OutcomeKind,
    pub id: String,
    pub time: String,
    pub decision_id: String,
    pub status: OutcomeStatus,
    pub error_kind: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    Ok,
    Error,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Record {
    Decision(Box<DecisionRecord>),
    Approval(ApprovalRecord),
    Outcome(OutcomeRecord),
}

impl Record {
    pub fn id(&self) -> &str {
        match self {
            Self::Decision(record) => &record.id,
            Self::Approval(record) => &record.id,
            Self::Outcome(record) => &record.id,
        }
    }

    /// When it was written: RFC 3339 in UTC with milliseconds (`format_time`), so the text
    /// sorts as the time does.
    pub fn time(&self) -> &str {
        match self {
            Self::Decision(record) => &record.time,
            Self::Approval(record) => &record.time,
            Self::Outcome(record) => &record.time,
        }
    }

    /// The decision this record belongs to (its own id for a decision).
    pub fn decision_id(&self) -> &str {
        match self {
            Self::Decision(record) => &record.id,
            Self::Approval(record) => &record.decision_id,
            Self::Outcome(record) => &record.decision_id,
        }
    }

    /// The record as one JSON line, newline included.
    pub fn to_line(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut line = serde_json::to_vec(self)?;
        line.push(b'\n');
        Ok(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn outcome_line(version: &str, kind: &str) -> String {
        format!(
            r#"{{"v":{version},"kind":"{kind}","id":"o","time":"t","decision_id":"d","status":"ok","error_kind":null}}"#
        )
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let line = outcome_line("1", "outcome").replace("\"id\":", "\"extra\":1,\"id\":");
        assert!(serde_json::from_str::<OutcomeRecord>(&line).is_err());
    }

    #[test]
    fn records_serialize_with_version_and_kind_first() {
        let record = Record::Outcome(serde_json::from_str(&outcome_line("2", "outcome")).unwrap());
        let line = record.to_line().unwrap();
        assert!(line.starts_with(br#"{"v":2,"kind":"outcome","id":"o""#));
        // A record keeps the version it was read with.
        let old = Record::Outcome(serde_json::from_str(&outcome_line("1", "outcome")).unwrap());
        assert!(old.to_line().unwrap().starts_with(br#"{"v":1,"#));
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(record.decision_id(), "d");
    }
}
