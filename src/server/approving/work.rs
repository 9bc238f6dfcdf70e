//! server::approving::work: the approved work, in a task of its own that owns its completion
//! and its log records, so the approver's connection can go away at any point. In order: when
//! the asking MCP client has not come back yet, wait for it (`absent`: withdrawn, never run,
//! if it does not come); the `approved` record of the ask's decision; the call decided again
//! on the facts, snapshot and state of this moment (a new decision record, linked to the
//! approval by a second `approved` record), unless the held call is not the one approved
//! (its digest, `call_changed`: never decided again nor run); then, if the re-decision holds, the follow-up and
//! the call — or, for a consent card, consent and then the call's next step (`next`); then
//! the outcome record and the end of the approval, `completed` or `failed`, within the run
//! deadline. A log failure before anything ran puts the approval back to pending (C15).

use std::sync::OnceLock;

use serde_json::Value;
use tokio::sync::oneshot;

use super::redecide::{judge, Verdict};
use crate::audit::record::ApprovalAction;
use crate::authz::{Approval, ApprovalKind, Decision};
use crate::server::error::ApiError;
use crate::server::execute::error_json;
use crate::server::gateway::{Pipeline, Prepared};
use crate::server::journal::Answer;
use crate::store::approvals::{
    ApprovalStatus, Binding, Changed, Claim, ClientWait, Intake, PendingCall,
};

/// Tells the waiting request whether the work's records were written (`Err`: the approval
/// is pending again).
pub type Started = oneshot::Sender<Result<(), ApiError>>;

pub struct Work {
    pub(super) state: Pipeline,
    pub(super) approver: String,
    /// The approver's note, logged with each `approved` record.
    note: Option<String>,
    /// The decision the ask was logged under.
    asked: String,
    /// The re-decision's id once it is logged: the outcome belongs to it.
    redecided: OnceLock<String>,
    /// After a consent card: the decision the call ran under once connected (`next`).
    connected: OnceLock<String>,
    pub(super) id: String,
    /// Whether the asking client waits for the result (back by the time the work runs).
    pub(super) client: ClientWait,
    /// The call and policy set the approval was asked for (issue 35 §3).
    bound: Option<Binding>,
    /// The asking call's span (`PendingCall::trace`), kept for a claim given back.
    trace: Option<String>,
}

/// How the work ended: the result the asking agent receives and the approval's status.
pub(super) struct Ended {
    pub result: Value,
    pub status: ApprovalStatus,
}

impl Ended {
    /// A call's result: `failed` when it carries an error kind.
    pub fn of(result: Value) -> Ended {
        let status = if result.get("error").is_some() {
            ApprovalStatus::Failed
        } else {
            ApprovalStatus::Completed
        };
        Ended { result, status }
    }
}

impl Work {
    pub fn new(state: Pipeline, approver: String, note: Option<String>, claim: &Claim) -> Self {
        Self {
            state,
            approver,
            note,
            asked: claim.decision_id.clone(),
            redecided: OnceLock::new(),
            connected: OnceLock::new(),
            id: claim.id.clone(),
            client: match claim.client {
                ClientWait::NotYet => ClientWait::Waiting,
                client => client,
            },
            bound: claim.bound.clone(),
            trace: claim.call.trace.clone(),
        }
    }

    /// Runs the work under the run deadline and always ends the approval. An approval whose
    /// MCP client has not come back for the result first waits for it (A16).
    pub async fn run(self, claim: Claim, started: Started) {
        if claim.client == ClientWait::NotYet && !self.client_came_back().await {
            self.never_received(claim).await;
            return;
        }
        let deadline = self.state.inner().approving.approvals.limits().run_deadline;
        let ended = match tokio::time::timeout(deadline, self.carry_out(claim, started)).await {
            Ok(Some(ended)) => ended,
            // Put back to pending: nothing ran, nothing is left to end.
            Ok(None) => return,
            Err(_) => Ended::of(error_json(
                "deadline",
                &format!(
                    "the approved work did not finish within {} s (`approvals.run_deadline_seconds`); the call may or may not have reached the upstream",
                    deadline.as_secs()
                ),
            )),
        };
        self.end(ended).await;
    }

