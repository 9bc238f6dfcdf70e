//! store::approvals: pending approvals — the held call, its card, an expiry, the quorum, the
//! votes given and what it is bound to (the call's digest, the policy set that asked) — and their life: pending (votes counted until `quorum` distinct approvers
//! approved) → running (exactly one vote completes the quorum) → completed or failed; or
//! refused (one refusal), expired, or withdrawn (the asking call stopped waiting). Bounded: open approvals are capped per caller and in all, and so are the bytes of
//! the calls they hold; finished ones are kept for the retention, then forgotten. It keeps the
//! books only: logging, re-deciding and running are `approving`'s.

mod ballot;
pub mod binding;
mod book;
mod error;
mod limits;
mod seam;
#[cfg(test)]
mod tests;
mod view;

use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use time::OffsetDateTime;
use tokio::sync::Notify;

use crate::authz::Approval;
use book::{Book, Entry};

pub use ballot::{tally, Ballot, Vote, MAX_VOTES};
pub use binding::{Binding, Changed};
pub use book::{ToLog, Withdrawal};
pub use error::{is_approval_id, shown_id, ApprovalError};
pub use limits::ApprovalLimits;
pub use seam::{ApprovalBook, Approvals, CreateError, Now};
pub use view::{
    ApprovalStatus, ApprovalView, ApprovedCall, AskedAs, ClientWait, Intake, PendingCall,
};

/// Why a new approval was not held (answered 429).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("`{caller}` already has {limit} open approvals (`approvals.max_pending_per_caller`): wait until an approver answers or some expire")]
    PerCaller { caller: String, limit: usize },
    #[error("the service already holds {limit} open approvals (`approvals.max_pending`): try again later")]
    Total { limit: usize },
    #[error("the held calls would pass {limit} bytes (`approvals.max_held_bytes`) with this call's {bytes}: try again later")]
    Bytes { limit: u64, bytes: u64 },
    #[error("`{caller}`'s held calls would pass {limit} bytes (`approvals.max_held_bytes_per_caller`) with this call's {bytes}: wait until an approver answers or some expire")]
    CallerBytes {
        caller: String,
        limit: u64,
        bytes: u64,
    },
}

/// An approval taken out of pending by an approver (or a refusal): the held call moves here.
#[derive(Debug)]
pub struct Claim {
    pub id: String,
    pub decision_id: String,
    pub card: Approval,
    pub call: PendingCall,
    /// Whether the asking client waits for the result (its approval's `client`).
    pub client: ClientWait,
    /// The call and policy set the approval was asked for (its view's `bound`).
    pub bound: Option<Binding>,
}

/// What an approver's approval did.
#[derive(Debug)]
pub enum Voted {
    /// Counted: the approval waits for more approvers (its view shows the tally).
    Counted {
        view: Box<ApprovalView>,
        /// The decision the ask was logged under (the vote's record belongs to it).
        decision_id: String,
    },
    /// It completed the quorum: the approval is running and its held call is claimed.
    Claimed(Box<Claim>),
}

/// One page of pending approvals, oldest first.
#[derive(Debug)]
pub struct Page {
    pub approvals: Vec<ApprovalView>,
    /// Pass as `cursor` for the next page; `None` on the last one.
    pub next_cursor: Option<String>,
}

/// What a sweep found for the log: new expiries, and running work past its deadline.
#[derive(Debug, Default)]
pub struct Sweep {
    pub expired: Vec<ToLog>,
    pub overdue: Vec<ToLog>,
    pub withdrawn: Vec<Withdrawal>,
}

/// How long past the run deadline the sweeper waits before failing a run that never reported
/// back (the work's own deadline normally ends it first).
pub(crate) const OVERDUE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(Debug)]
pub struct ApprovalStore {
    book: Mutex<Book>,
    limits: ApprovalLimits,
}

impl Default for ApprovalStore {
    fn default() -> Self {
        Self::new(ApprovalLimits::default())
    }
}

