//! authz::decision: what `decide` returns — the tri-state outcome, its reason, the policies
//! that determined it, the approval card, errors and the exact Cedar requests evaluated.

use serde::Serialize;

use super::card::Approval;
use std::sync::Arc;

use super::context::{CallContext, TargetContext};
use crate::paths::TargetFacts;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Allow,
    Ask,
    Deny,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

/// Which question a request asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// Is this target path ordinary?
    Target,
    /// Allowed without a human?
    Unapproved,
    /// Allowed if a human approves the kinds asked?
    Approved,
}

/// The context of an evaluated request, as it was given to Cedar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RequestContext {
    Call(Arc<CallContext>),
    /// A target's context, rendered from the call's target facts when serialized (cheap to
    /// keep for hundreds of targets).
    Target(TargetRequest),
}

/// One target of a call: its context is `TargetContext::of(targets[index], ...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRequest {
    pub targets: Arc<Vec<TargetFacts>>,
    pub index: usize,
    pub project_id: Arc<str>,
    pub operation: Arc<str>,
}

impl TargetRequest {
    pub fn context(&self) -> Option<TargetContext> {
        let target = self.targets.get(self.index)?;
        Some(TargetContext::of(target, &self.project_id, &self.operation))
    }
}

impl Serialize for TargetRequest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.context().serialize(serializer)
    }
}

/// One Cedar request exactly as evaluated. Entities: only the schema's action entities.
/// Requests answered from the snapshot's memo (`authz::memo`) are marked `memoized`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvaluatedRequest {
    pub question: Question,
    pub principal: Arc<str>,
    pub action: Arc<str>,
    pub resource: Arc<str>,
    pub context: RequestContext,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub memoized: bool,
}

/// A target path that a target policy blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockedTarget {
    pub path: String,
    pub reasons: Vec<String>,
    pub policies: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub decision: Outcome,
    pub reason: String,
    /// Sorted `@id`s of the policies that determined the outcome.
    pub policies: Vec<String>,
    pub approval: Option<Approval>,
    pub errors: Vec<String>,
    /// Sorted `@id`s of the target policies that classified the call's targets.
    pub target_policies: Vec<String>,
    /// Targets blocked by target policies (reserved, rejected, not normalizable, admin rules).
    pub blocked_targets: Vec<BlockedTarget>,
    /// Content hash of the policy snapshot that decided.
    pub snapshot: String,
    pub requests: Vec<EvaluatedRequest>,
}
