//! server::approving::next: what approving a consent card goes on to do (A2). Consent is its
//! own step: it is recorded first, then the held call is decided again now that Claude Design
//! is connected. Allowed (or asking only for what the human also gave, or a `finalize_plan`,
//! whose consent card says approving runs it), the call runs under this approval. Asking for another card — a tokenless write's project grant — the same held
//! call moves to a new pending approval with that card: the asking agent keeps waiting, the
//! approver sees the next card at once, and this approval ends `completed`, its result naming
//! the next one (`next_approval`). The approval that recorded consent ends `failed` only when
//! the call it then ran failed.

use serde_json::{json, Value};

use super::work::{Ended, Work};
use crate::authz::{Approval, ApprovalKind, Decision, Outcome};
use crate::server::execute::record_consent;
use crate::server::gateway::{Handled, Prepared};
use crate::server::present::card::kind_label;
use crate::store::approvals::{ApprovalStatus, ApprovedCall, ClientWait};

/// The result's key naming the approval the call moved to.
pub const NEXT_APPROVAL: &str = "next_approval";

/// An approved consent card of a Design call where approvals may record: consent is recorded
/// first and the call decided again (a subagent's or a hooked session's card runs as before,
/// and records nothing).
pub fn connects(card: &Approval, prepared: &Prepared) -> bool {
    card.kind() == ApprovalKind::Consent
        && matches!(prepared.intake.call, ApprovedCall::Design(_))
        && prepared.intake.session.may_record()
}

/// The approval a result hands its call on to, if any.
pub fn next_approval(result: Option<&Value>) -> Option<&str> {
    result?.get(NEXT_APPROVAL)?.as_str()
}

impl Work {
    /// Records consent, decides the call again, then runs it or hands it on.
    pub(super) async fn connect_then(
        &self,
        prepared: Prepared,
        consent: &Approval,
        given: Vec<ApprovalKind>,
    ) -> Ended {
        if let Err(failure) = record_consent(&self.state.inner().account).await {
            return Ended::of(failure);
        }
        let rest: Vec<ApprovalKind> = given
            .into_iter()
            .filter(|kind| *kind != ApprovalKind::Consent)
            .collect();
        let (prepared, decision) = match self.decided_again(prepared).await {
            Ok(decided) => decided,
            Err(error) => {
                return connected(&format!(
                    "but the call could not be decided again ({error}): make the call again"
                ))
            }
        };
        match (decision.decision, decision.approval.clone()) {
            (Outcome::Allow, _) => self.run_connected(&prepared, &rest).await,
            (Outcome::Ask, Some(card)) if covered(&card, &rest) || runs_anyway(consent) => {
                self.run_connected(&prepared, &rest).await
            }
            (Outcome::Ask, Some(card)) => self.hand_on(prepared, decision, &card).await,
            _ => connected(&format!(
                "but decided again now that it is connected, the call is denied: {} (no call \
                 was sent)",
                decision.reason
            )),
        }
    }

    /// The call gathered and decided again on the live snapshot (logged), linked to this
    /// approval by an `approved` record; its outcome is then this decision's.
    async fn decided_again(
        &self,
        prepared: Prepared,
    ) -> Result<(Prepared, Decision), crate::server::error::ApiError> {
        let again = self
            .state
            .prepare_again(prepared.intake)
            .await
            .map_err(|(_, error)| error)?;
        let decision = self.state.decide_and_record(&again).await?;
        Ok((again, decision))
    }

    async fn run_connected(&self, prepared: &Prepared, rest: &[ApprovalKind]) -> Ended {
        if let Err(error) = self.approved(&prepared.decision_id).await {
            return connected(&format!(
                "but its approval could not be logged ({error}), so the call was not sent: \
                 make the call again"
            ));
        }
        self.ran_under(&prepared.decision_id);
        // Consent is recorded whatever the call's answer; `failed` only when the call that
        // ran under this approval failed.
        Ended::of(self.state.execute(prepared, rest).await)
    }

    /// The held call moves to a new pending approval with the card it now asks for.
    async fn hand_on(&self, mut prepared: Prepared, decision: Decision, card: &Approval) -> Ended {
        let inner = self.state.inner();
        let now = inner.clock.now();
        // The next card lives as long as this one did when a client waits for it.
        if self.client != ClientWait::Polls {
            let view = inner.approving.approvals.view(&self.id, now).await;
            prepared.arrival.waits_for = view
                .ok()
                .and_then(|view| {
                    std::time::Duration::try_from(view.expires_at - view.created_at).ok()
                })
                .map(|life| life.saturating_sub(super::WAIT_MARGIN));
        }
        let principal = prepared.intake.session_key.principal.clone();
        let held = self
            .state
            .hold(&principal, prepared, decision, self.client)
            .await;
        let next = match held {
            Ok(Handled::Asked { approval, .. }) if approval.status == ApprovalStatus::Pending => {
                approval
            }
            Ok(_) => {
                return connected(
                    "but the call's next approval could not be held: make the call again",
                )
            }
            Err(error) => {
                return connected(&format!(
                    "but the call's next approval could not be held ({error}): make the call again"
                ))
            }
        };
        let text = format!(
            "Claude Design is now connected for this account (consent recorded by `{}`). This \
             call needs one more approval before it runs: approval `{}` ({}: {}).",
            self.approver,
            next.id,
            kind_label(card.kind()),
            card.scope()
        );
        Ended {
            result: json!({"content": [{"type": "text", "text": text}], "isError": false,
                NEXT_APPROVAL: next.id}),
            status: ApprovalStatus::Completed,
        }
    }
}

/// The card asks only for kinds the human gave with the consent card.
fn covered(card: &Approval, given: &[ApprovalKind]) -> bool {
    given.contains(&card.kind())
}

/// A consent card whose message promises to run its call as it is: a `finalize_plan`'s says
/// approving "connects Claude Design and runs this finalize_plan; its paths are not
/// pre-approved", so its plan card is not shown next (no plan is registered).
fn runs_anyway(consent: &Approval) -> bool {
    matches!(consent, Approval::Consent { operation, .. } if operation == "finalize_plan")
}

/// Consent was recorded, and the call did not go on (`rest` says why): `completed`, since the
/// approval did what its card said, with a tool error for the agent.
fn connected(rest: &str) -> Ended {
    let text =
        format!("Claude Design is now connected for this account (consent recorded), {rest}");
    Ended {
        result: json!({"content": [{"type": "text", "text": text}], "isError": true}),
        status: ApprovalStatus::Completed,
    }
}