impl ApprovalStore {
    pub fn new(limits: ApprovalLimits) -> Self {
        Self {
            book: Mutex::new(Book::default()),
            limits,
        }
    }

    pub fn limits(&self) -> &ApprovalLimits {
        &self.limits
    }

    /// Holds `call` (moved in, not copied) under the caps, or says which cap it would pass.
    pub fn create(
        &self,
        view: ApprovalView,
        call: PendingCall,
        decision_id: &str,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, LimitError> {
        let mut book = self.lock(now);
        let bytes = call.intake.call.held_bytes();
        self.admit(&book, &view.requested_by, bytes)?;
        let seq = book.next_seq;
        book.next_seq += 1;
        book.open += 1;
        book.open_bytes = book.open_bytes.saturating_add(bytes);
        let open = book
            .open_by_caller
            .entry(view.requested_by.clone())
            .or_default();
        open.count += 1;
        open.bytes = open.bytes.saturating_add(bytes);
        book.pending.insert(seq, view.id.clone());
        let entry = Entry {
            seq,
            decision_id: decision_id.to_string(),
            view: view.clone(),
            call: Some(call),
            bytes,
            changed: Arc::new(Notify::new()),
            started: None,
            open: true,
        };
        book.entries.insert(view.id.clone(), entry);
        Ok(view)
    }

    fn admit(&self, book: &Book, caller: &str, bytes: u64) -> Result<(), LimitError> {
        let held = book.open_by_caller.get(caller).copied().unwrap_or_default();
        let open = Held {
            count: book.open,
            bytes: book.open_bytes,
        };
        let by_caller = Held {
            count: held.count,
            bytes: held.bytes,
        };
        admitted(&self.limits, caller, open, by_caller, bytes)
    }

    pub fn view(&self, id: &str, now: OffsetDateTime) -> Result<ApprovalView, ApprovalError> {
        let book = self.lock(now);
        entry(&book, id).map(|entry| entry.view.clone())
    }

    /// Who asked for the approval; `None` for an unknown (or forgotten) id.
    pub fn owner(&self, id: &str, now: OffsetDateTime) -> Option<String> {
        let book = self.lock(now);
        book.entries
            .get(id)
            .map(|entry| entry.view.requested_by.clone())
    }

    /// Pending approvals after `cursor` (a previous page's `next_cursor`), at most `limit`.
    pub fn page(&self, now: OffsetDateTime, cursor: Option<u64>, limit: usize) -> Page {
        let book = self.lock(now);
        let start = cursor.map_or(Bound::Unbounded, Bound::Excluded);
        let mut ids = book.pending.range((start, Bound::Unbounded));
        let approvals: Vec<ApprovalView> = ids
            .by_ref()
            .take(limit)
            .filter_map(|(_, id)| book.entries.get(id))
            .map(|entry| entry.view.clone())
            .collect();
        let more = ids.next().is_some();
        let last = approvals
            .last()
            .and_then(|view| book.entries.get(&view.id))
            .map(|entry| entry.seq.to_string());
        Page {
            approvals,
            next_cursor: last.filter(|_| more),
        }
    }

    /// The finished approvals still kept (see the retention), newest first, at most `limit`.
    pub fn decided(&self, now: OffsetDateTime, limit: usize) -> Vec<ApprovalView> {
        let book = self.lock(now);
        book.finished
            .iter()
            .rev()
            .filter_map(|(id, _)| book.entries.get(id))
            .take(limit)
            .map(|entry| entry.view.clone())
            .collect()
    }

    /// Pending approvals that have not expired (expiry applied first).
    pub fn pending_count(&self, now: OffsetDateTime) -> usize {
        self.lock(now).pending.len()
    }

    /// Counts `ballot` (an approval) on a pending approval; the one that completes its quorum
    /// moves it to running and claims its call — only one ever does. The same approver
    /// approving twice is refused and changes nothing.
    pub fn vote(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Voted, ApprovalError> {
        let mut book = self.lock(now);
        let entry = book
            .entries
            .get_mut(id)
            .ok_or_else(|| ApprovalError::unknown(id))?;
        if entry.view.status == ApprovalStatus::Pending {
            if entry.view.has_approved(&ballot.by) {
                return Err(ApprovalError::AlreadyApproved {
                    id: id.to_string(),
                    by: ballot.by,
                    tally: entry.view.tally(),
                });
            }
            if !entry.view.one_short() {
                // INVARIANT: fewer than `quorum` approvals are kept while pending (MAX_VOTES).
                entry.view.votes.push(ballot);
                entry.changed.notify_waiters();
                return Ok(Voted::Counted {
                    view: Box::new(entry.view.clone()),
                    decision_id: entry.decision_id.clone(),
                });
            }
        }
        let claim = take_pending(&mut book, id, ApprovalStatus::Running)?;
        if let Some(entry) = book.entries.get_mut(id) {
            entry.view.approved_by = Some(ballot.by.clone());
            entry.view.votes.push(ballot);
            entry.started = Some(tokio::time::Instant::now());
        }
        Ok(Voted::Claimed(Box::new(claim)))
    }

    /// Takes back `by`'s approval of a still pending approval (its record could not be
    /// written); false when there was none to take back.
    pub fn retract(&self, id: &str, by: &str, now: OffsetDateTime) -> bool {
        let mut book = self.lock(now);
        let Some(entry) = book
            .entries
            .get_mut(id)
            .filter(|entry| entry.view.status == ApprovalStatus::Pending)
        else {
            return false;
        };
        let before = entry.view.votes.len();
        entry
            .view
            .votes
            .retain(|ballot| !(ballot.vote == Vote::Approve && ballot.by == by));
        entry.changed.notify_waiters();
        entry.view.votes.len() < before
    }

    /// Marks a pending approval refused (`ballot`, a refusal, kept with it) while its refusal
    /// is logged; `finish` or `release` follows.
    pub fn claim_refusal(
        &self,
        id: &str,
        ballot: Ballot,
        now: OffsetDateTime,
    ) -> Result<Claim, ApprovalError> {
        let mut book = self.lock(now);
        let claim = take_pending(&mut book, id, ApprovalStatus::Refused)?;
        if let Some(entry) = book.entries.get_mut(id) {
            // Who decided, whichever way: a racing approver is told who it was.
            entry.view.approved_by = Some(ballot.by.clone());
            entry.view.votes.push(ballot);
        }
        Ok(claim)
    }

    /// Withdraws a pending approval whose asking call stopped waiting: it ends at once (its
    /// call dropped; an approver after this is told it is withdrawn) with `why` as its result's
    /// message, and its record is returned to be logged (see `requeue_withdrawals`). Fails
    /// like `claim` when it is no longer pending: then an approver (or the expiry) came first.
    pub fn withdraw(
        &self,
        id: &str,
        why: &str,
        now: OffsetDateTime,
    ) -> Result<Withdrawal, ApprovalError> {
        let mut book = self.lock(now);
        let claim = take_pending(&mut book, id, ApprovalStatus::Withdrawn)?;
        let result = crate::executor::result::error_json("withdrawn", why);
        book.close(
            id,
            ApprovalStatus::Withdrawn,
            Some(result),
            now,
            &self.limits,
        );
        Ok(Withdrawal {
            id: claim.id,
            decision_id: claim.decision_id,
            why: why.to_string(),
        })
    }

    /// Pending approvals asked at or before `asked_by` and not escalated yet: marked escalated
    /// and returned, each once.
    pub fn escalate(&self, asked_by: OffsetDateTime, now: OffsetDateTime) -> Vec<ApprovalView> {
        let mut book = self.lock(now);
        let due: Vec<String> = book
            .pending
            .values()
            .filter(|id| {
                book.entries
                    .get(*id)
                    .is_some_and(|entry| !entry.view.escalated && entry.view.created_at <= asked_by)
            })
            .cloned()
            .collect();
        let mut escalated = Vec::with_capacity(due.len());
        for id in &due {
            if let Some(entry) = book.entries.get_mut(id) {
                entry.view.escalated = true;
                escalated.push(entry.view.clone());
            }
        }
        escalated
    }

    /// The asking client came back for the result (see `ApprovalBook::client_back`).
    pub fn client_back(
        &self,
        id: &str,
        now: OffsetDateTime,
    ) -> Result<ApprovalView, ApprovalError> {
        let mut book = self.lock(now);
        let entry = book
            .entries
            .get_mut(id)
            .ok_or_else(|| ApprovalError::Unknown(id.to_string()))?;
        if entry.view.client == ClientWait::NotYet {
            entry.view.client = ClientWait::Waiting;
            if entry.open && entry.view.status == ApprovalStatus::Running {
                entry.started = Some(tokio::time::Instant::now());
            }
            entry.changed.notify_waiters();
        }
        Ok(entry.view.clone())
    }

    /// Withdrawals whose record could not be written, for the sweeper to log.
    pub fn requeue_withdrawals(&self, withdrawals: Vec<Withdrawal>, now: OffsetDateTime) {
        self.lock(now).unlogged_withdrawals.extend(withdrawals);
    }

    /// Puts a claimed approval back to pending, its call with it (its answer was not logged).
    pub fn release(&self, claim: Claim, now: OffsetDateTime) {
        let mut book = self.lock(now);
        let Some(entry) = book.entries.get_mut(&claim.id).filter(|entry| entry.open) else {
            return;
        };
        entry.view.status = ApprovalStatus::Pending;
        // The vote that claimed it is taken back with the claim: it was never logged.
        let claimer = entry.view.approved_by.take();
        if entry.view.votes.last().map(|ballot| &ballot.by) == claimer.as_ref() {
            entry.view.votes.pop();
        }
        entry.started = None;
        entry.call = Some(claim.call);
        let seq = entry.seq;
        book.pending.insert(seq, claim.id);
        book.expire_due(now, &self.limits);
    }

    /// Ends a claimed approval with `status`; false when it had already ended.
    pub fn finish(
        &self,
        id: &str,
        status: ApprovalStatus,
        result: Option<serde_json::Value>,
        now: OffsetDateTime,
    ) -> bool {
        let mut book = self.lock(now);
        let claimed = book
            .entries
            .get(id)
            .is_some_and(|entry| entry.open && entry.view.status != ApprovalStatus::Pending);
        if claimed {
            book.close(id, status, result, now, &self.limits);
        }
        claimed
    }

    /// Waits until the approval has ended or `timeout` passes, then shows it.
    pub async fn wait(
        &self,
        id: &str,
        timeout: std::time::Duration,
        now: impl Fn() -> OffsetDateTime,
    ) -> Result<ApprovalView, ApprovalError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = {
                let book = self.lock(now());
                let entry = entry(&book, id)?;
                if !entry.open {
                    return Ok(entry.view.clone());
                }
                Arc::clone(&entry.changed)
            };
            // Registered before the status is read again, so no wake-up is missed.
            let notified = changed.notified();
            if !self.lock(now()).entries.get(id).is_some_and(|e| e.open) {
                continue;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.view(id, now());
            }
        }
    }

