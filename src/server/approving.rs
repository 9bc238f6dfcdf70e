//! server::approving: what an ask becomes in the service — a pending approval holding the
//! call, its card and its quorum (`hold`, under the store's caps), and the approvers' answers.
//! An approval that does not complete the quorum is counted and logged (`voted`), taken back
//! if its record cannot be written; the one that completes it claims the approval and
//! hands the claimed call to a spawned task (`work`) that owns its completion and its log
//! records: it decides the call again on the snapshot and state of that moment (`redecide`),
//! then runs the follow-up and the call; the request only waits for it. Refusing is logged
//! before it counts. Expiries are logged by the sweeper (`sweeper`). A call that stops waiting
//! withdraws its approval: ended at once, logged right after (by the sweeper if that fails).

mod absent;
mod next;
mod redecide;
pub mod routing;
mod sweeper;
mod work;

use serde_json::{json, Value};
use tokio::sync::oneshot;
use tracing::Instrument;

use super::caller::Caller;
use super::error::ApiError;
use super::gateway::{Handled, Pipeline, Prepared};
use super::journal::Answer;
use crate::audit::record::ApprovalAction;
use crate::authz::approving::{Eligibility, Vote};
use crate::authz::Decision;
use crate::store::approvals::{
    ApprovalStatus, ApprovalView, AskedAs, Ballot, Binding, ClientWait, CreateError, PendingCall,
    Voted,
};

pub use next::{next_approval, NEXT_APPROVAL};
pub use sweeper::spawn_sweeper;

/// What the approving feature keeps in the pipeline, since every door's ask ends here: the
/// approval books, the webhook's sender, who may answer (`routing`) and how long an approval
/// lives.
pub struct Desk {
    /// The approval books: an ask is held here until an approver decides.
    pub approvals: crate::store::approvals::Approvals,
    /// The approval webhook's sender (does nothing when none is configured).
    pub notifier: super::notify::Notifier,
    /// Who may answer which approval: the approving set and its settings (issue 35).
    pub routing: routing::Routing,
    pub ttl: time::Duration,
}

impl Pipeline {
    /// Holds an asked call for a human, or refuses it (429, logged as the decision's outcome)
    /// when a cap on open approvals would be passed. The call moves into the approval.
    pub(super) async fn hold(
        &self,
        principal: &str,
        prepared: Prepared,
        decision: Decision,
        client: ClientWait,
    ) -> Result<Handled, ApiError> {
        let inner = self.inner();
        let now = inner.clock.now();
        let Some(card) = decision.approval.clone() else {
            // INVARIANT: `decide` only answers ask with a card.
            let approval = Box::new(closed_view(principal, &prepared, &decision, now));
            return Ok(Handled::Asked { decision, approval });
        };
        let mut kinds = vec![card.kind()];
        kinds.extend(card.also().iter().copied());
        let view = ApprovalView {
            id: format!("ap_{}", uuid::Uuid::new_v4().simple()),
            status: ApprovalStatus::Pending,
            requested_by: principal.to_string(),
            session_id: prepared.intake.session_key.id.clone(),
            summary: prepared.facts.summary.clone(),
            card,
            created_at: now,
            expires_at: now + approval_life(inner.approving.ttl, prepared.arrival.waits_for),
            approved_by: None,
            result: None,
            asked_as: AskedAs::of(&prepared.intake.session),
            client,
            quorum: prepared.snapshot.quorum(&decision.policies),
            votes: Vec::new(),
            escalated: false,
            bound: Some(Binding::of(&prepared.intake.call, prepared.snapshot.hash())),
        };
        let decision_id = prepared.decision_id;
        // A request of this process holds the call open, or will once its client is back.
        let held_open = client != ClientWait::Polls;
        let pending = PendingCall {
            intake: prepared.intake,
            kinds,
            trace: crate::trace::traceparent(),
        };
        let created = inner
            .approving
            .approvals
            .create(view, pending, &decision_id, held_open, now)
            .await;
        match created {
            Ok(view) => {
                tracing::Span::current().record("askgate.approval.id", view.id.as_str());
                inner.metrics.approval_asked(view.card.kind().as_str());
                inner.approving.notifier.approval_held(&view, now);
                Ok(Handled::Asked {
                    decision,
                    approval: Box::new(view),
                })
            }
            Err(CreateError::Store(error)) => Err(ApiError::Store(error)),
            Err(CreateError::Limit(limit)) => {
                let message = format!("the call asks for an approval, but {limit}");
                let result = super::execute::error_json("approval_limit", &message);
                inner.journal.outcome(&decision_id, &result, now).await;
                Err(ApiError::TooManyApprovals(message))
            }
        }
    }

