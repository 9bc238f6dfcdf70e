//! authz::cache::question: one question of a decision (`Asked`: the request's entities, how
//! keys name them, and its context) and Cedar's answer to it (`Answer`), combined over the
//! slices it is asked on exactly as one evaluation of the whole set would: any satisfied
//! forbid denies, else any satisfied permit allows, else deny.

use std::collections::BTreeSet;

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, Entities, EntityUid, PolicyId, PolicySet,
    Request, Response,
};

use crate::authz::EvaluationError;

/// One request of a decision: the entities (and how keys name them) and its context.
pub(crate) struct Asked<'a, R> {
    pub principal: &'a EntityUid,
    pub principal_name: &'a str,
    pub action: &'a EntityUid,
    pub action_name: &'a str,
    pub resource: &'a EntityUid,
    pub resource_name: &'a str,
    pub context: &'a R,
}

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

pub(crate) fn request(
    principal: &EntityUid,
    action: &EntityUid,
    resource: &EntityUid,
    context: Context,
) -> Result<Request, EvaluationError> {
    Request::new(
        principal.clone(),
        action.clone(),
        resource.clone(),
        context,
        None,
    )
    .map_err(|error| EvaluationError::Request(error.to_string()))
}

/// Asks one slice (with the action entities) and adds its answer.
pub(crate) fn ask(entities: &Entities, request: &Request, set: &PolicySet, answer: &mut Answer) {
    let response = Authorizer::new().is_authorized(request, set, entities);
    add(&response, answer);
}

/// Adds one Cedar response to `answer`.
pub(crate) fn add(response: &Response, answer: &mut Answer) {
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
    // INVARIANT: a slice that denies reports its satisfied forbids (or none when no permit
    // applied), so the union of forbids is exact; permits only count when no forbid holds.
}