    /// Expires what is due, forgets what is past the retention, fails runs past the deadline
    /// and its grace; returns what must be logged (expiries once each, see `requeue_expiries`).
    pub fn sweep(&self, now: OffsetDateTime) -> Sweep {
        let mut book = self.lock(now);
        book.trim_finished(now, &self.limits);
        let late = self.limits.run_deadline + OVERDUE_GRACE;
        let overdue: Vec<(String, String)> = book
            .entries
            .iter()
            .filter(|(_, entry)| entry.open && entry.view.status == ApprovalStatus::Running)
            .filter(|(_, entry)| entry.started.is_some_and(|at| at.elapsed() > late))
            .map(|(id, entry)| (id.clone(), entry.decision_id.clone()))
            .collect();
        let message = format!(
            "the approved work did not report back within {} s; the call may or may not have reached the upstream",
            late.as_secs()
        );
        for (id, _) in &overdue {
            let result = crate::executor::result::error_json("deadline", &message);
            book.close(id, ApprovalStatus::Failed, Some(result), now, &self.limits);
        }
        Sweep {
            expired: std::mem::take(&mut book.unlogged_expiries),
            overdue,
            withdrawn: std::mem::take(&mut book.unlogged_withdrawals),
        }
    }

    /// Expiries whose record could not be written, to be tried again at the next sweep.
    pub fn requeue_expiries(&self, expiries: Vec<ToLog>, now: OffsetDateTime) {
        self.lock(now).unlogged_expiries.extend(expiries);
    }