    /// An approver approves: the work runs in its own task; this waits for it up to
    /// `approvals.approve_wait_seconds` and then answers with the approval as it stands
    /// (`running` when the work goes on). A log failure before anything ran answers 503 and
    /// leaves the approval pending.
    pub async fn approve(
        &self,
        caller: &Caller,
        id: &str,
        note: Option<String>,
    ) -> Result<ApprovalView, ApiError> {
        self.eligible(caller, id, Vote::Approve).await?;
        let inner = self.inner();
        let limits = *inner.approving.approvals.limits();
        let deadline = tokio::time::Instant::now() + limits.approve_wait;
        let now = inner.clock.now();
        let ballot = Ballot::new(&caller.principal, Vote::Approve, now, note.clone());
        let claim = match inner.approving.approvals.vote(id, ballot, now).await? {
            Voted::Claimed(claim) => *claim,
            Voted::Counted { view, decision_id } => {
                return self
                    .counted(*view, &decision_id, &caller.principal, note.as_deref())
                    .await
            }
        };
        let (started, ready) = oneshot::channel();
        let client = claim.client;
        let work = work::Work::new(self.clone(), caller.principal.clone(), note, &claim);
        let release = crate::trace::release_span(id);
        crate::trace::link(&release, claim.call.trace.as_deref());
        tokio::spawn(crate::trace::carried(
            work.run(claim, started).instrument(release),
        ));
        if client == ClientWait::NotYet {
            // Nothing runs until the asking client is back (A16): the approver is answered at
            // once, the approval `running` with its client `not_yet`.
            return Ok(inner
                .approving
                .approvals
                .view(id, inner.clock.now())
                .await?);
        }
        // The work says whether its records were written; gone means it ended some other way.
        if let Ok(Ok(Err(error))) = tokio::time::timeout_at(deadline, ready).await {
            return Err(error);
        }
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let clock = inner.clock.clone();
        Ok(inner
            .approving
            .approvals
            .wait(id, left, move || clock.now())
            .await?)
    }

    /// An approval that did not complete the quorum: its `voted` record is written, or the
    /// vote is taken back and the answer is 503 (nothing counted that the log does not hold).
    async fn counted(
        &self,
        view: ApprovalView,
        decision_id: &str,
        by: &str,
        note: Option<&str>,
    ) -> Result<ApprovalView, ApiError> {
        let inner = self.inner();
        let logged = inner
            .journal
            .approval(
                Answer::new(decision_id, &view.id, ApprovalAction::Voted, by)
                    .note(note)
                    .bound(view.bound.as_ref()),
                inner.clock.now(),
            )
            .await;
        if let Err(error) = logged {
            // Still pending: taken back. Claimed meanwhile (another approver completed the
            // quorum with it): the view keeps the vote and the run's records name the approval.
            if !inner
                .approving
                .approvals
                .retract(&view.id, by, inner.clock.now())
                .await
            {
                tracing::error!(approval = %view.id, approver = %by, "a vote whose record could not be written was counted");
            }
            return Err(error);
        }
        Ok(view)
    }

