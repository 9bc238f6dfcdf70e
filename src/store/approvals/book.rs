//! store::approvals::book: the store's state behind its one lock — the entries, the pending
//! ones in creation order, what each caller holds open, the bytes held, and the finished ones
//! kept for a while. Every change of status goes through one method here, so the counters
//! always match the entries.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;
use time::OffsetDateTime;
use tokio::sync::Notify;

use super::view::{json_bytes, ApprovalStatus, ApprovalView, PendingCall};
use super::ApprovalLimits;

/// One approval: its view, the held call while pending, and what the counters know of it.
#[derive(Debug)]
pub(super) struct Entry {
    pub seq: u64,
    pub decision_id: String,
    pub view: ApprovalView,
    /// `Some` while pending; the running work or a refusal being logged owns it otherwise.
    pub call: Option<PendingCall>,
    /// Held-call bytes while open; result bytes once finished.
    pub bytes: u64,
    pub changed: Arc<Notify>,
    /// When the work started, for the run-deadline safety net.
    pub started: Option<tokio::time::Instant>,
    /// Pending or running (or a refusal not yet logged): holds a place under the caps.
    pub open: bool,
}

/// An expiry or an overdue run the sweeper must log: (approval id, decision id).
pub type ToLog = (String, String);

/// A withdrawn approval's record, to be logged once: by whoever withdrew it, else the sweeper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Withdrawal {
    pub id: String,
    pub decision_id: String,
    /// What withdrew it, in words (logged as the record's note).
    pub why: String,
}

/// What one caller holds open: approvals and the bytes of their held calls.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct CallerOpen {
    pub count: usize,
    pub bytes: u64,
}

#[derive(Debug, Default)]
pub(super) struct Book {
    pub entries: HashMap<String, Entry>,
    /// Pending approvals by creation sequence: paging order, and expiry order (one TTL).
    pub pending: BTreeMap<u64, String>,
    /// Open (pending or running) approvals per requesting caller; no zero entries.
    pub open_by_caller: HashMap<String, CallerOpen>,
    pub open: usize,
    pub open_bytes: u64,
    /// Finished approvals, oldest first, with when they finished.
    pub finished: VecDeque<(String, OffsetDateTime)>,
    pub finished_bytes: u64,
    /// Expiries not yet logged.
    // INVARIANT: bounded by the open cap while the log refuses writes: every entry here was
    // open, and no new approval can be created while the ask's decision cannot be logged.
    pub unlogged_expiries: Vec<ToLog>,
    /// Withdrawals whose record could not be written yet; the sweeper retries them.
    // INVARIANT: bounded like `unlogged_expiries`: each was an open approval.
    pub unlogged_withdrawals: Vec<Withdrawal>,
    pub next_seq: u64,
}

impl Book {
    /// Expires every pending approval that is due (they are in expiry order), dropping the
    /// held call at once and queueing the expiry to be logged.
    pub fn expire_due(&mut self, now: OffsetDateTime, limits: &ApprovalLimits) {
        while let Some((&seq, id)) = self.pending.first_key_value() {
            let due = self
                .entries
                .get(id)
                .is_none_or(|entry| now >= entry.view.expires_at);
            if !due {
                break;
            }
            let id = id.clone();
            self.pending.remove(&seq);
            if let Some(entry) = self.entries.get(&id) {
                self.unlogged_expiries
                    .push((id.clone(), entry.decision_id.clone()));
            }
            self.close(&id, ApprovalStatus::Expired, None, now, limits);
        }
    }

    /// Ends an open approval: releases its place under the caps, keeps its view (and result)
    /// among the finished, and wakes its waiters.
    pub fn close(
        &mut self,
        id: &str,
        status: ApprovalStatus,
        result: Option<Value>,
        now: OffsetDateTime,
        limits: &ApprovalLimits,
    ) {
        let Some(entry) = self.entries.get_mut(id).filter(|entry| entry.open) else {
            return;
        };
        entry.open = false;
        entry.call = None;
        entry.view.status = status;
        self.open = self.open.saturating_sub(1);
        self.open_bytes = self.open_bytes.saturating_sub(entry.bytes);
        let held_bytes = entry.bytes;
        entry.bytes = result.as_ref().map_or(0, json_bytes);
        entry.view.result = result;
        self.finished_bytes = self.finished_bytes.saturating_add(entry.bytes);
        entry.changed.notify_waiters();
        let owner = entry.view.requested_by.clone();
        if let Some(open) = self.open_by_caller.get_mut(&owner) {
            open.count = open.count.saturating_sub(1);
            open.bytes = open.bytes.saturating_sub(held_bytes);
            if open.count == 0 {
                self.open_by_caller.remove(&owner);
            }
        }
        self.finished.push_back((id.to_string(), now));
        self.trim_finished(now, limits);
    }

    /// Forgets finished approvals past the retention, and the oldest beyond the count and
    /// byte bounds (the same numbers as the open caps).
    pub fn trim_finished(&mut self, now: OffsetDateTime, limits: &ApprovalLimits) {
        let retention = time::Duration::try_from(limits.retention).unwrap_or(time::Duration::MAX);
        while let Some((id, finished_at)) = self.finished.front() {
            let over = self.finished.len() > limits.max_pending
                || self.finished_bytes > limits.max_held_bytes;
            if !over && now < finished_at.saturating_add(retention) {
                break;
            }
            let id = id.clone();
            self.finished.pop_front();
            if let Some(entry) = self.entries.remove(&id) {
                self.finished_bytes = self.finished_bytes.saturating_sub(entry.bytes);
            }
        }
    }
}
