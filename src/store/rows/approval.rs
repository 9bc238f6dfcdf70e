//! store::rows::approval: an approval as it leaves the process, as a versioned wire type
//! (issue 39 §2). [`ApprovalV1`] is the one shape of the `approvals.view` row, of the HTTP
//! body (`/v1/approvals…`, an ask's `approval`) and of the webhook's `approval`: the domain
//! type `ApprovalView` serializes and deserializes through it (`#[serde(into, from)]`), so
//! renaming or reshaping a domain field — the card's included — changes only a conversion
//! here, never what the API, the webhook or an older replica reads. A change of shape is a
//! new `…V2`, with its fixture. `V1` is the shape every version has written since approvals
//! were first kept (`tests/fixtures/store/approvals-v1.json`, `tests/fixtures/api/`).
//!
//! Unknown fields are ignored, as they always were: in a rolling upgrade a replica of the
//! previous version reads a row a newer one wrote.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use super::ModeV1;
use crate::audit::record::ApprovalKindV1;
use crate::authz::approving::Vote;
use crate::authz::{Approval, ApprovalKind, CallSummary};
use crate::store::approvals::{ApprovalStatus, ApprovalView, AskedAs, Ballot, Binding, ClientWait};

/// An approval: the view approvers and the asking agent see, as stored and sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalV1 {
    pub id: String,
    pub status: StatusV1,
    pub requested_by: String,
    pub session_id: String,
    pub summary: SummaryV1,
    pub card: CardV1,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    pub approved_by: Option<String>,
    pub result: Option<Value>,
    #[serde(default)]
    pub asked_as: AskedAsV1,
    #[serde(default)]
    pub client: ClientWaitV1,
    #[serde(default = "one")]
    pub quorum: u8,
    #[serde(default)]
    pub votes: Vec<BallotV1>,
    #[serde(default)]
    pub escalated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<BindingV1>,
}

/// The quorum of a row that does not say (written before quorums existed).
fn one() -> u8 {
    1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusV1 {
    Pending,
    Running,
    Completed,
    Failed,
    Refused,
    Expired,
    Withdrawn,
}

/// What the call is: never file bodies or tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryV1 {
    pub tool: String,
    pub operation: String,
    pub project_id: Option<String>,
    pub targets: Vec<String>,
    pub plan_writes: Vec<String>,
    pub plan_deletes: Vec<String>,
    pub writes: bool,
}

/// The card: what approving does, and for how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CardV1 {
    Consent {
        consent: String,
        tool: String,
        operation: String,
        message: String,
        scope: String,
        also: Vec<ApprovalKindV1>,
    },
    Grant {
        project_id: String,
        name: String,
        sharing_scope: String,
        sharing_label: String,
        url: String,
        writes: Vec<String>,
        message: String,
        scope: String,
        also: Vec<ApprovalKindV1>,
    },
    Plan {
        project_id: String,
        writes: Vec<String>,
        deletes: Vec<String>,
        expires_in_seconds: u32,
        message: String,
        scope: String,
        also: Vec<ApprovalKindV1>,
    },
    Batch {
        tool: String,
        operation: String,
        project_id: Option<String>,
        targets: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        writes: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        deletes: Vec<String>,
        message: String,
        scope: String,
        also: Vec<ApprovalKindV1>,
    },
}

/// Who asked, as the call's session facts said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedAsV1 {
    pub agent: AgentV1,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    pub mode: ModeV1,
    pub attestation: AttestedV1,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentV1 {
    #[default]
    Main,
    Subagent,
}

/// Whether the client's hook attested the asking call's facts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttestedV1 {
    #[default]
    None,
    Attested,
    Unattested,
    Mismatched,
    Foreign,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientWaitV1 {
    #[default]
    Polls,
    Waiting,
    NotYet,
}

/// One approver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BallotV1 {
    pub by: String,
    pub vote: VoteV1,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoteV1 {
    Approve,
    Refuse,
}

/// The call and the policy set an approval was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindingV1 {
    pub call: String,
    pub policies: String,
}

impl From<ApprovalView> for ApprovalV1 {
    fn from(view: ApprovalView) -> Self {
        Self {
            id: view.id,
            status: match view.status {
                ApprovalStatus::Pending => StatusV1::Pending,
                ApprovalStatus::Running => StatusV1::Running,
                ApprovalStatus::Completed => StatusV1::Completed,
                ApprovalStatus::Failed => StatusV1::Failed,
                ApprovalStatus::Refused => StatusV1::Refused,
                ApprovalStatus::Expired => StatusV1::Expired,
                ApprovalStatus::Withdrawn => StatusV1::Withdrawn,
            },
            requested_by: view.requested_by,
            session_id: view.session_id,
            summary: SummaryV1 {
                tool: view.summary.tool,
                operation: view.summary.operation,
                project_id: view.summary.project_id,
                targets: view.summary.targets.to_vec(),
                plan_writes: view.summary.plan_writes,
                plan_deletes: view.summary.plan_deletes,
                writes: view.summary.writes,
            },
            card: view.card.into(),
            created_at: view.created_at,
            expires_at: view.expires_at,
            approved_by: view.approved_by,
            result: view.result,
            asked_as: AskedAsV1 {
                agent: super::held::agent_v1(view.asked_as.agent),
                agent_id: view.asked_as.agent_id,
                mode: view.asked_as.mode.into(),
                attestation: view.asked_as.attestation.into(),
            },
            client: match view.client {
                ClientWait::Polls => ClientWaitV1::Polls,
                ClientWait::Waiting => ClientWaitV1::Waiting,
                ClientWait::NotYet => ClientWaitV1::NotYet,
            },
            quorum: view.quorum,
            votes: view
                .votes
                .into_iter()
                .map(|ballot| BallotV1 {
                    by: ballot.by,
                    vote: match ballot.vote {
                        Vote::Approve => VoteV1::Approve,
                        Vote::Refuse => VoteV1::Refuse,
                    },
                    at: ballot.at,
                    note: ballot.note,
                })
                .collect(),
            escalated: view.escalated,
            bound: view.bound.map(|bound| BindingV1 {
                call: bound.call,
                policies: bound.policies,
            }),
        }
    }
}

