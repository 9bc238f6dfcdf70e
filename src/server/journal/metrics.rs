//! server::journal::metrics: the decision log's metrics in `/metrics`, read once per scrape — what the writer has done
//! (group commits, lines, bytes, files followed after a rename, seconds per phase: lines waiting
//! for the writer, writing, syncing, waking the waiters; and a histogram of each group commit's
//! time from its first line to its waiters woken) and the records that were not logged
//! while their call went on (`log_failure: allow` for decisions and approvals; outcomes always,
//! as their call already ran). Counting only: it must not change what is logged or refused.

use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

use crate::audit::record::ApprovalAction;
use crate::audit::writer::{LogStats, COMMIT_BUCKETS};
use crate::server::metrics::scraped::{counter, counters};

/// The kinds of record a call can go on without.
#[derive(Debug, Clone, Copy)]
pub(super) enum Unlogged {
    Decision,
    Approval,
    Outcome,
}

/// Records not logged while their call went on, by kind.
#[derive(Debug, Default)]
pub(super) struct UnloggedCounts {
    decision: AtomicU64,
    approval: AtomicU64,
    outcome: AtomicU64,
}

impl UnloggedCounts {
    pub(super) fn count(&self, kind: Unlogged) {
        let counter = match kind {
            Unlogged::Decision => &self.decision,
            Unlogged::Approval => &self.approval,
            Unlogged::Outcome => &self.outcome,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The log's counts as of now, to be written at this scrape.
    pub(super) fn read(&self, stats: LogStats) -> LogMetrics {
        let read = |count: &AtomicU64| count.load(Ordering::Relaxed);
        LogMetrics {
            unlogged: [
                ("decision", read(&self.decision)),
                ("approval", read(&self.approval)),
                ("outcome", read(&self.outcome)),
            ],
            stats,
        }
    }
}

/// Approvals' answers logged, by action (`approved`, `refused`, `expired`, `withdrawn`,
/// `voted`): how the asks ended.
#[derive(Debug, Default)]
pub(super) struct Answers([AtomicU64; 5]);

const ACTIONS: [ApprovalAction; 5] = [
    ApprovalAction::Approved,
    ApprovalAction::Refused,
    ApprovalAction::Expired,
    ApprovalAction::Withdrawn,
    ApprovalAction::Voted,
];

impl Answers {
    pub(super) fn count(&self, action: ApprovalAction) {
        let index = ACTIONS.iter().position(|known| *known == action);
        if let Some(counter) = index.and_then(|index| self.0.get(index)) {
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn read(&self) -> AnswerCounts {
        let mut counts = [("", 0); 5];
        for ((slot, action), count) in counts.iter_mut().zip(ACTIONS).zip(&self.0) {
            *slot = (action.as_str(), count.load(Ordering::Relaxed));
        }
        AnswerCounts(counts)
    }
}

/// [`Answers`] as read at one scrape.
#[derive(Debug)]
pub(super) struct AnswerCounts([(&'static str, u64); 5]);

impl Collector for AnswerCounts {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        counters(
            &mut encoder,
            "askgate_approval_answers",
            "Answers to approvals logged, by action (approved, refused, expired, withdrawn, voted).",
            "action",
            &self.0,
        )
    }
}

/// The decision log's counts as read at one scrape.
#[derive(Debug)]
pub(super) struct LogMetrics {
    unlogged: [(&'static str, u64); 3],
    stats: LogStats,
}

impl Collector for LogMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        counters(
            &mut encoder,
            "askgate_log_unlogged",
            "Records not logged while their call went on (log_failure = allow; outcomes always), by kind.",
            "kind",
            &self.unlogged,
        )?;
        let stats = &self.stats;
        for (name, help, value) in [
            ("batches", "Group commits the decision log's writer ran.", stats.batches),
            ("lines", "Records in those group commits.", stats.lines),
            ("bytes", "Bytes of those records.", stats.bytes),
            ("failed_batches", "Group commits that failed.", stats.failed_batches),
            ("followed", "Times a log file renamed, deleted or replaced while written was followed by a new file.", stats.followed),
        ] {
            counter(&mut encoder, &format!("askgate_log_{name}"), help, value)?;
        }
        counters(
            &mut encoder,
            "askgate_log_seconds",
            "Time the decision log's writer spent, summed over group commits, by phase.",
            "phase",
            &[
                ("wait", stats.wait.as_secs_f64()),
                ("write", stats.write.as_secs_f64()),
                ("sync", stats.sync.as_secs_f64()),
                ("wake", stats.wake.as_secs_f64()),
            ],
        )?;
        counter(
            &mut encoder,
            "askgate_log_chain_seconds",
            "Time the decision log's writer spent on the hash chain (chain fields, hashing each line, signing checkpoints), part of its write phase.",
            stats.chain.as_secs_f64(),
        )?;
        let mut metric = encoder.encode_descriptor(
            "askgate_log_commit_seconds",
            "Group commits by their time from the first line joining to the waiters woken (the longest a line waited on the decision log).",
            None,
            MetricType::Histogram,
        )?;
        // The encoder sums the buckets into the cumulative counts of the format.
        let buckets: Vec<(f64, u64)> = COMMIT_BUCKETS
            .iter()
            .copied()
            .chain([f64::INFINITY])
            .zip(stats.commits)
            .collect();
        let count = stats.commits.iter().sum();
        let sum = (stats.wait + stats.write + stats.sync + stats.wake).as_secs_f64();
        metric.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }
}
