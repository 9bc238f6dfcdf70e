//! authz::evaluate: asks Cedar one question on the index's slices and combines the answers
//! exactly as one evaluation of the whole set would: any satisfied forbid denies, else any
//! satisfied permit allows, else deny. Evaluation errors are returned, never swallowed.
//!
//! `answer` is the decision path: each slice is asked with the context cut down to what its
//! policies read, and the answer is cached under the key of exactly that (`authz::cache`).
//! `evaluate` asks with a whole context given as is (for requests built outside a call).

use std::collections::BTreeSet;
use std::sync::Arc;

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, EntityUid, PolicyId, PolicySet, Request,
    Response,
};

use super::context::cedar_context;
use super::index::Slices;
use super::project::{record_project, Attributes, Key};
use super::reference::Whole;
use super::snapshot::PolicySnapshot;
use super::EvaluationError;

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

/// Who answers a decision's questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evaluator {
    /// The slices, through the snapshot's answer cache: the decision path.
    Cache,
    /// Plain Cedar on the whole set and the whole context (`authz::reference`).
    Reference,
}

impl Evaluator {
    /// Cedar's answer to `asked`, whose action and resource have `slices`.
    pub(crate) fn answer<R: Attributes + Whole>(
        self,
        snapshot: &PolicySnapshot,
        slices: Slices<'_>,
        asked: &Asked<'_, R>,
    ) -> Result<Arc<Answer>, EvaluationError> {
        match self {
            Self::Cache => answer_on(snapshot, slices, asked),
            Self::Reference => super::reference::answer(snapshot, asked).map(Arc::new),
        }
    }
}

/// Cedar's answer to `asked` on `slices` (its action's and resource's), from the
/// snapshot's cache or evaluated now (and cached).
pub(crate) fn answer_on<R: Attributes>(
    snapshot: &PolicySnapshot,
    slices: Slices<'_>,
    asked: &Asked<'_, R>,
) -> Result<Arc<Answer>, EvaluationError> {
    let key = key(slices, asked);
    if let Some(answer) = snapshot.cache().get(&key) {
        return Ok(answer);
    }
    let answer = Arc::new(evaluated(snapshot, slices, asked)?);
    snapshot.cache().insert(key, Arc::clone(&answer));
    Ok(answer)
}

/// The key of `asked` on `slices`: per slice, its id and what its policies read.
fn key<R: Attributes>(slices: Slices<'_>, asked: &Asked<'_, R>) -> Key {
    let mut key = Key::with_capacity(128);
    key.text(asked.action_name);
    for slice in [slices.general, slices.specific] {
        let Some(slice) = slice else {
            key.absent();
            continue;
        };
        key.count(slice.id as usize);
        if slice.reads.principal {
            key.text(asked.principal_name);
        }
        if slice.reads.resource {
            key.text(asked.resource_name);
        }
        record_project(asked.context, &slice.reads.context, &mut key);
        for relation in &slice.reads.relations {
            relation.write(asked.context, &mut key);
        }
    }
    key
}

fn evaluated<R: Attributes>(
    snapshot: &PolicySnapshot,
    slices: Slices<'_>,
    asked: &Asked<'_, R>,
) -> Result<Answer, EvaluationError> {
    let mut answer = Answer::default();
    for slice in slices.iter() {
        let context = cedar_context(asked.context, &slice.reads.context)?;
        let request = request(asked.principal, asked.action, asked.resource, context)?;
        ask(snapshot, &request, &slice.set, &mut answer);
    }
    Ok(answer)
}

fn request(
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

/// Asks one slice and adds its answer.
fn ask(snapshot: &PolicySnapshot, request: &Request, set: &PolicySet, answer: &mut Answer) {
    let response = Authorizer::new().is_authorized(request, set, snapshot.action_entities());
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

/// Cedar's answer to a request with a whole context, on every slice it applies to.
pub fn evaluate(
    snapshot: &PolicySnapshot,
    principal: &EntityUid,
    action: &EntityUid,
    resource: &EntityUid,
    context: Context,
) -> Result<Answer, EvaluationError> {
    let request = request(principal, action, resource, context)?;
    let mut answer = Answer::default();
    for slice in snapshot.index().slices(action, resource).iter() {
        ask(snapshot, &request, &slice.set, &mut answer);
    }
    Ok(answer)
}
