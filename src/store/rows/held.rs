//! store::rows::held: a held call as the fleet store keeps it (`approvals.call`), as a
//! versioned wire type (issue 39 §2). The domain `PendingCall` — the call's intake (whose
//! session, its facts, the parsed call) and the approval kinds — serializes through
//! [`HeldCallV1`], so the session facts and the call types can change in the code while a
//! replica of the previous version, in a rolling upgrade, still reads what this one wrote and
//! back. A change of shape is a new `…V2`, with its fixture
//! (`tests/fixtures/store/approvals-v1.json`).
//!
//! The session facts refuse a field they do not know, as they always did: a held call whose
//! facts an older replica cannot read in full is not decided by it (its claim fails with a
//! store error: closed).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::approval::{AgentV1, AttestedV1};
use super::{ModeV1, SessionKeyV1};
use crate::audit::record::ApprovalKindV1;
use crate::call::operations::{OperationHints, Provenance};
use crate::call::{DesignCall, ProjectsCall, ProjectsMethod, WriteSource};
use crate::facts::{AgentKind, Attestation, CallerFacts, Session};
use crate::state::usage::UsageFacts;
use crate::state::SessionKey;
use crate::store::approvals::{ApprovedCall, Intake, PendingCall};

/// A held call: its intake beside the approval kinds its card asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldCallV1 {
    pub session_key: SessionKeyV1,
    pub session: SessionV1,
    pub call: CallV1,
    pub kinds: Vec<ApprovalKindV1>,
    /// The asking call's W3C `traceparent`, when it was traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// The session facts the call was asked with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionV1 {
    pub agent: AgentV1,
    pub agent_id: Option<String>,
    pub mode: ModeV1,
    pub interactive: bool,
    pub permission_hook: bool,
    pub bypass_available: bool,
    pub attestation: AttestedV1,
    pub attestation_required: bool,
    pub caller: CallerV1,
}

/// Who stated the facts, as askgate verified them, and what it may claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerV1 {
    #[serde(default)]
    pub principal: String,
    /// Written in `ModeV1`'s order (its declaration order), as always.
    pub modes: BTreeSet<ModeV1>,
    pub agents: BTreeSet<AgentV1>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub groups: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub email: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageV1>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actors: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub scopes: BTreeSet<String>,
}

/// The caller's recent usage, stamped when the call was prepared (absent when all zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageV1 {
    pub calls_minute: i64,
    pub calls_hour: i64,
    pub calls_day: i64,
    pub writes_hour: i64,
    pub writes_day: i64,
    pub deletes_day: i64,
    pub asks_hour: i64,
    pub identical_minute: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub operation_calls_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub operation_calls_day: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub person_calls_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub person_calls_day: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub session_calls_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub denies_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub denies_day: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uploaded_bytes_hour: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uploaded_bytes_day: i64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rate_limited: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_after_seconds: i64,
    #[serde(default = "known", skip_serializing_if = "Clone::clone")]
    pub known: bool,
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

fn known() -> bool {
    true
}

/// The call, tagged by its service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "service", content = "call", rename_all = "snake_case")]
pub enum CallV1 {
    Design(DesignCallV1),
    Projects(ProjectsCallV1),
}

/// A `ClaudeDesign` call: its operation, the arguments as the model sent them, its hints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignCallV1 {
    pub operation: String,
    pub arguments: Map<String, Value>,
    pub hints: HintsV1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HintsV1 {
    pub read_only: bool,
    pub destructive: bool,
    pub provenance: ProvenanceV1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProvenanceV1 {
    Static,
    ServerOnly,
    Unknown,
}

/// A `Projects` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectsCallV1 {
    pub method: MethodV1,
    pub path: Option<String>,
    pub source: Option<SourceV1>,
    pub present_to_user: bool,
    pub query: Option<String>,
    pub n: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodV1 {
    ProjectInfo,
    ProjectRead,
    ProjectSearch,
    ProjectWrite,
    ProjectDelete,
}

/// Where a `project_write` takes the file body from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceV1 {
    Content(String),
    LocalPath(String),
}

