//! authz::decision: what `decide` returns — the tri-state outcome, its reason, the policies
//! that determined it, the approval card, errors and the exact Cedar requests evaluated
//! (`authz::requests`).

use serde::Serialize;

use super::card::Approval;
pub use super::requests::{EvaluatedRequest, Question, RequestContext, Requests, TargetRequest};

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
    pub requests: Requests,
    /// A deny a token with these OAuth scopes would not have met (its determining policies'
    /// `@step_up`): the front doors answer with OAuth's `insufficient_scope` challenge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_up: Vec<String>,
    /// A deny only the caller's rate limit makes (its determining policies are all
    /// `@rate_limit`): the front doors answer it as a rate limit, naming the time to wait.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rate_limited: bool,
}
