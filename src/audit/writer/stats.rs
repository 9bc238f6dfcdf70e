//! audit::writer::stats: what the writer thread has done since the log opened — batches,
//! lines and bytes written, the time spent in each phase of a group commit (lines waiting
//! for the writer, writing, syncing, waking the waiters), so `/metrics` shows where the logged
//! path spends its time, and how long each group commit took from its first line to its
//! waiters woken, by bucket, so a stall shows too — and, within writing, the time the hash
//! chain took (chain fields, hashes, checkpoint signatures), so its cost is measured. Counters only: it must not change what is
//! written.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the commit-time buckets: from a batch's first line joining to its
/// waiters woken, the longest any line of it waited on the log.
pub const COMMIT_BUCKETS: [f64; 10] = [
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 1.0,
];

/// Commits per bucket: one per bound of [`COMMIT_BUCKETS`], then one past every bound.
pub type CommitCounts = [u64; COMMIT_BUCKETS.len() + 1];

/// The running totals, shared by the writer thread and the log's handle.
#[derive(Debug, Default)]
pub(super) struct Stats {
    batches: AtomicU64,
    lines: AtomicU64,
    bytes: AtomicU64,
    failed_batches: AtomicU64,
    followed: AtomicU64,
    wait_nanos: AtomicU64,
    write_nanos: AtomicU64,
    sync_nanos: AtomicU64,
    wake_nanos: AtomicU64,
    chain_nanos: AtomicU64,
    commits: [AtomicU64; COMMIT_BUCKETS.len() + 1],
}

/// A copy of the totals at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Group commits the writer ran (written or failed).
    pub batches: u64,
    /// Lines in those commits.
    pub lines: u64,
    pub bytes: u64,
    pub failed_batches: u64,
    /// Times a file deleted, renamed or replaced while it was written was followed by a new one.
    pub followed: u64,
    /// Summed over batches: from the first line joining to the writer taking the batch.
    pub wait: Duration,
    /// Summed over batches: the `write` calls (and the checks that the path names the file).
    pub write: Duration,
    /// Summed over batches: the batch's `sync_data` (syncs overlap, so the sum can
    /// pass the time the crew ran).
    pub sync: Duration,
    /// Summed over batches: handing the result to the waiters.
    pub wake: Duration,
    /// Summed over batches, part of `write`: adding the chain fields, hashing each line and
    /// signing checkpoints.
    pub chain: Duration,
    /// Batches by the time from their first line joining to their waiters woken (not
    /// cumulative; see [`COMMIT_BUCKETS`]).
    pub commits: CommitCounts,
}

/// How one batch went, as the crew timed it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct BatchTimes {
    pub(super) wait: Duration,
    pub(super) write: Duration,
    pub(super) sync: Duration,
    pub(super) wake: Duration,
    /// Part of `write`.
    pub(super) chain: Duration,
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl Stats {
    pub(super) fn batch(&self, lines: usize, bytes: usize, failed: bool, times: BatchTimes) {
        let count = |value: usize| u64::try_from(value).unwrap_or(u64::MAX);
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.lines.fetch_add(count(lines), Ordering::Relaxed);
        self.bytes.fetch_add(count(bytes), Ordering::Relaxed);
        if failed {
            self.failed_batches.fetch_add(1, Ordering::Relaxed);
        }
        self.wait_nanos
            .fetch_add(nanos(times.wait), Ordering::Relaxed);
        self.write_nanos
            .fetch_add(nanos(times.write), Ordering::Relaxed);
        self.sync_nanos
            .fetch_add(nanos(times.sync), Ordering::Relaxed);
        self.wake_nanos
            .fetch_add(nanos(times.wake), Ordering::Relaxed);
        self.chain_nanos
            .fetch_add(nanos(times.chain), Ordering::Relaxed);
        let took = (times.wait + times.write + times.sync + times.wake).as_secs_f64();
        let bucket = COMMIT_BUCKETS
            .iter()
            .position(|bound| took <= *bound)
            .unwrap_or(COMMIT_BUCKETS.len());
        if let Some(count) = self.commits.get(bucket) {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn followed(&self) {
        self.followed.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn snapshot(&self) -> LogStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        LogStats {
            batches: load(&self.batches),
            lines: load(&self.lines),
            bytes: load(&self.bytes),
            failed_batches: load(&self.failed_batches),
            followed: load(&self.followed),
            wait: Duration::from_nanos(load(&self.wait_nanos)),
            write: Duration::from_nanos(load(&self.write_nanos)),
            sync: Duration::from_nanos(load(&self.sync_nanos)),
            wake: Duration::from_nanos(load(&self.wake_nanos)),
            chain: Duration::from_nanos(load(&self.chain_nanos)),
            commits: std::array::from_fn(|bucket| self.commits.get(bucket).map_or(0, load)),
        }
    }
}
