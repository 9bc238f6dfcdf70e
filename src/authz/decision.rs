//! authz::decision: what `decide` returns — the tri-state outcome, its reason, the policies
//! that determined it, the approval card, errors and the exact Cedar requests evaluated.

use serde::Serialize;

use super::card::Approval;
use super::context::{CallContext, TargetContext};

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
    Call(Box<CallContext>),
    Target(TargetContext),
}

/// One Cedar request exactly as evaluated. Entities: only the schema's action entities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvaluatedRequest {
    pub question: Question,
    pub principal: String,
    pub action: String,
    pub resource: String,
    pub context: RequestContext,
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
