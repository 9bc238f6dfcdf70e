//! audit::writer::pipeline: the writer threads (the crew) and their pipelined group commit.
//! Each crew thread (one by default: `LogOptions::sync_threads`) takes the lines that filled
//! meanwhile, writes them under the crew's lock (one thread at a time, in the order they are
//! taken) and runs their sync itself, outside the lock, on its own description of the file, so
//! with several threads their syncs overlap (a disk may complete more overlapping syncs a
//! second than syncs in a row, but each one later: see `DEFAULT_SYNC_THREADS`). The
//! thread whose sync completes acknowledges, oldest first, every batch whose sync has completed
//! and wakes their waiters itself: a line is handed from thread to thread only when an appender
//! wakes a sleeping crew thread and when that thread wakes the waiting tasks. Batches are
//! acknowledged in the order they were written, each only when a sync that started after its
//! bytes were written has completed and the log path still names the file. Anything out of
//! the ordinary — a rotation, a file replaced, a failure, pacing after one, no fsync — first
//! lets every sync in flight settle and then goes through `commit`'s one-batch-at-a-time path
//! with the file to itself, so a file is closed or moved from only once every sync on it has
//! completed, and the failure semantics stay `commit`'s. It must never acknowledge a line
//! before its own sync has completed.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::commit::{attempt, Writer};
use super::health::FailureState;
use super::queue::{Filling, Queue};
use super::stats::{BatchTimes, Stats};
use super::LogError;

/// What a sync ended with and how long it took.
type Synced = (std::io::Result<()>, Duration);

/// A batch written whose sync is in flight or done, not yet acknowledged.
struct InFlight {
    /// Its place in the order batches were written.
    id: u64,
    filling: Filling,
    times: BatchTimes,
    /// Its bytes in the file (chained), after those of the batches before it.
    bytes: u64,
    /// Filled in by the thread that ran its sync.
    synced: Option<Synced>,
}

/// What the crew threads share under one lock.
struct CrewState {
    writer: Writer,
    /// Oldest first. INVARIANT: in the order the batches were written, each batch's bytes after
    /// those of the one before it.
    batches: VecDeque<InFlight>,
    next_id: u64,
    /// A thread waits for the file to itself: no batch is pipelined meanwhile.
    draining: bool,
    /// A thread settles a failed or moved batch with every other in flight: the others only
    /// post their syncs' results.
    settling: bool,
}

/// The crew's shared state; every crew thread runs [`run`] on it.
pub(super) struct Crew {
    state: Mutex<CrewState>,
    /// A sync's result was posted, or a drain or a settlement ended.
    changed: Condvar,
}

impl Crew {
    pub(super) fn new(writer: Writer) -> Self {
        Self {
            state: Mutex::new(CrewState {
                writer,
                batches: VecDeque::new(),
                next_id: 0,
                draining: false,
                settling: false,
            }),
            changed: Condvar::new(),
        }
    }
}

/// One crew thread's view: its lane (which description of the file it syncs) and what it shares.
struct Hand<'a> {
    lane: usize,
    crew: &'a Crew,
    queue: &'a Queue,
    failures: &'a FailureState,
    stats: &'a Stats,
}

type Guard<'a> = MutexGuard<'a, CrewState>;

/// A crew thread: one batch after another until the queue is closed and drained.
pub(super) fn run(lane: usize, crew: &Crew, queue: &Queue, failures: &FailureState, stats: &Stats) {
    let hand = Hand {
        lane,
        crew,
        queue,
        failures,
        stats,
    };
    while queue.wait_for_lines() {
        let state = hand.wait_until(hand.lock(), |state| !state.draining && !state.settling);
        // Taken under the crew's lock: batches are written in the order they are taken.
        if let Some(filling) = queue.try_take() {
            hand.start(state, filling);
        }
    }
}