impl From<PendingCall> for HeldCallV1 {
    fn from(held: PendingCall) -> Self {
        let Intake {
            session_key,
            session,
            call,
        } = held.intake;
        Self {
            session_key: SessionKeyV1 {
                principal: session_key.principal,
                id: session_key.id,
            },
            session: session_v1(session),
            call: call.into(),
            kinds: held.kinds.into_iter().map(ApprovalKindV1::from).collect(),
            trace: held.trace,
        }
    }
}

impl From<HeldCallV1> for PendingCall {
    fn from(row: HeldCallV1) -> Self {
        PendingCall {
            intake: Intake {
                session_key: SessionKey::new(row.session_key.principal, row.session_key.id),
                session: session(row.session),
                call: row.call.into(),
            },
            kinds: row.kinds.into_iter().map(Into::into).collect(),
            trace: row.trace,
        }
    }
}

impl From<ApprovedCall> for CallV1 {
    fn from(call: ApprovedCall) -> Self {
        match call {
            ApprovedCall::Design(call) => CallV1::Design(DesignCallV1 {
                operation: call.operation,
                arguments: call.arguments,
                hints: HintsV1 {
                    read_only: call.hints.read_only,
                    destructive: call.hints.destructive,
                    provenance: match call.hints.provenance {
                        Provenance::Static => ProvenanceV1::Static,
                        Provenance::ServerOnly => ProvenanceV1::ServerOnly,
                        Provenance::Unknown => ProvenanceV1::Unknown,
                    },
                },
            }),
            ApprovedCall::Projects(call) => CallV1::Projects(ProjectsCallV1 {
                method: match call.method {
                    ProjectsMethod::ProjectInfo => MethodV1::ProjectInfo,
                    ProjectsMethod::ProjectRead => MethodV1::ProjectRead,
                    ProjectsMethod::ProjectSearch => MethodV1::ProjectSearch,
                    ProjectsMethod::ProjectWrite => MethodV1::ProjectWrite,
                    ProjectsMethod::ProjectDelete => MethodV1::ProjectDelete,
                },
                path: call.path,
                source: call.source.map(|source| match source {
                    WriteSource::Content(content) => SourceV1::Content(content),
                    WriteSource::LocalPath(path) => SourceV1::LocalPath(path),
                }),
                present_to_user: call.present_to_user,
                query: call.query,
                n: call.n,
            }),
        }
    }
}

impl From<CallV1> for ApprovedCall {
    fn from(call: CallV1) -> Self {
        match call {
            CallV1::Design(call) => ApprovedCall::Design(DesignCall {
                operation: call.operation,
                arguments: call.arguments,
                hints: OperationHints {
                    read_only: call.hints.read_only,
                    destructive: call.hints.destructive,
                    provenance: match call.hints.provenance {
                        ProvenanceV1::Static => Provenance::Static,
                        ProvenanceV1::ServerOnly => Provenance::ServerOnly,
                        ProvenanceV1::Unknown => Provenance::Unknown,
                    },
                },
            }),
            CallV1::Projects(call) => ApprovedCall::Projects(ProjectsCall {
                method: match call.method {
                    MethodV1::ProjectInfo => ProjectsMethod::ProjectInfo,
                    MethodV1::ProjectRead => ProjectsMethod::ProjectRead,
                    MethodV1::ProjectSearch => ProjectsMethod::ProjectSearch,
                    MethodV1::ProjectWrite => ProjectsMethod::ProjectWrite,
                    MethodV1::ProjectDelete => ProjectsMethod::ProjectDelete,
                },
                path: call.path,
                source: call.source.map(|source| match source {
                    SourceV1::Content(content) => WriteSource::Content(content),
                    SourceV1::LocalPath(path) => WriteSource::LocalPath(path),
                }),
                present_to_user: call.present_to_user,
                query: call.query,
                n: call.n,
            }),
        }
    }
}

pub(super) fn agent_v1(agent: AgentKind) -> AgentV1 {
    match agent {
        AgentKind::Main => AgentV1::Main,
        AgentKind::Subagent => AgentV1::Subagent,
    }
}

pub(super) fn agent(agent: AgentV1) -> AgentKind {
    match agent {
        AgentV1::Main => AgentKind::Main,
        AgentV1::Subagent => AgentKind::Subagent,
    }
}