    /// An approver refuses: logged first (a failing log answers 503 and leaves the approval
    /// pending), in a task of its own so a dropped request cannot leave it half done. One
    /// refusal refuses, whatever the quorum; `approvals.refusal_requires_note` makes the note
    /// required.
    pub async fn refuse(
        &self,
        caller: &Caller,
        id: &str,
        note: Option<String>,
    ) -> Result<ApprovalView, ApiError> {
        let inner = self.inner();
        if note.is_none() && inner.approving.routing.refusal_requires_note() {
            return Err(ApiError::BadNote(
                "a refusal needs a `note` saying why (`approvals.refusal_requires_note`)"
                    .to_string(),
            ));
        }
        self.eligible(caller, id, Vote::Refuse).await?;
        let now = inner.clock.now();
        let ballot = Ballot::new(&caller.principal, Vote::Refuse, now, note.clone());
        let claim = inner
            .approving
            .approvals
            .claim_refusal(id, ballot, now)
            .await?;
        let state = self.clone();
        let by = caller.principal.clone();
        let task = tokio::spawn(async move {
            let inner = state.inner();
            let logged = inner
                .journal
                .approval(
                    Answer::new(&claim.decision_id, &claim.id, ApprovalAction::Refused, &by)
                        .note(note.as_deref())
                        .bound(claim.bound.as_ref()),
                    inner.clock.now(),
                )
                .await;
            match logged {
                Ok(()) => {
                    let now = inner.clock.now();
                    let result = refused_result(&by, note.as_deref());
                    inner
                        .approving
                        .approvals
                        .finish(&claim.id, ApprovalStatus::Refused, Some(result), now)
                        .await;
                    Ok(inner.approving.approvals.view(&claim.id, now).await?)
                }
                Err(error) => {
                    inner
                        .approving
                        .approvals
                        .release(claim, inner.clock.now())
                        .await;
                    Err(error)
                }
            }
        });
        let wait = inner.approving.approvals.limits().approve_wait;
        match tokio::time::timeout(wait, task).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => Err(ApiError::Unavailable(format!(
                "the refusal did not finish ({error})"
            ))),
            // The refusal goes on being logged; show the approval as it stands.
            Err(_) => Ok(inner
                .approving
                .approvals
                .view(id, inner.clock.now())
                .await?),
        }
    }

    /// The approving policies let `caller` give `vote` on approval `id`, or the answer is
    /// refused (403) with their reason, before the approval is touched (issue 35 §1).
    async fn eligible(&self, caller: &Caller, id: &str, vote: Vote) -> Result<(), ApiError> {
        let inner = self.inner();
        let view = inner
            .approving
            .approvals
            .view(id, inner.clock.now())
            .await?;
        match inner
            .approving
            .routing
            .may(&inner.callers, caller, vote, &view)
        {
            Eligibility::Eligible => Ok(()),
            Eligibility::NotEligible { policies, reason } => {
                tracing::info!(
                    approval = id,
                    approver = %caller.principal,
                    vote = vote.as_str(),
                    policies = %policies.join(","),
                    "an answer to an approval was refused by the approving policies"
                );
                Err(ApiError::NotEligible {
                    id: view.id,
                    vote: vote.as_str(),
                    reason,
                })
            }
        }
    }

    /// The approvals of `views` that `caller` may answer (approve or refuse).
    pub fn answerable(&self, caller: &Caller, views: Vec<ApprovalView>) -> Vec<ApprovalView> {
        let inner = self.inner();
        views
            .into_iter()
            .filter(|view| {
                inner
                    .approving
                    .routing
                    .may_answer(&inner.callers, caller, view)
            })
            .collect()
    }

    /// The asking call stopped waiting (`why` says how): its approval ends as `withdrawn`, so
    /// no approver can run a call whose result nobody would receive. Fails with
    /// `ApprovalClosed` when an approver (or the expiry) came first.
    pub async fn withdraw(&self, id: &str, why: &str) -> Result<ApprovalView, ApiError> {
        let inner = self.inner();
        let withdrawal = inner
            .approving
            .approvals
            .withdraw(id, why, inner.clock.now())
            .await?;
        if sweeper::log_withdrawal(inner, &withdrawal).await.is_err() {
            inner
                .approving
                .approvals
                .requeue_withdrawals(vec![withdrawal], inner.clock.now())
                .await;
        }
        Ok(inner
            .approving
            .approvals
            .view(id, inner.clock.now())
            .await?)
    }

    /// [`Self::withdraw`] without waiting: a task of its own withdraws it and the sweeper
    /// writes the record. For a holder that cannot wait (it is being dropped).
    pub fn withdraw_later(&self, id: &str, why: &str) {
        let (state, id, why) = (self.clone(), id.to_string(), why.to_string());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let inner = state.inner();
            let now = inner.clock.now();
            if let Ok(withdrawal) = inner.approving.approvals.withdraw(&id, &why, now).await {
                inner
                    .approving
                    .approvals
                    .requeue_withdrawals(vec![withdrawal], now)
                    .await;
            }
        });
    }

    pub fn approval_json(view: &ApprovalView) -> Value {
        json!(view)
    }
}