impl<'a> Hand<'a> {
    fn lock(&self) -> Guard<'a> {
        self.crew
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits (the lock released meanwhile) until `ready` holds. No deadline here: a sync that
    /// hangs holds the crew as a hanging `sync_data` would, and the appenders' own deadline
    /// (`answer_deadline`) answers their calls meanwhile.
    fn wait_until(&self, state: Guard<'a>, ready: impl Fn(&CrewState) -> bool) -> Guard<'a> {
        self.crew
            .changed
            .wait_while(state, |state| !ready(state))
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes a batch: pipelined when it can be, otherwise with the file to itself.
    fn start(&self, mut state: Guard<'a>, filling: Filling) {
        let times = BatchTimes {
            wait: filling
                .since
                .map(|since| since.elapsed())
                .unwrap_or_default(),
            ..BatchTimes::default()
        };
        match self.sync_handle(&state, &filling) {
            Some(file) => self.pipelined(state, filling, times, &file),
            None => {
                state = self.drain(state);
                self.one_at_a_time(&mut state, filling, times);
                self.end_drain(state);
            }
        }
    }

    /// This thread's description of the file, when the batch can be pipelined: fsync, no
    /// failure is being paced, the path names the open file and the batch fits in it.
    fn sync_handle(&self, state: &CrewState, filling: &Filling) -> Option<Arc<std::fs::File>> {
        let sink = &state.writer.sink;
        let file = sink.sync_handle(self.lane)?;
        let raw = u64::try_from(filling.bytes.len()).unwrap_or(u64::MAX);
        let lines = u64::try_from(filling.ends.len()).unwrap_or(u64::MAX);
        // A checkpoint that falls due may still take the file a line past its limit.
        let bytes = sink.batch_len(raw, lines);
        let usable =
            self.failures.current().is_none() && sink.fits(bytes) && sink.still_current().is_ok();
        usable.then_some(file)
    }

    /// Writes the batch under the lock, syncs it outside, then acknowledges what is ready.
    fn pipelined(
        &self,
        mut state: Guard<'a>,
        filling: Filling,
        mut times: BatchTimes,
        file: &std::fs::File,
    ) {
        let started = Instant::now();
        let written = state.writer.sink.write(&filling.bytes);
        times.chain += state.writer.sink.take_chained();
        let written = match written {
            Ok(written) => written,
            Err(error) => {
                let mut state = self.drain(state);
                // Never leave a partial line for the next batch to join.
                state.writer.sink.take_back();
                state.writer.pacing.record(true, Instant::now());
                self.finish(filling, times, Err(error));
                self.end_drain(state);
                return;
            }
        };
        filling.batch.written();
        times.write = started.elapsed();
        let id = state.next_id;
        state.next_id += 1;
        state.batches.push_back(InFlight {
            id,
            bytes: written,
            filling,
            times,
            synced: None,
        });
        drop(state);
        let started = Instant::now();
        let synced = (file.sync_data(), started.elapsed());
        let mut state = self.lock();
        if let Some(batch) = state.batches.iter_mut().find(|batch| batch.id == id) {
            batch.synced = Some(synced);
        }
        self.crew.changed.notify_all();
        if !state.settling {
            self.acknowledge_ready(state);
        }
    }

    /// Acknowledges, oldest first, every batch whose sync has completed.
    fn acknowledge_ready(&self, mut state: Guard<'a>) {
        while state
            .batches
            .front()
            .is_some_and(|batch| batch.synced.is_some())
        {
            let Some(batch) = state.batches.pop_front() else {
                break;
            };
            state = self.settle(state, batch);
        }
        if state.batches.is_empty() {
            // A drain may wait for this.
            self.crew.changed.notify_all();
        }
    }

    /// The oldest batch's sync completed: acknowledged when the path still names the file.
    fn settle(&self, mut state: Guard<'a>, mut batch: InFlight) -> Guard<'a> {
        let Some((result, took)) = batch.synced.take() else {
            return state;
        };
        batch.times.sync = took;
        let checked = Instant::now();
        let sink = &state.writer.sink;
        let result = result
            .map_err(|error| sink.sync_failed(&error))
            .and_then(|()| sink.still_current());
        batch.times.write += checked.elapsed();
        match result {
            Ok(()) => {
                state.writer.sink.commit_bytes(batch.bytes);
                state.writer.pacing.record(false, Instant::now());
                self.finish(batch.filling, batch.times, Ok(()));
                state
            }
            Err(error @ LogError::Replaced { .. }) => self.follow(state, batch, &error),
            Err(error) => self.fail_all(state, batch, error),
        }
    }

    /// The sync failed: every batch still in flight fails with it (their bytes are cut back).
    fn fail_all(&self, state: Guard<'a>, first: InFlight, error: LogError) -> Guard<'a> {
        let (mut state, rest) = self.settle_syncs(state);
        state.writer.sink.take_back();
        state.writer.pacing.record(true, Instant::now());
        for batch in std::iter::once(first).chain(rest) {
            self.finish(batch.filling, batch.times, Err(error.clone()));
        }
        self.end_settling(state)
    }

    /// The file was moved or deleted while written: it is cut back to its acknowledged lines
    /// and every batch in flight is written again, one at a time, to a new file.
    fn follow(&self, state: Guard<'a>, first: InFlight, gone: &LogError) -> Guard<'a> {
        let (mut state, rest) = self.settle_syncs(state);
        self.stats.followed();
        tracing::warn!(error = %gone, "decision log file moved while written; its lines go to a new file");
        state.writer.sink.take_back();
        for batch in std::iter::once(first).chain(rest) {
            self.one_at_a_time(&mut state, batch.filling, batch.times);
        }
        self.end_settling(state)
    }

    /// Waits for every sync in flight and takes their batches out, unacknowledged; the
    /// others post their results meanwhile and acknowledge nothing.
    fn settle_syncs(&self, mut state: Guard<'a>) -> (Guard<'a>, Vec<InFlight>) {
        state.settling = true;
        let mut state = self.wait_until(state, |state| {
            state.batches.iter().all(|batch| batch.synced.is_some())
        });
        let rest = state.batches.drain(..).collect();
        (state, rest)
    }

    fn end_settling(&self, mut state: Guard<'a>) -> Guard<'a> {
        state.settling = false;
        self.crew.changed.notify_all();
        state
    }

    /// Takes the file to itself: no new batch is pipelined, every one in flight is settled.
    fn drain(&self, state: Guard<'a>) -> Guard<'a> {
        let mut state = self.wait_until(state, |state| !state.draining);
        state.draining = true;
        self.wait_until(state, |state| state.batches.is_empty() && !state.settling)
    }

    fn end_drain(&self, mut state: Guard<'a>) {
        state.draining = false;
        self.crew.changed.notify_all();
    }

    /// `commit`'s path: nothing in flight, the batch written and synced before the next.
    fn one_at_a_time(&self, state: &mut CrewState, filling: Filling, mut times: BatchTimes) {
        let writer = &mut state.writer;
        let result = match self.failures.current() {
            // Too soon after a failure: refused with its cause, nothing touched (F5).
            Some(failure) if !writer.pacing.wait_at(Instant::now()).is_zero() => Err(failure.error),
            _ => attempt(writer, &filling, &mut times, self.stats),
        };
        self.finish(filling, times, result);
    }

    /// Records the batch's result, gives its buffers back, then wakes its waiters.
    fn finish(&self, filling: Filling, mut times: BatchTimes, result: Result<(), LogError>) {
        self.failures.record(&result);
        // The ticker's empty lines (`writer::start_ticker`) are no records.
        let lines = filling
            .ends
            .iter()
            .scan(0, |start, end| Some(std::mem::replace(start, *end) != *end))
            .filter(|record| *record)
            .count();
        let (bytes, failed) = (filling.bytes.len(), result.is_err());
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
    use super::super::tests::{
        append_from_four_threads, assert_each_thread_in_order, ids_of, record,
    };
    use super::super::{DecisionLog, LogOptions};
    use crate::audit::files::sequence_files;

    /// Appenders on several threads with fsync (batches pipelined, with three crew threads
    /// their syncs overlapping, small files so rotations come between them, with and without
    /// zero-filled room): every acknowledged line is in the files once, each thread's in the
    /// order it appended them, no file ends in a partial line or in room, and the chain holds.
    #[test]
    fn pipelined_batches_keep_every_acknowledged_line_in_order_across_rotations() {
        for (sync_threads, room_bytes) in [(1, 0), (3, 0), (1, 4096), (3, 4096)] {
            let dir = tempfile::tempdir().unwrap();
            let line = record(0).to_line().unwrap().len() as u64;
            let options = LogOptions {
                max_file_bytes: 40 * line,
                sync_threads,
                room_bytes,
                ..LogOptions::default()
            };
            let log = DecisionLog::open(dir.path(), options).unwrap();
            append_from_four_threads(&log);
            drop(log);
            let mut ids = Vec::new();
            for (_, path) in sequence_files(dir.path(), None).unwrap() {
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(text.ends_with('\n'), "{}", path.display());
                ids.extend(ids_of(&text));
            }
            assert_eq!(ids.len(), 200, "{sync_threads} threads");
            assert_each_thread_in_order(&ids);
            // The chain holds across the pipelined batches and the rotations between them.
            let report =
                crate::audit::chain::verify::verify(&[dir.path().to_path_buf()], &[]).unwrap();
            assert!(!report.tampered(), "{:?}", report.findings);
        }
    }

    /// Three crew threads with their syncs overlapping while another tool keeps renaming the
    /// current file away (logrotate without copytruncate), once more after each group commit
    /// (a file moved away under every retry of one batch fails it, by design: `commit`'s
    /// `MAX_FOLLOWS`): no append fails, every acknowledged line is in some file, and every
    /// file ends at a line's end (with room, its room cut off).
    #[test]
    fn overlapping_syncs_follow_a_file_renamed_while_written() {
        for room_bytes in [0, 64 * 1024] {
            follow_renames(room_bytes);
        }
    }

    fn follow_renames(room_bytes: u64) {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let options = LogOptions {
            sync_threads: 3,
            room_bytes,
            ..LogOptions::default()
        };
        let log = DecisionLog::open(dir.path(), options).unwrap();
        let done = AtomicBool::new(false);
        let mut renames = 0;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // Set however the appends end, so the renaming below stops.
                struct Done<'a>(&'a AtomicBool);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        self.0.store(true, Ordering::Relaxed);
                    }
                }
                let _done = Done(&done);
                append_from_four_threads(&log);
            });
            let mut seen = 0;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(1));
                let batches = log.stats().batches;
                if batches == seen {
                    continue;
                }
                seen = batches;
                for (_, path) in sequence_files(dir.path(), None).unwrap() {
                    let moved = dir.path().join(format!("moved-{renames}.jsonl"));
                    if std::fs::rename(&path, moved).is_ok() {
                        renames += 1;
                    }
                }
            }
        });
        drop(log);
        assert!(renames > 0);
        let mut ids = std::collections::BTreeSet::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            assert!(text.is_empty() || text.ends_with('\n'), "{room_bytes}");
            ids.extend(ids_of(&text));
        }
        for thread in 0..4u32 {
            for index in 0..50u32 {
                assert!(
                    ids.contains(&(thread * 100 + index)),
                    "{thread}/{index} lost"
                );
            }
        }
    }
}