fn session_v1(session: Session) -> SessionV1 {
    let caller = session.caller;
    SessionV1 {
        agent: agent_v1(session.agent),
        agent_id: session.agent_id,
        mode: session.mode.into(),
        interactive: session.interactive,
        permission_hook: session.permission_hook,
        bypass_available: session.bypass_available,
        attestation: session.attestation.into(),
        attestation_required: session.attestation_required,
        caller: CallerV1 {
            principal: caller.principal,
            modes: caller.modes.into_iter().map(ModeV1::from).collect(),
            agents: caller.agents.into_iter().map(agent_v1).collect(),
            groups: caller.groups,
            email: caller.email,
            usage: (!caller.usage.is_zero()).then(|| usage_v1(caller.usage)),
            client: caller.client,
            actors: caller.actors,
            scopes: caller.scopes,
        },
    }
}

fn session(row: SessionV1) -> Session {
    let caller = row.caller;
    Session {
        agent: agent(row.agent),
        agent_id: row.agent_id,
        mode: row.mode.into(),
        interactive: row.interactive,
        permission_hook: row.permission_hook,
        bypass_available: row.bypass_available,
        attestation: row.attestation.into(),
        attestation_required: row.attestation_required,
        caller: CallerFacts {
            principal: caller.principal,
            modes: caller.modes.into_iter().map(Into::into).collect(),
            agents: caller.agents.into_iter().map(agent).collect(),
            groups: caller.groups,
            email: caller.email,
            usage: caller.usage.map(usage).unwrap_or_default(),
            client: caller.client,
            actors: caller.actors,
            scopes: caller.scopes,
        },
    }
}

fn usage_v1(usage: UsageFacts) -> UsageV1 {
    UsageV1 {
        calls_minute: usage.calls_minute,
        calls_hour: usage.calls_hour,
        calls_day: usage.calls_day,
        writes_hour: usage.writes_hour,
        writes_day: usage.writes_day,
        deletes_day: usage.deletes_day,
        asks_hour: usage.asks_hour,
        identical_minute: usage.identical_minute,
        operation_calls_hour: usage.operation_calls_hour,
        operation_calls_day: usage.operation_calls_day,
        person_calls_hour: usage.person_calls_hour,
        person_calls_day: usage.person_calls_day,
        session_calls_hour: usage.session_calls_hour,
        denies_hour: usage.denies_hour,
        denies_day: usage.denies_day,
        uploaded_bytes_hour: usage.uploaded_bytes_hour,
        uploaded_bytes_day: usage.uploaded_bytes_day,
        rate_limited: usage.rate_limited,
        retry_after_seconds: usage.retry_after_seconds,
        known: usage.known,
    }
}

fn usage(row: UsageV1) -> UsageFacts {
    UsageFacts {
        calls_minute: row.calls_minute,
        calls_hour: row.calls_hour,
        calls_day: row.calls_day,
        writes_hour: row.writes_hour,
        writes_day: row.writes_day,
        deletes_day: row.deletes_day,
        asks_hour: row.asks_hour,
        identical_minute: row.identical_minute,
        operation_calls_hour: row.operation_calls_hour,
        operation_calls_day: row.operation_calls_day,
        person_calls_hour: row.person_calls_hour,
        person_calls_day: row.person_calls_day,
        session_calls_hour: row.session_calls_hour,
        denies_hour: row.denies_hour,
        denies_day: row.denies_day,
        uploaded_bytes_hour: row.uploaded_bytes_hour,
        uploaded_bytes_day: row.uploaded_bytes_day,
        rate_limited: row.rate_limited,
        retry_after_seconds: row.retry_after_seconds,
        known: row.known,
    }
}

impl From<Attestation> for AttestedV1 {
    fn from(attestation: Attestation) -> Self {
        match attestation {
            Attestation::None => Self::None,
            Attestation::Attested => Self::Attested,
            Attestation::Unattested => Self::Unattested,
            Attestation::Mismatched => Self::Mismatched,
            Attestation::Foreign => Self::Foreign,
        }
    }
}

impl From<AttestedV1> for Attestation {
    fn from(attestation: AttestedV1) -> Self {
        match attestation {
            AttestedV1::None => Self::None,
            AttestedV1::Attested => Self::Attested,
            AttestedV1::Unattested => Self::Unattested,
            AttestedV1::Mismatched => Self::Mismatched,
            AttestedV1::Foreign => Self::Foreign,
        }
    }
}
