//! server::approving: what an ask becomes in the service — a pending approval holding the
//! call and its card (`hold`), and the approver's answer: approve (the follow-up and the call
//! run exactly once, logged) or refuse (logged; the call never runs).

use serde_json::{json, Value};

use super::approvals::{ApprovalStatus, ApprovalView, PendingCall};
use super::caller::Caller;
use super::error::ApiError;
use super::gateway::{AppState, Prepared};
use crate::authz::Decision;

impl AppState {
    pub(super) fn hold(
        &self,
        caller: &Caller,
        prepared: &Prepared,
        decision: &Decision,
    ) -> ApprovalView {
        let inner = self.inner();
        let now = inner.clock.now();
        let Some(card) = decision.approval.clone() else {
            // INVARIANT: `decide` only answers ask with a card.
            return self.closed_view(caller, prepared, decision, now);
        };
        let mut kinds = vec![card.kind()];
        kinds.extend(also(&card));
        let view = ApprovalView {
            id: format!("ap_{}", uuid::Uuid::new_v4().simple()),
            status: ApprovalStatus::Pending,
            requested_by: caller.principal.clone(),
            session_id: prepared.session_id.clone(),
            summary: prepared.facts.summary.clone(),
            card,
            created_at: now,
            expires_at: now + inner.approval_ttl,
            approved_by: None,
            result: None,
        };
        let pending = PendingCall {
            session_id: prepared.session_id.clone(),
            session: prepared.session.clone(),
            call: prepared.call.clone(),
            kinds,
            decision_id: prepared.decision_id.clone(),
        };
        inner.approvals.create(view, pending)
    }

    fn closed_view(
        &self,
        caller: &Caller,
        prepared: &Prepared,
        decision: &Decision,
        now: time::OffsetDateTime,
    ) -> ApprovalView {
        ApprovalView {
            id: String::new(),
            status: ApprovalStatus::Refused,
            requested_by: caller.principal.clone(),
            session_id: prepared.session_id.clone(),
            summary: prepared.facts.summary.clone(),
            card: crate::authz::Approval::Batch {
                tool: prepared.facts.summary.tool.clone(),
                operation: prepared.facts.summary.operation.clone(),
                project_id: None,
                targets: Vec::new(),
                message: decision.reason.clone(),
                scope: "this call only".to_string(),
                also: Vec::new(),
            },
            created_at: now,
            expires_at: now,
            approved_by: None,
            result: None,
        }
    }

    /// An approver approves: the follow-up and the call run exactly once.
    pub async fn approve(&self, caller: &Caller, id: &str) -> Result<ApprovalView, ApiError> {
        use crate::audit::record::ApprovalAction;
        let inner = self.inner();
        let pending = inner
            .approvals
            .start(id, &caller.principal, inner.clock.now())?;
        let logged = inner
            .journal
            .approval(
                &pending.decision_id,
                id,
                ApprovalAction::Approved,
                &caller.principal,
                inner.clock.now(),
            )
            .await;
        if let Err(error) = logged {
            inner.approvals.complete(
                id,
                super::execute::error_json("decision_log", &error.to_string()),
            );
            return Err(error);
        }
        let result = self
            .run(
                &pending.session_id,
                &pending.session,
                &pending.call,
                &pending.kinds,
            )
            .await;
        inner
            .journal
            .outcome(&pending.decision_id, &result, inner.clock.now())
            .await;
        inner.approvals.complete(id, result);
        inner.approvals.view(id, inner.clock.now())
    }

    /// An approver refuses: the call never runs.
    pub async fn refuse(&self, caller: &Caller, id: &str) -> Result<ApprovalView, ApiError> {
        use crate::audit::record::ApprovalAction;
        let inner = self.inner();
        let view = inner.approvals.refuse(id, inner.clock.now())?;
        let decision_id = inner.approvals.decision_id(id).unwrap_or_default();
        let logged = inner
            .journal
            .approval(
                &decision_id,
                id,
                ApprovalAction::Refused,
                &caller.principal,
                inner.clock.now(),
            )
            .await;
        if let Err(error) = logged {
            tracing::warn!(%error, "refusal not logged");
        }
        Ok(view)
    }

    pub fn approval_json(view: &ApprovalView) -> Value {
        json!(view)
    }
}

fn also(card: &crate::authz::Approval) -> Vec<crate::authz::ApprovalKind> {
    use crate::authz::Approval;
    match card {
        Approval::Consent { also, .. }
        | Approval::Grant { also, .. }
        | Approval::Plan { also, .. }
        | Approval::Batch { also, .. } => also.clone(),
    }
}