    /// The book with due expiries applied.
    fn lock(&self, now: OffsetDateTime) -> MutexGuard<'_, Book> {
        let mut book = self.book.lock().unwrap_or_else(PoisonError::into_inner);
        book.expire_due(now, &self.limits);
        book
    }
}

/// Open approvals and the bytes of their held calls (in all, or one caller's).
#[derive(Debug, Clone, Copy, Default)]
pub struct Held {
    pub count: usize,
    pub bytes: u64,
}

/// Whether one more held call of `bytes` from `caller` fits the caps, given what is open in
/// all and for the caller; every store admits through it.
pub fn admitted(
    limits: &ApprovalLimits,
    caller: &str,
    open: Held,
    by_caller: Held,
    bytes: u64,
) -> Result<(), LimitError> {
    if by_caller.count >= limits.max_pending_per_caller {
        return Err(LimitError::PerCaller {
            caller: caller.to_string(),
            limit: limits.max_pending_per_caller,
        });
    }
    if open.count >= limits.max_pending {
        return Err(LimitError::Total {
            limit: limits.max_pending,
        });
    }
    if open.bytes.saturating_add(bytes) > limits.max_held_bytes {
        return Err(LimitError::Bytes {
            limit: limits.max_held_bytes,
            bytes,
        });
    }
    if by_caller.bytes.saturating_add(bytes) > limits.max_held_bytes_per_caller {
        return Err(LimitError::CallerBytes {
            caller: caller.to_string(),
            limit: limits.max_held_bytes_per_caller,
            bytes,
        });
    }
    Ok(())
}

