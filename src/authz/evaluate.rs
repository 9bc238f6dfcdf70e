//! authz::evaluate: asks Cedar one question on the index's slices and combines the answers
//! exactly as one evaluation of the whole set would: any satisfied forbid denies, else any
//! satisfied permit allows, else deny. Evaluation errors are returned, never swallowed.

use std::collections::BTreeSet;

use cedar_policy::{Authorizer, Context, Decision as CedarDecision, EntityUid, PolicyId, Request};

use super::snapshot::PolicySnapshot;
use super::EvaluationError;

/// Cedar's answer to one request, over every slice it was evaluated on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Answer {
    pub forbids: BTreeSet<PolicyId>,
    pub permits: BTreeSet<PolicyId>,
    /// Policies that failed to evaluate (Cedar skips them), with the error text.
    pub errors: Vec<String>,
}

impl Answer {
    /// Allowed with no evaluation error. An error anywhere never yields allow.
    pub fn is_clean_allow(&self) -> bool {
        self.forbids.is_empty() && !self.permits.is_empty() && self.errors.is_empty()
    }
}

pub fn evaluate(
    snapshot: &PolicySnapshot,
    principal: &EntityUid,
    action: &EntityUid,
    resource: &EntityUid,
    context: Context,
) -> Result<Answer, EvaluationError> {
    let request = Request::new(
        principal.clone(),
        action.clone(),
        resource.clone(),
        context,
        None,
    )
    .map_err(|error| EvaluationError::Request(error.to_string()))?;
    let slices = snapshot.index().slices(action, resource);
    let authorizer = Authorizer::new();
    let mut answer = Answer::default();
    for set in [slices.general, slices.specific].into_iter().flatten() {
        let response = authorizer.is_authorized(&request, set, snapshot.action_entities());
        let reasons = response.diagnostics().reason().cloned();
        match response.decision() {
            // A Deny response names the satisfied forbids, or nothing when no permit applied.
            CedarDecision::Deny => answer.forbids.extend(reasons),
            CedarDecision::Allow => answer.permits.extend(reasons),
        }
        answer.errors.extend(
            response
                .diagnostics()
                .errors()
                .map(|error| error.to_string()),
        );
    }
    // INVARIANT: a slice that denies reports its satisfied forbids (or none when no permit
    // applied), so the union of forbids is exact; permits only count when no forbid holds.
    Ok(answer)
}
