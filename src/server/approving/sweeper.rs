//! server::approving::sweeper: the task that keeps the approval store honest between
//! requests: every `approvals.sweep_interval_ms` it expires due approvals and logs each expiry
//! once (retrying at the next sweep while the log fails), logs the withdrawals their holder
//! could not, forgets finished approvals past the retention, ends any run past its deadline
//! as `failed` with an outcome record, and hands each approval unanswered past
//! `escalation.after_seconds` to the escalation webhook, once.

use std::sync::{Arc, Weak};

use crate::audit::record::ApprovalAction;
use crate::server::error::ApiError;
use crate::server::execute::error_json;
use crate::server::gateway::{Inner, Pipeline};
use crate::server::journal::Answer;
use crate::store::approvals::Withdrawal;

/// Who expiry records name as their author.
pub const SWEEPER: &str = "askgate";

/// Starts the sweeper; it stops once the service's state is dropped.
pub fn spawn_sweeper(state: &Pipeline) {
    let weak: Weak<Inner> = Arc::downgrade(&state.0);
    let interval = state.inner().approving.approvals.limits().sweep_interval;
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let Some(inner) = weak.upgrade() else { break };
            sweep(&inner).await;
        }
    });
}

async fn sweep(inner: &Inner) {
    let now = inner.clock.now();
    let found = inner.approving.approvals.sweep(now).await;
    let mut unlogged = Vec::new();
    for (id, decision_id) in found.expired {
        let logged = inner
            .journal
            .approval(
                Answer::new(&decision_id, &id, ApprovalAction::Expired, SWEEPER),
                now,
            )
            .await;
        if logged.is_err() {
            unlogged.push((id, decision_id));
        }
    }
    if !unlogged.is_empty() {
        inner
            .approving
            .approvals
            .requeue_expiries(unlogged, now)
            .await;
    }
    let mut unlogged = Vec::new();
    for withdrawal in found.withdrawn {
        if log_withdrawal(inner, &withdrawal).await.is_err() {
            unlogged.push(withdrawal);
        }
    }
    if !unlogged.is_empty() {
        inner
            .approving
            .approvals
            .requeue_withdrawals(unlogged, now)
            .await;
    }
    for (_, decision_id) in found.overdue {
        let result = error_json("deadline", "the approved work did not report back");
        inner.journal.outcome(&decision_id, &result, now).await;
    }
    escalate(inner, now).await;
}

/// Sends every approval still unanswered past `escalation.after_seconds` to the escalation
/// webhook; the books hand each over once.
async fn escalate(inner: &Inner, now: time::OffsetDateTime) {
    let Some(after) = inner.approving.notifier.escalate_after() else {
        return;
    };
    let Ok(after) = time::Duration::try_from(after) else {
        return;
    };
    for view in inner.approving.approvals.escalate(now - after, now).await {
        inner.approving.notifier.approval_escalated(&view, now);
    }
}

/// A withdrawal's one record: by askgate, with what withdrew it as the note.
pub async fn log_withdrawal(inner: &Inner, withdrawal: &Withdrawal) -> Result<(), ApiError> {
    inner
        .journal
        .approval(
            Answer::new(
                &withdrawal.decision_id,
                &withdrawal.id,
                ApprovalAction::Withdrawn,
                SWEEPER,
            )
            .note(Some(&withdrawal.why)),
            inner.clock.now(),
        )
        .await
}