    /// The work proper; `None` when the approval went back to pending.
    async fn carry_out(&self, claim: Claim, started: Started) -> Option<Ended> {
        if let Some(Err(changed)) =
            (self.bound.as_ref()).map(|bound| bound.holds_for(&claim.call.intake.call))
        {
            // Not the call that was approved (a store row changed under it): logged as
            // approved, never decided again nor run.
            return self.refuse_changed(claim, started, &changed).await;
        }
        let ready = match self.redecide(claim).await {
            Ok(ready) => ready,
            Err((claim, error)) => {
                let inner = self.state.inner();
                inner
                    .approving
                    .approvals
                    .release(claim, inner.clock.now())
                    .await;
                let _ = started.send(Err(error));
                return None;
            }
        };
        let _ = started.send(Ok(()));
        Some(match judge(&ready.decision, &ready.card, &ready.kinds) {
            Verdict::Run(approved) if super::next::connects(&ready.card, &ready.prepared) => {
                self.connect_then(ready.prepared, &ready.card, approved)
                    .await
            }
            Verdict::Run(approved) => {
                Ended::of(self.state.execute(&ready.prepared, &approved).await)
            }
            Verdict::Refuse { kind, message } => {
                let changed = (self.bound.as_ref())
                    .and_then(|bound| bound.policies_changed(&ready.decision.snapshot));
                let message = match changed {
                    Some(changed) => format!("{message} ({changed})"),
                    None => message,
                };
                Ended::of(error_json(kind, &message))
            }
        })
    }

    /// The held call is not the approved one: the approval is logged and ends `failed` with
    /// `call_changed`; a log failure puts it back to pending (`None`).
    async fn refuse_changed(
        &self,
        claim: Claim,
        started: Started,
        changed: &Changed,
    ) -> Option<Ended> {
        if let Err(error) = self.approved(&self.asked).await {
            let inner = self.state.inner();
            inner
                .approving
                .approvals
                .release(claim, inner.clock.now())
                .await;
            let _ = started.send(Err(error));
            return None;
        }
        let _ = started.send(Ok(()));
        tracing::error!(approval = %self.id, approved = %changed.approved, held = %changed.held, "an approved call is not the call that was approved: not run");
        Some(Ended::of(error_json("call_changed", &changed.to_string())))
    }

    /// Logs the approval, then decides the call again and logs that decision; on a log
    /// failure gives the claim back.
    async fn redecide(&self, claim: Claim) -> Result<Redecided, (Claim, ApiError)> {
        if let Err(error) = self.approved(&self.asked).await {
            return Err((claim, error));
        }
        let Claim {
            card,
            call: PendingCall { intake, kinds, .. },
            ..
        } = claim;
        // The approval re-decides on the policies current now, gates first.
        let prepared = match self.state.prepare_again(intake).await {
            Ok(prepared) => prepared,
            Err((intake, error)) => return Err(self.give_back(intake, card, kinds, error)),
        };
        let decision = match self.state.decide_and_record(&prepared).await {
            Ok(decision) => decision,
            Err(error) => return Err(self.give_back(prepared.intake, card, kinds, error)),
        };
        if let Err(error) = self.approved(&prepared.decision_id).await {
            return Err(self.give_back(prepared.intake, card, kinds, error));
        }
        let _ = self.redecided.set(prepared.decision_id.clone());
        Ok(Redecided {
            prepared,
            decision,
            card,
            kinds,
        })
    }

    /// The claim again, to put the approval back to pending with its call.
    fn give_back(
        &self,
        intake: Intake,
        card: Approval,
        kinds: Vec<ApprovalKind>,
        error: ApiError,
    ) -> (Claim, ApiError) {
        let call = PendingCall {
            intake,
            kinds,
            trace: self.trace.clone(),
        };
        let claim = Claim {
            id: self.id.clone(),
            decision_id: self.asked.clone(),
            card,
            call,
            client: self.client,
            bound: self.bound.clone(),
        };
        (claim, error)
    }

    /// The call runs under `decision_id` (decided again once connected): its outcome is that
    /// decision's.
    pub(super) fn ran_under(&self, decision_id: &str) {
        let _ = self.connected.set(decision_id.to_string());
    }

    pub(super) async fn approved(&self, decision_id: &str) -> Result<(), ApiError> {
        let inner = self.state.inner();
        let answer = Answer::new(
            decision_id,
            &self.id,
            ApprovalAction::Approved,
            &self.approver,
        );
        inner
            .journal
            .approval(
                answer.note(self.note.as_deref()).bound(self.bound.as_ref()),
                inner.clock.now(),
            )
            .await
    }

    /// The outcome record (linked to the re-decision when there is one), then the approval's
    /// end; the log comes first so a reader who sees the end finds the record.
    async fn end(&self, ended: Ended) {
        let inner = self.state.inner();
        let decision_id = (self.connected.get())
            .or(self.redecided.get())
            .unwrap_or(&self.asked);
        inner
            .journal
            .outcome(decision_id, &ended.result, inner.clock.now())
            .await;
        inner
            .approving
            .approvals
            .finish(
                &self.id,
                ended.status,
                Some(ended.result),
                inner.clock.now(),
            )
            .await;
    }
}

/// A held call decided again (and logged), with the card and approvals the human gave.
struct Redecided {
    prepared: Prepared,
    decision: Decision,
    card: Approval,
    kinds: Vec<ApprovalKind>,
}
