//! server::approving::absent: an approval approved before its asking client came back for the
//! result (A16). A 2026-07-28 MCP client that is sent the approval's link ends its request;
//! until its retry redeems the link, no call waits. Approved in that time, the work waits for
//! the client (at most until the approval would have expired, and the run deadline) and only
//! then runs the call; a client that never comes back leaves the approval `withdrawn` and its
//! call never run, so nothing is done for a client that is no longer there.

use std::time::Duration;

use super::sweeper::log_withdrawal;
use super::work::Work;
use crate::server::execute::error_json;
use crate::store::approvals::{ApprovalStatus, Claim, ClientWait, Withdrawal};

/// How often the work looks whether the client is back (a row read on a shared store).
const LOOK: Duration = Duration::from_millis(100);

impl Work {
    /// Waits until the asking client is back; false when it did not come in time.
    pub(super) async fn client_came_back(&self) -> bool {
        let inner = self.state.inner();
        let run_deadline = inner.approving.approvals.limits().run_deadline;
        let Ok(view) = inner
            .approving
            .approvals
            .view(&self.id, inner.clock.now())
            .await
        else {
            return false;
        };
        let left = Duration::try_from(view.expires_at - inner.clock.now()).unwrap_or_default();
        let deadline = tokio::time::Instant::now() + left.min(run_deadline);
        loop {
            let view = inner
                .approving
                .approvals
                .view(&self.id, inner.clock.now())
                .await;
            // A store that cannot answer is asked again until the deadline.
            if view.is_ok_and(|view| view.client != ClientWait::NotYet) {
                return true;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return false;
            }
            tokio::time::sleep(LOOK.min(deadline - now)).await;
        }
    }

    /// Nobody came for the result: the approval is withdrawn by askgate, saying so, and its
    /// call dropped unrun; the withdrawal is logged (by the sweeper if the log fails now).
    pub(super) async fn never_received(&self, claim: Claim) {
        let inner = self.state.inner();
        let why = format!(
            "withdrawn by askgate: `{}` approved it, but the MCP client of `{}` never came back \
             for the result (its retry with the approval's `requestState` did not come before \
             the approval's wait ended), so the call never ran and nobody would have received \
             its result",
            self.approver, claim.call.intake.session_key.principal
        );
        let withdrawal = Withdrawal {
            id: claim.id.clone(),
            decision_id: claim.decision_id.clone(),
            why: why.clone(),
        };
        drop(claim);
        if log_withdrawal(inner, &withdrawal).await.is_err() {
            let now = inner.clock.now();
            inner
                .approving
                .approvals
                .requeue_withdrawals(vec![withdrawal], now)
                .await;
        }
        let result = error_json("withdrawn", &why);
        let now = inner.clock.now();
        inner
            .approving
            .approvals
            .finish(&self.id, ApprovalStatus::Withdrawn, Some(result), now)
            .await;
    }
}
