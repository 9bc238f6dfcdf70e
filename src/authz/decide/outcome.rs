//! authz::decide::outcome: how a decision is written once the questions are answered — the
//! ask with its card, a hard deny, a deny despite approval, a deny for evaluation errors — with
//! the reason text, the determining policies and the requests evaluated.

use std::collections::BTreeSet;

use cedar_policy::PolicyId;

use super::super::card::{card, Approval};
use super::super::context::CallContext;
use super::super::decision::{BlockedTarget, Decision, Outcome};
use super::super::reason::{policy_ids, reasons};
use super::super::{ApprovalKind, EvaluationError};
use super::Run;
use crate::authz::CallFacts;

impl Run<'_> {
    pub(super) fn ask_decision(
        &mut self,
        facts: &CallFacts,
        kinds: &BTreeSet<ApprovalKind>,
        forbids: &BTreeSet<PolicyId>,
        asking: &BTreeSet<PolicyId>,
        context: &CallContext,
    ) -> Decision {
        let mut ordered = kinds.iter().copied();
        let Some(primary) = ordered.next() else {
            return self.hard_deny(forbids, context);
        };
        match card(primary, ordered.collect(), facts) {
            Some(approval) => {
                // Both the ask rules and the permits that hold once approved determine an
                // ask; the reason is the ask rules'.
                let mut decision = self.finish(Outcome::Ask, forbids, context, Some(approval));
                decision.reason = reasons(self.snapshot, asking, context)
                    + &blocked_detail(&decision.blocked_targets);
                decision
            }
            None => {
                self.errors.push(format!(
                    "the {} approval card cannot be built from the facts given",
                    primary.as_str()
                ));
                self.deny_for_errors(forbids, context)
            }
        }
    }

    pub(super) fn hard_deny(
        &mut self,
        forbids: &BTreeSet<PolicyId>,
        context: &CallContext,
    ) -> Decision {
        // Report only the hard denies when asks were also pending: they decided. A gate holds
        // before anything is asked of the upstream, so when one holds the other hard denies
        // were decided on facts askgate never observed: only the gates are shown (A3).
        let hard: BTreeSet<PolicyId> = forbids
            .iter()
            .filter(|id| self.snapshot.meta(id).is_none_or(|meta| meta.ask.is_none()))
            .cloned()
            .collect();
        let gates: BTreeSet<PolicyId> = hard
            .iter()
            .filter(|id| self.snapshot.meta(id).is_some_and(|meta| meta.gate))
            .cloned()
            .collect();
        let shown = if !gates.is_empty() {
            gates
        } else if hard.is_empty() {
            forbids.clone()
        } else {
            hard
        };
        let mut decision = self.finish(Outcome::Deny, &shown, context, None);
        if shown.is_empty() {
            decision.reason = "no policy permits this call".to_string();
        }
        decision
    }

    /// An ask that no approval could lift here (e.g. dontAsk, no prompt): the stopping rules
    /// lead the reason, and the ask rules that raised the question follow.
    pub(super) fn denied_despite_approval(
        &mut self,
        stopping: &BTreeSet<PolicyId>,
        determining: &BTreeSet<PolicyId>,
        context: &CallContext,
    ) -> Decision {
        let mut decision = self.finish(Outcome::Deny, determining, context, None);
        let asked: BTreeSet<PolicyId> = determining.difference(stopping).cloned().collect();
        decision.reason = match (
            reasons(self.snapshot, stopping, context),
            reasons(self.snapshot, &asked, context),
        ) {
            (stop, _) if stop.is_empty() => "no policy permits this call once approved".to_string(),
            (stop, ask) if ask.is_empty() => stop,
            (stop, ask) => format!("{stop} (the call needed approval: {ask})"),
        };
        decision
    }

    pub(super) fn deny_for_errors(
        &mut self,
        forbids: &BTreeSet<PolicyId>,
        context: &CallContext,
    ) -> Decision {
        let mut decision = self.finish(Outcome::Deny, forbids, context, None);
        decision.reason = format!(
            "denied: policy evaluation failed ({})",
            self.errors.join("; ")
        );
        decision
    }

    pub(super) fn finish(
        &mut self,
        outcome: Outcome,
        policies: &BTreeSet<PolicyId>,
        context: &CallContext,
        approval: Option<Approval>,
    ) -> Decision {
        let mut reason = reasons(self.snapshot, policies, context);
        if outcome != Outcome::Allow {
            reason.push_str(&blocked_detail(&self.blocked));
        }
        let policies = policy_ids(self.snapshot, policies);
        self.decision(outcome, reason, policies, approval)
    }

    pub(super) fn failed(&mut self, error: &EvaluationError) -> Decision {
        self.errors.push(error.to_string());
        self.decision(Outcome::Deny, format!("denied: {error}"), Vec::new(), None)
    }

    /// The decision, taking what the run collected (errors, targets, requests).
    fn decision(
        &mut self,
        outcome: Outcome,
        reason: String,
        policies: Vec<String>,
        approval: Option<Approval>,
    ) -> Decision {
        let step_up = if outcome == Outcome::Deny {
            self.snapshot.step_up_scopes(&policies)
        } else {
            Vec::new()
        };
        let rate_limited = outcome == Outcome::Deny && self.snapshot.rate_limits(&policies);
        Decision {
            decision: outcome,
            reason,
            step_up,
            rate_limited,
            policies,
            approval,
            errors: std::mem::take(&mut self.errors),
            target_policies: std::mem::take(&mut self.target_policies)
                .into_iter()
                .collect(),
            blocked_targets: std::mem::take(&mut self.blocked),
            snapshot: self.snapshot.hash().to_string(),
            requests: std::mem::take(&mut self.requests),
        }
    }
}

/// ` (reserved path: CLAUDE.md; ...)` for blocked targets, or nothing.
fn blocked_detail(blocked: &[BlockedTarget]) -> String {
    if blocked.is_empty() {
        return String::new();
    }
    let detail: Vec<&str> = blocked
        .iter()
        .flat_map(|target| target.reasons.iter().map(String::as_str))
        .collect();
    format!(" ({})", detail.join("; "))
}
