//! authz::decide: the tri-state decision. Two questions of the same policy set: "allowed
//! without a human?" (no approvals) and, only when every forbid that stopped it is an `@ask`,
//! "allowed if a human gives the approvals asked?". Allow on the first → allow; allow only on
//! the second → ask; otherwise deny. Precedence deny > ask > allow; any evaluation error
//! denies and is reported; a set with no applicable permit denies.

use std::collections::BTreeSet;
use std::sync::Arc;

use cedar_policy::{EntityUid, PolicyId};

use super::cache::reads::Tree;
use super::cache::{Answer, Asked};
use super::context::{CallContext, SurfaceContext};
use super::decision::{Decision, EvaluatedRequest, Outcome, Question, RequestContext, Requests};
use super::evaluate::Evaluator;
use super::snapshot::PolicySnapshot;
use super::targets::{classify, Classification, TargetCall};
use super::{ApprovalKind, EvaluationError};
use crate::authz::{CallFacts, EntityRef};

mod outcome;

/// Decides one call. Pure: the same facts and snapshot always give the same decision.
pub fn decide(facts: &CallFacts, snapshot: &PolicySnapshot) -> Decision {
    decide_by(facts, snapshot, Evaluator::Cache)
}

/// `decide` with every question answered by plain Cedar on the whole set and context
/// (`authz::reference`): what the cache is proved against.
pub fn by_reference(facts: &CallFacts, snapshot: &PolicySnapshot) -> Decision {
    decide_by(facts, snapshot, Evaluator::Reference)
}

/// `decide` with its questions answered by `evaluator`.
pub(crate) fn decide_by(
    facts: &CallFacts,
    snapshot: &PolicySnapshot,
    evaluator: Evaluator,
) -> Decision {
    let mut run = Run::new(snapshot, evaluator);
    match run.decide(facts) {
        Ok(decision) => decision,
        Err(error) => run.failed(&error),
    }
}

/// Whether `decide(facts, snapshot)` would deny with a `@gate` among the determining policies
/// (`PolicySnapshot::denied_by_gate`), found by asking only the gate policies (`Run::gated`).
/// No reason, card or request record is built.
pub fn denied_by_gate(facts: &CallFacts, snapshot: &PolicySnapshot) -> bool {
    let mut run = Run::new(snapshot, Evaluator::Cache);
    run.gated(facts).unwrap_or(false)
}

struct Run<'a> {
    snapshot: &'a PolicySnapshot,
    evaluator: Evaluator,
    /// How the request records name the call's entities (rendered once per call).
    names: Names,
    requests: Requests,
    errors: Vec<String>,
    blocked: Vec<super::decision::BlockedTarget>,
    target_policies: BTreeSet<String>,
}

impl<'a> Run<'a> {
    fn new(snapshot: &'a PolicySnapshot, evaluator: Evaluator) -> Self {
        Self {
            snapshot,
            evaluator,
            names: Names::default(),
            requests: Requests::default(),
            errors: Vec::new(),
            blocked: Vec::new(),
            target_policies: BTreeSet::new(),
        }
    }

    fn decide(&mut self, facts: &CallFacts) -> Result<Decision, EvaluationError> {
        let principal = facts.principal.uid()?;
        let action = action_uid(&facts.action)?;
        let resource = facts.resource.uid()?;
        self.names = Names::of(facts);
        let mut context = Arc::clone(&facts.context);
        self.classify_targets(facts, &principal, &resource, &mut context)?;

        let unapproved = self.ask(
            &principal,
            &action,
            &resource,
            &context,
            Question::Unapproved,
        )?;
        if unapproved.is_clean_allow() {
            return Ok(self.finish(Outcome::Allow, &unapproved.permits, &context, None));
        }
        if !unapproved.errors.is_empty() {
            return Ok(self.deny_for_errors(&unapproved.forbids, &context));
        }
        let asked = self.asked_kinds(&unapproved.forbids);
        let Some(kinds) = asked else {
            return Ok(self.hard_deny(&unapproved.forbids, &context));
        };
        let approved_context = with_approvals(&context, &kinds);
        let approved = self.ask(
            &principal,
            &action,
            &resource,
            &approved_context,
            Question::Approved,
        )?;
        if !approved.is_clean_allow() {
            // The ask rules and what stopped the approval both determine this deny.
            let determining: BTreeSet<PolicyId> = approved
                .forbids
                .union(&unapproved.forbids)
                .cloned()
                .collect();
            if !approved.errors.is_empty() {
                return Ok(self.deny_for_errors(&determining, &approved_context));
            }
            return Ok(self.denied_despite_approval(
                &approved.forbids,
                &determining,
                &approved_context,
            ));
        }
        // The ask rules and the permits that hold once approved both determine an ask.
        let determining: BTreeSet<PolicyId> = unapproved
            .forbids
            .union(&approved.permits)
            .cloned()
            .collect();
        Ok(self.ask_decision(facts, &kinds, &determining, &unapproved.forbids, &context))
    }

