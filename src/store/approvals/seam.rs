//! store::approvals::seam: the seam of approvals — [`ApprovalBook`], whose methods are the
//! events of an approval's life (create → pending → vote (the one that completes the quorum
//! claims it, exactly once) → finish / release / refuse / withdraw / expire), the held call, waiting for a change, paging and the caps —
//! and [`Approvals`], the handle the service holds. The in-memory book ([`ApprovalStore`]) is
//! the embedded default; `store::postgres` keeps the same books for a fleet. It must not log,
//! re-decide or run anything: that is `approving`'s.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::{
    ApprovalError, ApprovalLimits, ApprovalStatus, ApprovalStore, ApprovalView, Ballot, Claim,
    LimitError, Page, PendingCall, Sweep, ToLog, Voted, Withdrawal,
};
use crate::store::StoreError;

/// Why a new approval was not held.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateError {
    #[error(transparent)]
    Limit(#[from] LimitError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The clock a wait reads between wake-ups.
pub type Now<'a> = &'a (dyn Fn() -> OffsetDateTime + Send + Sync);

/// The books of pending approvals, wherever they are kept.
#[async_trait]
pub trait ApprovalBook: Send + Sync {
    fn limits(&self) -> &ApprovalLimits;
    /// Holds `call` under the caps. `held_open`: a request of this process holds the call
    /// open (MCP), so the approval is withdrawn if this process goes away.
    async fn create(
        &self,
        view: ApprovalView,
        call: PendingCall,
        decision_id: &str,
        held_open: bool,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, CreateError>;
    async fn view(&self, id: &str, now: OffsetDateTime) -> Result<ApprovalView, ApprovalError>;
    async fn owner(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, ApprovalError>;
    async fn page(
        &self,
        now: OffsetDateTime,
        cursor: Option<u64>,
        limit: usize,
    ) -> Result<Page, ApprovalError>;
    async fn decided(
        &self,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<ApprovalView>, ApprovalError>;
    async fn pending_count(&self, now: OffsetDateTime) -> Result<usize, ApprovalError>;
    /// Counts `ballot` (an approval) on a pending approval, in one step with the claim: the
    /// vote that completes the quorum moves it to running and claims its call, and only one
    /// ever does; a second approval by the same approver is refused (`AlreadyApproved`) and
    /// changes nothing.
    async fn vote(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Voted, ApprovalError>;
    /// Takes back `by`'s approval of a still pending approval whose record could not be
    /// written; false when there was none (or it is no longer pending).
    async fn retract(&self, id: &str, by: &str, now: OffsetDateTime) -> bool;
    /// Marks a pending approval refused, `ballot` (the refusal) kept with it.
    async fn claim_refusal(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Claim, ApprovalError>;
    async fn withdraw(
        &self,
        id: &str,
        why: &str,
        now: OffsetDateTime,
    ) -> Result<Withdrawal, ApprovalError>;
    async fn requeue_withdrawals(&self, withdrawals: Vec<Withdrawal>, now: OffsetDateTime);
    /// Marks the pending approvals asked at or before `asked_by` that were not escalated yet
    /// as escalated, and returns them: each is returned once, across a fleet.
    async fn escalate(&self, asked_by: OffsetDateTime, now: OffsetDateTime) -> Vec<ApprovalView>;
    /// The asking MCP client came back for the result (its 2026-07-28 retry redeemed the
    /// approval's link): a client now waits (`ClientWait::Waiting`), and a run that waited for
    /// it starts its deadline now. Shows the approval as it stands.
    async fn client_back(
        &self,
        id: &str,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, ApprovalError>;
    /// Puts a claimed approval back to pending, its call with it; the vote that claimed it
    /// is taken back.
    async fn release(&self, claim: Claim, now: OffsetDateTime);
    /// Ends a claimed approval with `status`; false when it had already ended.
    async fn finish(
        &self,
        id: &str,
        status: ApprovalStatus,
        result: Option<serde_json::Value>,
        now: OffsetDateTime,
    ) -> bool;
    /// Waits until the approval has ended or `timeout` passes, then shows it.
    async fn wait(
        &self,
        id: &str,
        timeout: Duration,
        now: Now<'_>,
    ) -> Result<ApprovalView, ApprovalError>;
    /// Expires, forgets and fails what is due; returns what this caller must log.
    async fn sweep(&self, now: OffsetDateTime) -> Sweep;
    async fn requeue_expiries(&self, expiries: Vec<ToLog>, now: OffsetDateTime);
}

/// The service's approvals; cheap to clone.
#[derive(Clone)]
pub struct Approvals(Arc<dyn ApprovalBook>);

impl Approvals {
    pub fn new(book: Arc<dyn ApprovalBook>) -> Self {
        Self(book)
    }

    /// Books in this process.
    pub fn in_memory(limits: ApprovalLimits) -> Self {
        Self(Arc::new(ApprovalStore::new(limits)))
    }

    pub fn book(&self) -> &dyn ApprovalBook {
        self.0.as_ref()
    }

    pub fn limits(&self) -> &ApprovalLimits {
        self.0.limits()
    }

    pub async fn view(&self, id: &str, now: OffsetDateTime) -> Result<ApprovalView, ApprovalError> {
        self.0.view(id, now).await
    }

    pub async fn page(
        &self,
        now: OffsetDateTime,
        cursor: Option<u64>,
        limit: usize,
    ) -> Result<Page, ApprovalError> {
        self.0.page(now, cursor, limit).await
    }

    pub async fn decided(
        &self,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<ApprovalView>, ApprovalError> {
        self.0.decided(now, limit).await
    }

    /// Pending approvals; 0 when the store cannot say (metrics only).
    pub async fn pending_count(&self, now: OffsetDateTime) -> usize {
        self.0.pending_count(now).await.unwrap_or(0)
    }

    /// Waits until the approval has ended or `timeout` passes, then shows it.
    pub async fn wait(
        &self,
        id: &str,
        timeout: Duration,
        now: impl Fn() -> OffsetDateTime + Send + Sync,
    ) -> Result<ApprovalView, ApprovalError> {
        self.0.wait(id, timeout, &now).await
    }
}

impl std::ops::Deref for Approvals {
    type Target = dyn ApprovalBook;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

#[async_trait]
impl ApprovalBook for ApprovalStore {
    fn limits(&self) -> &ApprovalLimits {
        ApprovalStore::limits(self)
    }

    async fn create(
        &self,
        view: ApprovalView,
        call: PendingCall,
        decision_id: &str,
        _held_open: bool,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, CreateError> {
        Ok(ApprovalStore::create(self, view, call, decision_id, now)?)
    }

    async fn view(&self, id: &str, now: OffsetDateTime) -> Result<ApprovalView, ApprovalError> {
        ApprovalStore::view(self, id, now)
    }

    async fn owner(&self, id: &str, now: OffsetDateTime) -> Result<Option<String>, ApprovalError> {
        Ok(ApprovalStore::owner(self, id, now))
    }

    async fn page(
        &self,
        now: OffsetDateTime,
        cursor: Option<u64>,
        limit: usize,
    ) -> Result<Page, ApprovalError> {
        Ok(ApprovalStore::page(self, now, cursor, limit))
    }

    async fn decided(
        &self,
        now: OffsetDateTime,
        limit: usize,
    ) -> Result<Vec<ApprovalView>, ApprovalError> {
        Ok(ApprovalStore::decided(self, now, limit))
    }

    async fn pending_count(&self, now: OffsetDateTime) -> Result<usize, ApprovalError> {
        Ok(ApprovalStore::pending_count(self, now))
    }

    async fn vote(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Voted, ApprovalError> {
        ApprovalStore::vote(self, id, ballot, now)
    }

    async fn retract(&self, id: &str, by: &str, now: OffsetDateTime) -> bool {
        ApprovalStore::retract(self, id, by, now)
    }

    async fn claim_refusal(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Claim, ApprovalError> {
        ApprovalStore::claim_refusal(self, id, ballot, now)
    }

    async fn withdraw(
        &self,
        id: &str,
        why: &str,
        now: OffsetDateTime,
    ) -> Result<Withdrawal, ApprovalError> {
        ApprovalStore::withdraw(self, id, why, now)
    }

    async fn requeue_withdrawals(&self, withdrawals: Vec<Withdrawal>, now: OffsetDateTime) {
        ApprovalStore::requeue_withdrawals(self, withdrawals, now);
    }

    async fn escalate(&self, asked_by: OffsetDateTime, now: OffsetDateTime) -> Vec<ApprovalView> {
        ApprovalStore::escalate(self, asked_by, now)
    }

    async fn client_back(
        &self,
        id: &str,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, ApprovalError> {
        ApprovalStore::client_back(self, id, now)
    }

    async fn release(&self, claim: Claim, now: OffsetDateTime) {
        ApprovalStore::release(self, claim, now);
    }

    async fn finish(
        &self,
        id: &str,
        status: ApprovalStatus,
        result: Option<serde_json::Value>,
        now: OffsetDateTime,
    ) -> bool {
        ApprovalStore::finish(self, id, status, result, now)
    }

    async fn wait(
        &self,
        id: &str,
        timeout: Duration,
        now: Now<'_>,
    ) -> Result<ApprovalView, ApprovalError> {
        ApprovalStore::wait(self, id, timeout, now).await
    }

    async fn sweep(&self, now: OffsetDateTime) -> Sweep {
        ApprovalStore::sweep(self, now)
    }

    async fn requeue_expiries(&self, expiries: Vec<ToLog>, now: OffsetDateTime) {
        ApprovalStore::requeue_expiries(self, expiries, now);
    }
}
