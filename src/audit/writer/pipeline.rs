//! audit::writer::pipeline: the writer thread's loop, with syncs that overlap. A batch that fits
//! in the open file is written and its sync handed to a lane (`lanes`); the thread goes on to
//! the next batch while the sync runs, with at most [`SYNC_LANES`] in flight. Batches are
//! acknowledged in the order they were written, each only when a sync that started after its
//! bytes were written has completed and the log path still names the file. Anything out of the
//! ordinary — a rotation, a file replaced, a failure, pacing after one — first settles every
//! sync in flight and then goes through `commit`'s one-batch-at-a-time path, so a file is
//! closed or moved from only once every sync on it has completed, and the failure semantics
//! stay `commit`'s. It must never acknowledge a line before its own sync has completed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::commit::{attempt, Writer};
use super::health::FailureState;
use super::lanes::{SyncSlot, Synced, SYNC_LANES};
use super::queue::{Filling, Next, Queue};
use super::stats::{BatchTimes, Stats};
use super::LogError;

/// A batch written whose sync is in flight.
struct InFlight {
    filling: Filling,
    times: BatchTimes,
    /// Its bytes in the file, after those of the batches before it.
    bytes: u64,
    /// Which of the file's sync descriptions its sync uses.
    handle: usize,
    slot: Arc<SyncSlot>,
}

/// The writer thread's view: what it shares with the appenders, and the batches in flight.
struct Flight<'a> {
    queue: &'a Queue,
    failures: &'a FailureState,
    stats: &'a Stats,
    /// Oldest first. INVARIANT: at most `SYNC_LANES` long, in the order the batches were written.
    batches: VecDeque<InFlight>,
}

/// The writer thread: one batch after another until the queue is closed and drained.
pub(super) fn run(mut writer: Writer, queue: &Queue, failures: &FailureState, stats: &Stats) {
    let mut flight = Flight {
        queue,
        failures,
        stats,
        batches: VecDeque::with_capacity(SYNC_LANES),
    };
    loop {
        flight.acknowledge_completed(&mut writer);
        if flight.batches.len() >= SYNC_LANES {
            flight.settle_oldest(&mut writer);
            continue;
        }
        match queue.next() {
            Next::Lines(filling) => flight.start(&mut writer, filling),
            Next::Nudged => {}
            Next::Closed => break,
        }
    }
    flight.drain(&mut writer);
}