fn entry<'a>(book: &'a Book, id: &str) -> Result<&'a Entry, ApprovalError> {
    book.entries
        .get(id)
        .ok_or_else(|| ApprovalError::unknown(id))
}

/// Takes the held call out of a pending approval and gives it `status`.
fn take_pending(book: &mut Book, id: &str, status: ApprovalStatus) -> Result<Claim, ApprovalError> {
    let entry = book
        .entries
        .get_mut(id)
        .ok_or_else(|| ApprovalError::unknown(id))?;
    let call = match (entry.view.status, entry.call.take()) {
        (ApprovalStatus::Pending, Some(call)) => call,
        (current, call) => {
            entry.call = call;
            return Err(ApprovalError::Closed {
                id: id.to_string(),
                status: closed_status(current, &entry.view),
            });
        }
    };
    entry.view.status = status;
    let claim = Claim {
        id: id.to_string(),
        decision_id: entry.decision_id.clone(),
        card: entry.view.card.clone(),
        call,
        client: entry.view.client,
        bound: entry.view.bound.clone(),
    };
    let seq = entry.seq;
    book.pending.remove(&seq);
    Ok(claim)
}

/// The status a late answer is told; a withdrawal also says what withdrew it.
pub(crate) fn closed_status(status: ApprovalStatus, view: &ApprovalView) -> String {
    match view.withdrawn_because() {
        Some(why) => format!("{} ({why})", status.as_str()),
        None => status.as_str().to_string(),
    }
}
