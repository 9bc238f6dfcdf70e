//! Approved plans per session (client-facts §3: plans belong to the session that approved them).
//! It owns the session id → [`PlanStore`] map, its bound and the eviction of idle sessions; it
//! must not decide, read the clock (`now` is passed in) or match calls against plans.
//!
//! A session gets a store only when it registers a plan: deciding a call of an unknown session
//! reads nothing and inserts nothing, so a million distinct decision-only sessions cost no memory
//! here (F3). A session whose plans have all expired or been invalidated is removed.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dashmap::DashMap;
use time::OffsetDateTime;

use super::plans::{plan_bytes, ApprovedPlan, PlanApproval, PlanRefusal, PlanStore};
use super::SessionKey;

/// The most sessions that hold plans at once. Past it, idle sessions are evicted first; if every
/// session still holds a live plan, the registration is refused (later calls ask: fail closed).
pub const MAX_SESSIONS: usize = 65_536;

/// The most bytes all sessions' plans hold (`plans::plan_bytes`), checked at each
/// registration: past it, expired plans go first; if live plans still fill it, the
/// registration is refused (later calls ask: fail closed).
pub const MAX_PLAN_BYTES: usize = 64 * 1024 * 1024;

/// A full sweep of every session runs once per this many registrations (amortized O(1)).
const SWEEP_EVERY: u64 = 1_024;

/// (principal, session id) → that session's approved plans; every method takes `&self`.
// INVARIANT: a session in the map holds at least one plan once the change that emptied it
// returns (removal re-checks emptiness under the shard lock, so no registration is lost).
#[derive(Debug)]
pub struct SessionPlans {
    sessions: DashMap<SessionKey, PlanStore>,
    registrations: AtomicU64,
    /// The registration count at the last full sweep: a full map sweeps at most once per
    /// `SWEEP_EVERY` registrations, so a flood of new sessions cannot make each one O(n).
    last_sweep: AtomicU64,
    /// The bytes every store's plans hold (each store adds and takes back its own), the
    /// bound on them, and the lock registrations hold so that the check and the insert are
    /// one step.
    held: Arc<AtomicUsize>,
    byte_budget: usize,
    registering: Mutex<()>,
}

impl Default for SessionPlans {
    fn default() -> Self {
        Self::with_byte_budget(MAX_PLAN_BYTES)
    }
}

impl SessionPlans {
    pub fn with_byte_budget(byte_budget: usize) -> Self {
        Self {
            sessions: DashMap::default(),
            registrations: AtomicU64::default(),
            last_sweep: AtomicU64::default(),
            held: Arc::default(),
            byte_budget,
            registering: Mutex::default(),
        }
    }