impl From<ApprovalV1> for ApprovalView {
    fn from(row: ApprovalV1) -> Self {
        Self {
            id: row.id,
            status: match row.status {
                StatusV1::Pending => ApprovalStatus::Pending,
                StatusV1::Running => ApprovalStatus::Running,
                StatusV1::Completed => ApprovalStatus::Completed,
                StatusV1::Failed => ApprovalStatus::Failed,
                StatusV1::Refused => ApprovalStatus::Refused,
                StatusV1::Expired => ApprovalStatus::Expired,
                StatusV1::Withdrawn => ApprovalStatus::Withdrawn,
            },
            requested_by: row.requested_by,
            session_id: row.session_id,
            summary: CallSummary {
                tool: row.summary.tool,
                operation: row.summary.operation,
                project_id: row.summary.project_id,
                targets: row.summary.targets.into(),
                plan_writes: row.summary.plan_writes,
                plan_deletes: row.summary.plan_deletes,
                writes: row.summary.writes,
            },
            card: row.card.into(),
            created_at: row.created_at,
            expires_at: row.expires_at,
            approved_by: row.approved_by,
            result: row.result,
            asked_as: AskedAs {
                agent: super::held::agent(row.asked_as.agent),
                agent_id: row.asked_as.agent_id,
                mode: row.asked_as.mode.into(),
                attestation: row.asked_as.attestation.into(),
            },
            client: match row.client {
                ClientWaitV1::Polls => ClientWait::Polls,
                ClientWaitV1::Waiting => ClientWait::Waiting,
                ClientWaitV1::NotYet => ClientWait::NotYet,
            },
            quorum: row.quorum,
            votes: row
                .votes
                .into_iter()
                .map(|ballot| Ballot {
                    by: ballot.by,
                    vote: match ballot.vote {
                        VoteV1::Approve => Vote::Approve,
                        VoteV1::Refuse => Vote::Refuse,
                    },
                    at: ballot.at,
                    note: ballot.note,
                })
                .collect(),
            escalated: row.escalated,
            bound: row.bound.map(|bound| Binding {
                call: bound.call,
                policies: bound.policies,
            }),
        }
    }
}

fn kinds_v1(kinds: Vec<ApprovalKind>) -> Vec<ApprovalKindV1> {
    kinds.into_iter().map(ApprovalKindV1::from).collect()
}

fn kinds(kinds: Vec<ApprovalKindV1>) -> Vec<ApprovalKind> {
    kinds.into_iter().map(ApprovalKind::from).collect()
}

impl From<Approval> for CardV1 {
    fn from(card: Approval) -> Self {
        match card {
            Approval::Consent {
                consent,
                tool,
                operation,
                message,
                scope,
                also,
            } => Self::Consent {
                consent,
                tool,
                operation,
                message,
                scope,
                also: kinds_v1(also),
            },
            Approval::Grant {
                project_id,
                name,
                sharing_scope,
                sharing_label,
                url,
                writes,
                message,
                scope,
                also,
            } => Self::Grant {
                project_id,
                name,
                sharing_scope,
                sharing_label,
                url,
                writes,
                message,
                scope,
                also: kinds_v1(also),
            },
            Approval::Plan {
                project_id,
                writes,
                deletes,
                expires_in_seconds,
                message,
                scope,
                also,
            } => Self::Plan {
                project_id,
                writes,
                deletes,
                expires_in_seconds,
                message,
                scope,
                also: kinds_v1(also),
            },
            Approval::Batch {
                tool,
                operation,
                project_id,
                targets,
                writes,
                deletes,
                message,
                scope,
                also,
            } => Self::Batch {
                tool,
                operation,
                project_id,
                targets,
                writes,
                deletes,
                message,
                scope,
                also: kinds_v1(also),
            },
        }
    }
}

impl From<CardV1> for Approval {
    fn from(card: CardV1) -> Self {
        match card {
            CardV1::Consent {
                consent,
                tool,
                operation,
                message,
                scope,
                also,
            } => Self::Consent {
                consent,
                tool,
                operation,
                message,
                scope,
                also: kinds(also),
            },
            CardV1::Grant {
                project_id,
                name,
                sharing_scope,
                sharing_label,
                url,
                writes,
                message,
                scope,
                also,
            } => Self::Grant {
                project_id,
                name,
                sharing_scope,
                sharing_label,
                url,
                writes,
                message,
                scope,
                also: kinds(also),
            },
            CardV1::Plan {
                project_id,
                writes,
                deletes,
                expires_in_seconds,
                message,
                scope,
                also,
            } => Self::Plan {
                project_id,
                writes,
                deletes,
                expires_in_seconds,
                message,
                scope,
                also: kinds(also),
            },
            CardV1::Batch {
                tool,
                operation,
                project_id,
                targets,
                writes,
                deletes,
                message,
                scope,
                also,
            } => Self::Batch {
                tool,
                operation,
                project_id,
                targets,
                writes,
                deletes,
                message,
                scope,
                also: kinds(also),
            },
        }
    }
}
