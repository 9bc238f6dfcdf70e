//! authz::decide: the tri-state decision. Two questions of the same policy set: "allowed
//! without a human?" (no approvals) and, only when every forbid that stopped it is an `@ask`,
//! "allowed if a human gives the approvals asked?". Allow on the first → allow; allow only on
//! the second → ask; otherwise deny. Precedence deny > ask > allow; any evaluation error
//! denies and is reported; a set with no applicable permit denies.

use std::collections::BTreeSet;
use std::sync::Arc;

use cedar_policy::{EntityUid, PolicyId};

use super::context::{CallContext, SurfaceContext};
use super::decision::{Decision, EvaluatedRequest, Outcome, Question, RequestContext};
use super::evaluate::Answer;
use super::memo::{call_answer, CallKey};
use super::snapshot::PolicySnapshot;
use super::targets::{classify, TargetCall};
use super::{ApprovalKind, EvaluationError};
use crate::facts::{CallFacts, EntityRef};

mod outcome;

/// Decides one call. Pure: the same facts and snapshot always give the same decision.
pub fn decide(facts: &CallFacts, snapshot: &PolicySnapshot) -> Decision {
    let mut run = Run::new(snapshot);
    match run.decide(facts) {
        Ok(decision) => decision,
        Err(error) => run.failed(&error),
    }
}

struct Run<'a> {
    snapshot: &'a PolicySnapshot,
    requests: Vec<EvaluatedRequest>,
    errors: Vec<String>,
    blocked: Vec<super::decision::BlockedTarget>,
    target_policies: BTreeSet<String>,
}

impl<'a> Run<'a> {
    fn new(snapshot: &'a PolicySnapshot) -> Self {
        Self {
            snapshot,
            requests: Vec::new(),
            errors: Vec::new(),
            blocked: Vec::new(),
            target_policies: BTreeSet::new(),
        }
    }

    fn decide(&mut self, facts: &CallFacts) -> Result<Decision, EvaluationError> {
        let principal = facts.principal.uid()?;
        let action = action_uid(&facts.action)?;
        let resource = facts.resource.uid()?;
        let mut context = facts.context.clone();
        self.classify_targets(facts, &principal, &resource, &mut context)?;
        let context = Arc::new(context);

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
        let mut approved_context = CallContext::clone(&context);
        approved_context.approvals = kinds.iter().map(|kind| kind.as_str().to_string()).collect();
        let approved_context = Arc::new(approved_context);
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

    /// Classifies target paths when the call's limits pass; a blocked target makes the
    /// verdict `blocked`.
    fn classify_targets(
        &mut self,
        facts: &CallFacts,
        principal: &EntityUid,
        resource: &EntityUid,
        context: &mut CallContext,
    ) -> Result<(), EvaluationError> {
        let SurfaceContext::Design(design) = &mut context.surface else {
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
            project_id: &design.project_id,
            operation: &design.operation,
        };
        let classification = classify(self.snapshot, &call, &facts.targets);
        if !classification.blocked.is_empty() {
            design.targets.verdict = "blocked".to_string();
        }
        self.blocked = classification.blocked;
        self.target_policies = classification.policies;
        self.requests.extend(classification.requests);
        self.errors.extend(classification.errors);
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
        let key = CallKey {
            principal: principal.clone(),
            action: action.clone(),
            resource: resource.clone(),
            context: Arc::clone(context),
        };
        let (answer, memoized) = call_answer(self.snapshot, key)?;
        self.errors.extend(answer.errors.iter().cloned());
        self.requests.push(EvaluatedRequest {
            question,
            principal: principal.to_string().into(),
            action: action.to_string().into(),
            resource: resource.to_string().into(),
            context: RequestContext::Call(Arc::clone(context)),
            memoized,
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

fn action_uid(id: &str) -> Result<EntityUid, EvaluationError> {
    EntityRef::action(id).uid()
}