/// How much longer than its asking call's wait an approval lives: the call gives up first and
/// withdraws it (A12), so its status says the call stopped waiting; the expiry only ends an
/// approval whose holder could not.
pub const WAIT_MARGIN: std::time::Duration = std::time::Duration::from_secs(2);

/// An approval lives for the configured TTL, or a moment longer than its asking call waits if
/// that is shorter (the card's time left is then about the time the call really waits).
fn approval_life(ttl: time::Duration, waits_for: Option<std::time::Duration>) -> time::Duration {
    waits_for
        .map(|wait| wait.saturating_add(WAIT_MARGIN))
        .and_then(|wait| time::Duration::try_from(wait).ok())
        .map_or(ttl, |wait| wait.min(ttl))
}

fn closed_view(
    principal: &str,
    prepared: &Prepared,
    decision: &Decision,
    now: time::OffsetDateTime,
) -> ApprovalView {
    ApprovalView {
        id: String::new(),
        status: ApprovalStatus::Refused,
        requested_by: principal.to_string(),
        session_id: prepared.intake.session_key.id.clone(),
        summary: prepared.facts.summary.clone(),
        card: crate::authz::Approval::Batch {
            tool: prepared.facts.summary.tool.clone(),
            operation: prepared.facts.summary.operation.clone(),
            project_id: None,
            targets: Vec::new(),
            writes: Vec::new(),
            deletes: Vec::new(),
            message: decision.reason.clone(),
            scope: "this call only".to_string(),
            also: Vec::new(),
        },
        created_at: now,
        expires_at: now,
        approved_by: None,
        result: None,
        asked_as: AskedAs::of(&prepared.intake.session),
        client: ClientWait::Polls,
        quorum: 1,
        votes: Vec::new(),
        escalated: false,
        bound: None,
    }
}

/// What the asking agent is told of a refusal: who refused, and their note.
fn refused_result(by: &str, note: Option<&str>) -> Value {
    let message = match note {
        Some(note) => format!("refused by `{by}`: {note}"),
        None => format!("refused by `{by}` (no note)"),
    };
    super::execute::error_json("refused", &message)
}

/// The longest approver's note, in characters (code points).
pub const NOTE_CHARS: usize = 500;

/// An approver's note as given: trimmed, empty as none, at most [`NOTE_CHARS`] characters and
/// no control, bidi or invisible characters (it goes into the decision log as written, and a
/// note that reads one way and says another would mislead whoever audits it).
pub fn approval_note(text: Option<&str>) -> Result<Option<String>, ApiError> {
    let Some(text) = text.map(str::trim).filter(|text| !text.is_empty()) else {
        return Ok(None);
    };
    let chars = text.chars().count();
    if chars > NOTE_CHARS {
        return Err(ApiError::BadNote(format!(
            "`note` is {chars} characters long: at most {NOTE_CHARS}"
        )));
    }
    if let Some(hidden) = text
        .chars()
        .find(|c| super::present::shown::is_invisible(*c))
    {
        return Err(ApiError::BadNote(format!(
            "`note` holds the invisible or control character U+{:04X}: use visible characters only",
            u32::from(hidden)
        )));
    }
    Ok(Some(text.to_string()))
}
