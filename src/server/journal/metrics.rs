//! server::journal::metrics: the decision log's lines in `/metrics` — what the writer has done
//! (group commits, lines, bytes, files followed after a rename, seconds per phase: lines waiting
//! for the writer, writing, syncing, waking the waiters) and the records that were not logged
//! while their call went on (`log_failure: allow` for decisions and approvals; outcomes always,
//! as their call already ran). Counting only: it must not change what is logged or refused.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::audit::writer::LogStats;

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

    /// Appends the log's lines to `out`.
    pub(super) fn render(&self, stats: &LogStats, out: &mut String) {
        out.push_str("# HELP askgate_log_unlogged_total Records not logged while their call went on (log_failure = allow; outcomes always), by kind.\n# TYPE askgate_log_unlogged_total counter\n");
        for (kind, counter) in [
            ("decision", &self.decision),
            ("approval", &self.approval),
            ("outcome", &self.outcome),
        ] {
            let count = counter.load(Ordering::Relaxed);
            let _ = writeln!(out, "askgate_log_unlogged_total{{kind=\"{kind}\"}} {count}");
        }
        for (name, help, value) in [
            ("batches", "Group commits the decision log's writer ran.", stats.batches),
            ("lines", "Records in those group commits.", stats.lines),
            ("bytes", "Bytes of those records.", stats.bytes),
            ("failed_batches", "Group commits that failed.", stats.failed_batches),
            ("followed", "Times a log file renamed, deleted or replaced while written was followed by a new file.", stats.followed),
        ] {
            let _ = writeln!(
                out,
                "# HELP askgate_log_{name}_total {help}\n# TYPE askgate_log_{name}_total counter\naskgate_log_{name}_total {value}"
            );
        }
        out.push_str("# HELP askgate_log_seconds_total Time the decision log's writer spent, summed over group commits, by phase.\n# TYPE askgate_log_seconds_total counter\n");
        for (phase, spent) in [
            ("wait", stats.wait),
            ("write", stats.write),
            ("sync", stats.sync),
            ("wake", stats.wake),
        ] {
            let seconds = spent.as_secs_f64();
            let _ = writeln!(
                out,
                "askgate_log_seconds_total{{phase=\"{phase}\"}} {seconds}"
            );
        }
    }
}