impl Flight<'_> {
    /// Writes a batch: pipelined when it can be, otherwise after settling what is in flight.
    fn start(&mut self, writer: &mut Writer, filling: Filling) {
        let times = BatchTimes {
            wait: filling
                .since
                .map(|since| since.elapsed())
                .unwrap_or_default(),
            ..BatchTimes::default()
        };
        match self.handle_for(writer, &filling) {
            Some(handle) => self.write_pipelined(writer, filling, times, handle),
            None => {
                self.drain(writer);
                self.one_at_a_time(writer, filling, times);
            }
        }
    }

    /// The sync description a pipelined batch would use, when it can be pipelined: lanes run,
    /// no failure is being paced, the path names the open file and the batch fits in it.
    fn handle_for(&self, writer: &Writer, filling: &Filling) -> Option<usize> {
        writer.lanes.as_ref()?;
        if self.failures.current().is_some() {
            return None;
        }
        let bytes = u64::try_from(filling.bytes.len()).unwrap_or(u64::MAX);
        if !writer.sink.fits(bytes) || writer.sink.still_current().is_err() {
            return None;
        }
        (0..SYNC_LANES).find(|index| {
            writer.sink.sync_handle(*index).is_some()
                && !self.batches.iter().any(|batch| batch.handle == *index)
        })
    }

    fn write_pipelined(
        &mut self,
        writer: &mut Writer,
        filling: Filling,
        mut times: BatchTimes,
        handle: usize,
    ) {
        let started = Instant::now();
        if let Err(error) = writer.sink.write(&filling.bytes) {
            self.drain(writer);
            // Never leave a partial line for the next batch to join.
            writer.sink.take_back();
            writer.pacing.record(true, Instant::now());
            self.finish(filling, times, Err(error));
            return;
        }
        filling.batch.written();
        times.write = started.elapsed();
        let slot = match (writer.sink.sync_handle(handle), &writer.lanes) {
            (Some(file), Some(lanes)) => lanes.sync(Arc::clone(&file)).unwrap_or_else(|| {
                let started = Instant::now();
                SyncSlot::completed((file.sync_data(), started.elapsed()))
            }),
            _ => SyncSlot::completed((Ok(()), Default::default())),
        };
        self.batches.push_back(InFlight {
            bytes: u64::try_from(filling.bytes.len()).unwrap_or(u64::MAX),
            filling,
            times,
            handle,
            slot,
        });
    }

    /// Acknowledges, oldest first, every batch whose sync has completed.
    fn acknowledge_completed(&mut self, writer: &mut Writer) {
        while let Some(synced) = self.batches.front().and_then(|batch| batch.slot.take()) {
            if let Some(batch) = self.batches.pop_front() {
                self.settle(writer, batch, synced);
            }
        }
    }

    fn settle_oldest(&mut self, writer: &mut Writer) {
        if let Some(batch) = self.batches.pop_front() {
            let synced = batch.slot.wait();
            self.settle(writer, batch, synced);
        }
    }

    /// Settles every batch in flight, oldest first.
    fn drain(&mut self, writer: &mut Writer) {
        while !self.batches.is_empty() {
            self.settle_oldest(writer);
        }
    }

    /// The oldest batch's sync completed: acknowledged when the path still names the file.
    fn settle(&mut self, writer: &mut Writer, mut batch: InFlight, (result, took): Synced) {
        batch.times.sync = took;
        let checked = Instant::now();
        let result = result
            .map_err(|error| writer.sink.sync_failed(&error))
            .and_then(|()| writer.sink.still_current());
        batch.times.write += checked.elapsed();
        match result {
            Ok(()) => {
                writer.sink.commit_bytes(batch.bytes);
                writer.pacing.record(false, Instant::now());
                self.finish(batch.filling, batch.times, Ok(()));
            }
            Err(error @ LogError::Replaced { .. }) => self.follow(writer, batch, &error),
            Err(error) => self.fail_all(writer, batch, error),
        }
    }

    /// The sync failed: every batch still in flight fails with it (their bytes are cut back).
    fn fail_all(&mut self, writer: &mut Writer, first: InFlight, error: LogError) {
        let rest = self.settle_syncs();
        writer.sink.take_back();
        writer.pacing.record(true, Instant::now());
        for batch in std::iter::once(first).chain(rest) {
            self.finish(batch.filling, batch.times, Err(error.clone()));
        }
    }

    /// The file was moved or deleted while written: it is cut back to its acknowledged lines
    /// and every batch in flight is written again, one at a time, to a new file.
    fn follow(&mut self, writer: &mut Writer, first: InFlight, gone: &LogError) {
        let rest = self.settle_syncs();
        self.stats.followed();
        tracing::warn!(error = %gone, "decision log file moved while written; its lines go to a new file");
        writer.sink.take_back();
        for batch in std::iter::once(first).chain(rest) {
            self.one_at_a_time(writer, batch.filling, batch.times);
        }
    }

    /// Waits for every sync in flight and takes their batches out, unacknowledged.
    fn settle_syncs(&mut self) -> Vec<InFlight> {
        let rest: Vec<InFlight> = self.batches.drain(..).collect();
        for batch in &rest {
            let _ = batch.slot.wait();
        }
        rest
    }

    /// `commit`'s path: nothing in flight, the batch written and synced before the next.
    fn one_at_a_time(&mut self, writer: &mut Writer, filling: Filling, mut times: BatchTimes) {
        let result = match self.failures.current() {
            // Too soon after a failure: refused with its cause, nothing touched (F5).
            Some(failure) if !writer.pacing.wait_at(Instant::now()).is_zero() => Err(failure.error),
            _ => attempt(writer, &filling, &mut times, self.stats),
        };
        self.finish(filling, times, result);
    }

    /// Records the batch's result, gives its buffers back, then wakes its waiters.
    fn finish(&mut self, filling: Filling, mut times: BatchTimes, result: Result<(), LogError>) {
        self.failures.record(&result);
        let (lines, bytes, failed) = (filling.ends.len(), filling.bytes.len(), result.is_err());
        let batch = Arc::clone(&filling.batch);
        self.queue.give_back(filling);
        let woken = Instant::now();
        batch.finish(result);
        times.wake = woken.elapsed();
        self.stats.batch(lines, bytes, failed, times);
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]

    use super::super::tests::{
        append_from_four_threads, assert_each_thread_in_order, ids_of, record,
    };
    use super::super::{DecisionLog, LogOptions};
    use crate::audit::files::sequence_files;

    /// Appenders on several threads with fsync (batches pipelined, syncs overlapping, small
    /// files so rotations come between them): every acknowledged line is in the files once,
    /// each thread's in the order it appended them, and no file ends in a partial line.
    #[test]
    fn pipelined_batches_keep_every_acknowledged_line_in_order_across_rotations() {
        let dir = tempfile::tempdir().unwrap();
        let line = record(0).to_line().unwrap().len() as u64;
        let options = LogOptions {
            max_file_bytes: 40 * line,
            ..LogOptions::default()
        };
        let log = DecisionLog::open(dir.path(), options).unwrap();
        append_from_four_threads(&log);
        assert!(log.stats().batches > 0);
        drop(log);
        let mut ids = Vec::new();
        for (_, path) in sequence_files(dir.path(), None).unwrap() {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.ends_with('\n'), "{}", path.display());
            ids.extend(ids_of(&text));
        }
        assert_each_thread_in_order(&ids);
    }
}
