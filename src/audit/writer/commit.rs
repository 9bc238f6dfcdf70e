//! audit::writer::commit: the writer thread's group commit. It takes every line waiting (up to
//! a bound), writes them as one batch with one sync, records the batch's result in the log's
//! failure state and only then acknowledges each line. A batch counts as written only when the
//! log path still names the file it went to, checked before and after writing (F6). After a
//! failure, batches fail with its cause and touch nothing until `pacing` allows an attempt. Which file a line goes to is `rotation`'s; this
//! module must never acknowledge a line before its batch is written.

use std::sync::mpsc;
use std::time::Instant;

use super::health::FailureState;
use super::pacing::Pacing;
use super::rotation::Sink;
use super::LogError;

/// Most lines written under one sync (bounds the latency of the first appender of a batch).
const MAX_BATCH_LINES: usize = 4096;

pub(super) type Reply = Box<dyn FnOnce(Result<(), LogError>) + Send>;

/// One encoded line and whom to tell once it is written.
pub(super) struct Request {
    pub(super) line: Vec<u8>,
    pub(super) reply: Reply,
}

/// The writer thread: batches until every sender is gone.
pub(super) fn run(
    sink: &mut Sink,
    receiver: &mpsc::Receiver<Request>,
    failures: &FailureState,
    mut pacing: Pacing,
) {
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH_LINES {
            match receiver.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let result = match failures.current() {
            // Too soon after a failure: refused with its cause, nothing touched (F5).
            Some(failure) if !pacing.wait_at(Instant::now()).is_zero() => Err(failure.error),
            _ => attempt(sink, &batch, &mut pacing),
        };
        failures.record(&result);
        for request in batch {
            (request.reply)(result.clone());
        }
    }
}

/// Writes one batch; a failure is taken back from the file and paces the next attempt.
fn attempt(sink: &mut Sink, batch: &[Request], pacing: &mut Pacing) -> Result<(), LogError> {
    let result = write_batch(sink, batch);
    if result.is_err() {
        // Never leave a partial line for the next batch to join.
        sink.take_back_failed_write();
    }
    pacing.record(result.is_err(), Instant::now());
    result
}

fn write_batch(sink: &mut Sink, batch: &[Request]) -> Result<(), LogError> {
    if let Err(gone) = sink.still_current() {
        // Deleted or replaced under us: a new file when the directory allows one (below).
        tracing::warn!(error = %gone, "decision log file replaced; opening a new one");
        sink.abandon_file();
    }
    let mut pending: Vec<u8> = Vec::new();
    for request in batch {
        let line_bytes = u64::try_from(request.line.len()).unwrap_or(u64::MAX);
        let pending_bytes = u64::try_from(pending.len()).unwrap_or(u64::MAX);
        if sink.must_rotate(pending_bytes, line_bytes) {
            sink.flush(&pending)?;
            sink.still_current()?;
            pending.clear();
            sink.rotate()?;
        }
        pending.extend_from_slice(&request.line);
    }
    sink.flush(&pending)?;
    // INVARIANT: a line is acknowledged only if, after its sync, the log path names its file.
    sink.still_current()
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]

    use super::super::tests::record;
    use super::super::{DecisionLog, Durability, LogOptions};
    use crate::audit::files::sequence_files;

    /// Appenders on several threads: every acknowledged line is in the file, each thread's in
    /// the order it appended them.
    #[test]
    fn every_acknowledged_line_is_written_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let options = LogOptions {
            durability: Durability::None,
            ..LogOptions::default()
        };
        let log = DecisionLog::open(dir.path(), options).unwrap();
        std::thread::scope(|scope| {
            for thread in 0..4u32 {
                let log = &log;
                scope.spawn(move || {
                    for index in 0..50u32 {
                        log.append_blocking(&record(thread * 100 + index)).unwrap();
                    }
                });
            }
        });
        drop(log);
        let files = sequence_files(dir.path()).unwrap();
        assert_eq!(files.len(), 1);
        let text = std::fs::read_to_string(&files[0].1).unwrap();
        let ids: Vec<u32> = text
            .lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                value["id"].as_str().unwrap()[1..].parse().unwrap()
            })
            .collect();
        assert_eq!(ids.len(), 200);
        for thread in 0..4u32 {
            let mine: Vec<u32> = ids
                .iter()
                .copied()
                .filter(|id| id / 100 == thread)
                .collect();
            let expected: Vec<u32> = (0..50).map(|index| thread * 100 + index).collect();
            assert_eq!(mine, expected);
        }
    }
}
