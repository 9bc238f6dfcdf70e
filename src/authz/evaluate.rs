//! authz::evaluate: one question to Cedar and its answer, combined over the slices it is asked
//! on exactly as one evaluation of the whole set would: any satisfied forbid denies, else any
//! satisfied permit allows, else deny. Evaluation errors are returned, never swallowed.
//!
//! `Evaluator` picks who answers a decision's questions: the answer cache on the slices
//! (`authz::cache`, the decision path) or plain Cedar on the whole set (`authz::reference`).
//! `evaluate` asks with a whole context given as is (for requests built outside a call).

use std::sync::Arc;

use cedar_policy::{Context, EntityUid};

use super::cache::project::Attributes;
use super::cache::{ask, request, Answer, Asked, Questions};
use super::reference::Whole;
use super::snapshot::PolicySnapshot;
use super::EvaluationError;

/// Who answers a decision's questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Evaluator {
    /// The slices, through the snapshot's answer cache: the decision path.
    Cache,
    /// Plain Cedar on the whole set and the whole context (`authz::reference`).
    Reference,
}

impl Evaluator {
    /// Who answers the questions about `action` on `resource`.
    pub(crate) fn on<'s>(
        self,
        snapshot: &'s PolicySnapshot,
        action: &EntityUid,
        resource: &EntityUid,
    ) -> Answerer<'s> {
        match self {
            Self::Cache => Answerer::Cache(snapshot.answers().on(action, resource)),
            Self::Reference => Answerer::Reference(snapshot),
        }
    }
}

/// The questions about one action and resource, and who answers them.
pub(crate) enum Answerer<'s> {
    Cache(Questions<'s>),
    Reference(&'s PolicySnapshot),
}

impl Answerer<'_> {
    /// Cedar's answer to `asked`.
    pub(crate) fn answer<R: Attributes + Whole>(
        &self,
        asked: &Asked<'_, R>,
    ) -> Result<Arc<Answer>, EvaluationError> {
        match self {
            Self::Cache(questions) => questions.answer(asked),
            Self::Reference(snapshot) => super::reference::answer(snapshot, asked).map(Arc::new),
        }
    }
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
        ask(
            snapshot.action_entities(),
            &request,
            &slice.set,
            &mut answer,
        );
    }
    Ok(answer)
}