    /// About how many bytes every session's plans hold.
    pub fn bytes(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    fn new_store(&self) -> PlanStore {
        PlanStore::counted(Arc::clone(&self.held))
    }

    /// The plan registered under `token` in this session, if any (expired ones too: expiry is
    /// judged by policy against the call's own time).
    pub fn plan(&self, session: &SessionKey, token: &str) -> Option<ApprovedPlan> {
        self.sessions.get(session)?.get(token)
    }

    /// finalize_plan is about to run in this session: its earlier plans for the project go.
    pub fn finalize_started(&self, session: &SessionKey, project_id: &str) {
        if let Some(store) = self.sessions.get(session) {
            store.finalize_started(project_id);
        }
        self.removed_if_empty(session);
    }

    /// finalize_plan succeeded in this session; registers it under the rules of §3 `g0f`, within
    /// the bounds on sessions and on plans per session.
    pub fn finalize_approved(
        &self,
        session: &SessionKey,
        approval: PlanApproval<'_>,
        now: OffsetDateTime,
    ) -> Result<ApprovedPlan, PlanRefusal> {
        let _registering = self
            .registering
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.swept_if_due(session, now)?;
        self.within_byte_budget(&approval, now)?;
        // Registered under the shard lock of the entry: a concurrent removal of the (empty)
        // session cannot drop the plan just registered.
        let store = self
            .sessions
            .entry(session.clone())
            .or_insert_with(|| self.new_store());
        let registered = store.finalize_approved(approval, now);
        drop(store);
        self.removed_if_empty(session);
        registered
    }

    /// Restores a plan exactly as given (scenario files, tests).
    pub fn restore(&self, session: &SessionKey, plan: ApprovedPlan) {
        self.sessions
            .entry(session.clone())
            .or_insert_with(|| self.new_store())
            .restore(plan);
    }

    /// Sharing or membership changed: every session's plans for the project go.
    pub fn project_invalidated(&self, project_id: &str) {
        for store in &self.sessions {
            store.project_invalidated(project_id);
        }
        self.empty_sessions_removed();
    }

    /// Consent was seeded false or revoked: every plan of every session goes.
    pub fn all_cleared(&self) {
        self.sessions.clear();
    }

    /// Plans that expired by `now` go, and with them every session left idle; returns how many
    /// plans were dropped.
    pub fn expired_removed(&self, now: OffsetDateTime) -> usize {
        let dropped = self
            .sessions
            .iter()
            .map(|store| store.expired_removed(now))
            .sum();
        self.empty_sessions_removed();
        dropped
    }

    /// How many sessions hold at least one plan.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Every plan of every session, sorted by token, for logs and tests.
    pub fn snapshot(&self) -> Vec<ApprovedPlan> {
        let mut plans: Vec<ApprovedPlan> = self
            .sessions
            .iter()
            .flat_map(|store| store.snapshot())
            .collect();
        plans.sort_by(|left, right| left.token.cmp(&right.token));
        plans
    }

    /// Whether `approval`'s plan fits the byte budget beside the plans held (expired ones
    /// dropped first when it would not).
    fn within_byte_budget(
        &self,
        approval: &PlanApproval<'_>,
        now: OffsetDateTime,
    ) -> Result<(), PlanRefusal> {
        let paths = approval.writes.iter().chain(approval.deletes.iter());
        let needed = plan_bytes(approval.token, approval.project_id, paths);
        if self.bytes().saturating_add(needed) <= self.byte_budget {
            return Ok(());
        }
        self.expired_removed(now);
        if self.bytes().saturating_add(needed) <= self.byte_budget {
            return Ok(());
        }
        Err(PlanRefusal::TooManyPlanBytes {
            limit: self.byte_budget,
        })
    }

    /// Every `SWEEP_EVERY` registrations idle sessions are evicted, and sooner when a new
    /// session finds the map full (at most once per `SWEEP_EVERY` registrations); a new session
    /// past the bound after that is refused.
    fn swept_if_due(&self, session: &SessionKey, now: OffsetDateTime) -> Result<(), PlanRefusal> {
        let count = self.registrations.fetch_add(1, Ordering::Relaxed);
        let new_session = !self.sessions.contains_key(session);
        let full = new_session && self.sessions.len() >= MAX_SESSIONS;
        let since = count.saturating_sub(self.last_sweep.load(Ordering::Relaxed));
        let first = self.last_sweep.load(Ordering::Relaxed) == 0;
        if (full && (first || since >= SWEEP_EVERY)) || count % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.last_sweep.store(count.max(1), Ordering::Relaxed);
            self.expired_removed(now);
        }
        if new_session && self.sessions.len() >= MAX_SESSIONS {
            return Err(PlanRefusal::TooManySessions {
                limit: MAX_SESSIONS,
            });
        }
        Ok(())
    }

    fn removed_if_empty(&self, session: &SessionKey) {
        self.sessions
            .remove_if(session, |_, store| store.is_empty());
    }

    fn empty_sessions_removed(&self) {
        self.sessions.retain(|_, store| !store.is_empty());
    }
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
