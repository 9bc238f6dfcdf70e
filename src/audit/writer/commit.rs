//! audit::writer::commit: one group commit at a time, the path `pipeline` takes for anything
//! out of the ordinary (a rotation, a file replaced, a failure). It writes a batch's lines with
//! one sync per file; `pipeline` records the result in the log's failure state and only then
//! acknowledges every line in it at once. A line counts as written only when the log path still names the file it went to,
//! checked before and after writing (F6); a file deleted, renamed or replaced while it was
//! written is cut back to its acknowledged lines and the lines go to a new file, so a rotation
//! done by another tool refuses no call. After a failure, batches fail with its cause and touch
//! nothing until `pacing` allows an attempt. Which file a line goes to is `rotation`'s; this
//! module must never acknowledge a line before it is synced in a file the path names.

use std::time::Instant;

use super::pacing::Pacing;
use super::queue::Filling;
use super::rotation::Sink;
use super::stats::{BatchTimes, Stats};
use super::LogError;

/// How many times one batch follows its file to a new one before it fails: a file moved
/// away once is a rotation; moved away again under every retry, something is wrong.
const MAX_FOLLOWS: usize = 4;

/// What the crew's threads work with, one at a time.
pub(super) struct Writer {
    pub(super) sink: Sink,
    pub(super) pacing: Pacing,
}

/// Writes one batch; a failure is taken back from the file and paces the next attempt.
pub(super) fn attempt(
    writer: &mut Writer,
    filling: &Filling,
    times: &mut BatchTimes,
    stats: &Stats,
) -> Result<(), LogError> {
    let result = write_batch(&mut writer.sink, filling, times, stats);
    if result.is_err() {
        // Never leave a partial line for the next batch to join.
        writer.sink.take_back();
    }
    writer.pacing.record(result.is_err(), Instant::now());
    result
}

fn write_batch(
    sink: &mut Sink,
    filling: &Filling,
    times: &mut BatchTimes,
    stats: &Stats,
) -> Result<(), LogError> {
    if let Err(gone) = sink.still_current() {
        // Deleted or replaced between batches: a new file when the directory allows one.
        tracing::warn!(error = %gone, "decision log file replaced; opening a new one");
        sink.abandon_file();
    }
    let mut start = 0;
    let mut follows = 0;
    while start < filling.ends.len() {
        let started = Instant::now();
        let end = segment_end(sink, filling, start)?;
        let written = sink.write(segment(filling, start, end));
        times.chain += sink.take_chained();
        written?;
        if end == filling.ends.len() {
            filling.batch.written();
        }
        let written = Instant::now();
        times.write += written - started;
        sink.sync()?;
        let synced = Instant::now();
        times.sync += synced - written;
        // INVARIANT: a line is acknowledged only if, after its sync, the log path names its file.
        let current = sink.still_current();
        times.write += synced.elapsed();
        match current {
            Ok(()) => {
                sink.commit();
                start = end;
            }
            Err(gone) if follows < MAX_FOLLOWS => {
                follows += 1;
                stats.followed();
                tracing::warn!(error = %gone, "decision log file moved while written; its lines go to a new file");
                sink.take_back();
            }
            Err(gone) => return Err(gone),
        }
    }
    Ok(())
}

/// One past the last line from `start` that goes to the current file, moving to the next file
/// first when the line at `start` does not fit (at least one line always goes).
fn segment_end(sink: &mut Sink, filling: &Filling, start: usize) -> Result<usize, LogError> {
    let raw = |index: usize| u64::try_from(segment(filling, index, index + 1).len());
    let raw = |index: usize| raw(index).unwrap_or(u64::MAX);
    if sink.must_rotate(0, sink.line_len(raw(start))) {
        sink.rotate()?;
    }
    // Each line as it will be stored, with its chain fields.
    let length = |index: usize| sink.line_len(raw(index));
    let mut planned = length(start);
    let mut end = start + 1;
    while end < filling.ends.len() && !sink.must_rotate(planned, length(end)) {
        planned = planned.saturating_add(length(end));
        end += 1;
    }
    Ok(end)
}

/// The bytes of lines `start..end`.
fn segment(filling: &Filling, start: usize, end: usize) -> &[u8] {
    let from = match start.checked_sub(1) {
        Some(previous) => filling.ends.get(previous).copied().unwrap_or(0),
        None => 0,
    };
    let to = filling.ends.get(end - 1).copied().unwrap_or(from);
    filling.bytes.get(from..to).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::tests::{append_from_four_threads, assert_each_thread_in_order, ids_of};
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
        append_from_four_threads(&log);
        drop(log);
        let files = sequence_files(dir.path(), None).unwrap();
        assert_eq!(files.len(), 1);
        let text = std::fs::read_to_string(&files[0].1).unwrap();
        assert_each_thread_in_order(&ids_of(&text));
    }
}
