//! server::approving::routing: who may answer which approval (issue 35 §1) — the approving
//! set of the policy generation in force (`server::policies`), and the configuration it reads; one question
//! per approver, answer and approval (`authz::approving`). Every surface lists and answers
//! through [`Routing`]: the approvals API and the console show an approver only what they
//! may answer, and an answer they may not give is refused with the policy's reason before the
//! approval is touched.

use std::sync::Arc;

use crate::authz::approving::{
    eligibility, ApprovalFacts, Approver, ApprovingSettings, Eligibility, Vote,
};
use crate::authz::PolicySnapshot;
use crate::server::caller::{Caller, Callers, Person};
use crate::server::policies::Policies;
use crate::store::approvals::ApprovalView;

pub struct Routing {
    policies: Arc<Policies>,
    settings: ApprovingSettings,
    /// `approvals.refusal_requires_note`: a refusal without a note is not given.
    refusal_requires_note: bool,
}

impl Routing {
    pub fn new(
        policies: Arc<Policies>,
        settings: ApprovingSettings,
        refusal_requires_note: bool,
    ) -> Self {
        Self {
            policies,
            settings,
            refusal_requires_note,
        }
    }

    /// Whether a refusal must carry a note (`approvals.refusal_requires_note`).
    pub fn refusal_requires_note(&self) -> bool {
        self.refusal_requires_note
    }

    /// The approving set in force.
    pub fn set(&self) -> Arc<PolicySnapshot> {
        self.policies.current().approving.clone()
    }

    /// Whether `caller` (an approver) may give `vote` on `view`. The person's attributes are
    /// the caller's own (an IdP token's claims), else what `callers` configures for that
    /// principal (static tokens, console sessions).
    pub fn may(
        &self,
        callers: &Callers,
        caller: &Caller,
        vote: Vote,
        view: &ApprovalView,
    ) -> Eligibility {
        let person = if caller.person == Person::default() {
            callers.person(&caller.principal)
        } else {
            caller.person.clone()
        };
        let approver = Approver {
            principal: &caller.principal,
            groups: &person.groups,
            email: &person.email,
        };
        eligibility(&self.set(), approver, vote, &facts_of(view), self.settings)
    }

    /// Whether `caller` may answer `view` at all (approve or refuse): what lists show.
    pub fn may_answer(&self, callers: &Callers, caller: &Caller, view: &ApprovalView) -> bool {
        [Vote::Approve, Vote::Refuse]
            .into_iter()
            .any(|vote| self.may(callers, caller, vote, view).is_eligible())
    }
}

/// The approval as its card shows it, for the approving policies.
pub fn facts_of(view: &ApprovalView) -> ApprovalFacts {
    let kind = view.card.kind();
    let mut kinds = vec![kind.as_str().to_string()];
    kinds.extend(
        view.card
            .also()
            .iter()
            .map(|kind| kind.as_str().to_string()),
    );
    kinds.sort();
    kinds.dedup();
    ApprovalFacts {
        kind: kind.as_str().to_string(),
        kinds,
        tool: view.summary.tool.clone(),
        operation: view.summary.operation.clone(),
        project: view.summary.project_id.clone().unwrap_or_default(),
        targets: view.summary.targets.to_vec(),
        writes: view.summary.writes,
        requester: view.requested_by.clone(),
        agent: view.asked_as.agent.as_str().to_string(),
        agent_id: view.asked_as.agent_id.clone().unwrap_or_default(),
        mode: view.asked_as.mode.as_str().to_string(),
        attestation: view.asked_as.attestation.as_str().to_string(),
        escalated: view.escalated,
    }
}