    /// `denied_by_gate`: whether a `@gate` policy holds on the call's (unapproved) context,
    /// asked of the gate policies alone.
    ///
    /// Exact: `decide` denies with a gate among the determining policies iff a gate holds on
    /// the unapproved or the approved question's context. Those differ only in `approvals`,
    /// which no gate reads (`load` refuses one that does), so a gate holds on one iff it holds
    /// on the other. A gate that holds is a hard forbid (never an `@ask`), so the decision is
    /// a deny it determines: a hard deny, a deny for errors, or a deny despite approval. The
    /// targets are classified first only when a gate reads them. An evaluation error is no
    /// gate (the full decision denies for it).
    fn gated(&mut self, facts: &CallFacts) -> Result<bool, EvaluationError> {
        let action = action_uid(&facts.action)?;
        let gates = self.snapshot.answers().gates(&action);
        if gates.is_empty() {
            return Ok(false);
        }
        let principal = facts.principal.uid()?;
        let resource = facts.resource.uid()?;
        self.names = Names::of(facts);
        let mut context = Arc::clone(&facts.context);
        if gates.context_reads().any(reads_targets) {
            self.classify_targets(facts, &principal, &resource, &mut context)?;
        }
        let asked = Asked {
            principal: &principal,
            principal_name: &self.names.principal,
            action: &action,
            action_name: &self.names.action,
            resource: &resource,
            resource_name: &self.names.resource,
            context: &*context,
        };
        let answer = gates.answer(&asked)?;
        Ok(self.any_gate(&answer.forbids))
    }

    fn any_gate(&self, forbids: &BTreeSet<PolicyId>) -> bool {
        forbids
            .iter()
            .any(|id| self.snapshot.meta(id).is_some_and(|meta| meta.gate))
    }

    /// Classifies target paths when the call's limits pass; a blocked target makes the
    /// verdict `blocked` (the only change to the gathered context, so only then is it copied).
    fn classify_targets(
        &mut self,
        facts: &CallFacts,
        principal: &EntityUid,
        resource: &EntityUid,
        context: &mut Arc<CallContext>,
    ) -> Result<(), EvaluationError> {
        let SurfaceContext::Design(design) = &context.surface else {
            return Ok(());
        };
        if design.targets.verdict != "pass" {
            return Ok(());
        }
        let action_name = if design.targets.set == "deletes" {
            "delete_target"
        } else {
            "write_target"
        };
        let action = action_uid(action_name)?;
        let call = TargetCall {
            principal,
            action: &action,
            resource,
            action_name: EntityRef::action(action_name).to_string().into(),
            principal_name: &self.names.principal,
            resource_name: &self.names.resource,
            project_id: &design.project_id,
            operation: &design.operation,
        };
        let Classification {
            classified,
            requests,
        } = classify(self.snapshot, self.evaluator, &call, &facts.targets);
        if !classified.blocked.is_empty() {
            if let SurfaceContext::Design(design) = &mut Arc::make_mut(context).surface {
                design.targets.verdict = "blocked".to_string();
            }
        }
        self.blocked.clone_from(&classified.blocked);
        self.target_policies.clone_from(&classified.policies);
        self.requests.set_targets(requests);
        self.errors.extend(classified.errors.iter().cloned());
        Ok(())
    }

    fn ask(
        &mut self,
        principal: &EntityUid,
        action: &EntityUid,
        resource: &EntityUid,
        context: &Arc<CallContext>,
        question: Question,
    ) -> Result<Arc<Answer>, EvaluationError> {
        let asked = Asked {
            principal,
            principal_name: &self.names.principal,
            action,
            action_name: &self.names.action,
            resource,
            resource_name: &self.names.resource,
            context: &**context,
        };
        let answer = self
            .evaluator
            .on(self.snapshot, action, resource)
            .answer(&asked)?;
        self.errors.extend(answer.errors.iter().cloned());
        self.requests.push(EvaluatedRequest {
            question,
            principal: Arc::clone(&self.names.principal),
            action: Arc::clone(&self.names.action),
            resource: Arc::clone(&self.names.resource),
            context: RequestContext::Call(Arc::clone(context)),
        });
        Ok(answer)
    }

    /// The approval kinds named by `forbids` when every one of them is an `@ask`.
    fn asked_kinds(&self, forbids: &BTreeSet<PolicyId>) -> Option<BTreeSet<ApprovalKind>> {
        if forbids.is_empty() {
            return None;
        }
        forbids
            .iter()
            .map(|id| self.snapshot.meta(id).and_then(|meta| meta.ask))
            .collect()
    }
}

/// The call's principal, action and resource as request records show them.
#[derive(Default)]
struct Names {
    principal: Arc<str>,
    action: Arc<str>,
    resource: Arc<str>,
}

impl Names {
    fn of(facts: &CallFacts) -> Self {
        Self {
            principal: facts.principal.to_string().into(),
            action: EntityRef::action(&facts.action).to_string().into(),
            resource: facts.resource.to_string().into(),
        }
    }
}

/// Whether a context read reaches the call's targets (`design.targets`).
fn reads_targets(context: &Tree) -> bool {
    let Tree::Fields(fields) = context else {
        return true;
    };
    match fields.get("design") {
        Some(Tree::Fields(design)) => design.contains_key("targets"),
        Some(_) => true,
        None => false,
    }
}

/// The context of the second question: the approvals a human would give, in place of none.
fn with_approvals(context: &CallContext, kinds: &BTreeSet<ApprovalKind>) -> Arc<CallContext> {
    let mut approved = context.clone();
    approved.approvals = kinds.iter().map(|kind| kind.as_str().to_string()).collect();
    Arc::new(approved)
}

fn action_uid(id: &str) -> Result<EntityUid, EvaluationError> {
    EntityRef::action(id).uid()
}
