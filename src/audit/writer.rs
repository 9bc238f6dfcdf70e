//! audit::writer: the durable, rotating decision log. An appender encodes its record on its own
//! thread and copies the line into the batch that is filling (`queue`); a small crew of writer
//! threads each take a batch, write it and run its sync, so syncs overlap, and the thread whose
//! sync completes acknowledges every line of the batches ready, in the order they were written
//! (pipelined group commit, `pipeline`; one batch at a time around rotations and failures,
//! `commit`; the completion a batch's lines share is `batch`), while the next batch fills. The
//! crew moves from file to file by size (`rotation`), keeps zero-filled room past the open
//! file's last line so a sync flushes data alone (`room`), keeps the log's failure state (`health`)
//! and its running totals (`stats`). It owns the files of one directory and must never drop or
//! reorder an acknowledged line.

mod batch;
mod commit;
mod health;
mod pacing;
mod pipeline;
mod queue;
mod room;
mod rotation;
mod stats;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::chain::checkpoint::Checkpoints;
use super::files::ReplicaId;
use super::record::Record;
use batch::{Batch, Step};
use commit::Writer;
use health::FailureState;
use pacing::Pacing;
use pipeline::Crew;
use queue::Queue;
use rotation::Sink;

pub use health::LogFailure;
pub use pacing::{FIRST_RETRY, MAX_RETRY};
pub use stats::{CommitCounts, LogStats, COMMIT_BUCKETS};

/// Default size after which the log moves to the next file.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes of encoded records waiting for the writer; an append past it fails at once
/// (the caller fails closed) rather than queueing without bound.
pub const MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;
/// Default number of writer threads with fsync, each running its batch's sync, so this many
/// syncs may overlap. Measured on loopback with 16 connections (distinct reads, 2026-12-04):
/// 1 thread 22.0k/22.1k requests/s, 2 threads 17.9k/18.1k, 3 14.4k/16.4k, 4 12.5k/12.8k, 8
/// 11.1k/12.2k. Overlapping syncs raise the records a second a disk can sync but make each
/// sync slower and each batch smaller, and a call waits for its own batch's sync; a disk that
/// syncs in parallel may do better with more.
pub const DEFAULT_SYNC_THREADS: usize = 1;
/// Default zero-filled room kept past the open file's last line with fsync (see `room`): none,
/// so the open file is JSON lines to any tool (`tail -f`, `jq`) while it is written.
pub const DEFAULT_ROOM_BYTES: u64 = 0;
/// The room to ask for when syncs matter more than reading the open file with other tools:
/// measured with 5-line batches on this disk, write + `fdatasync` 0.18–0.22 ms a batch
/// without room, 0.11–0.13 with 1 MiB (0.12–0.13 with 256 KiB, and with 4 MiB the batch that
/// grows the file took 8 ms).
pub const SUGGESTED_ROOM_BYTES: u64 = 1024 * 1024;
/// The most room `room_bytes` may ask for (the default file limit).
pub const MAX_ROOM_BYTES: u64 = 64 * 1024 * 1024;
/// The most writer threads `sync_threads` may ask for.
pub const MAX_SYNC_THREADS: usize = 8;
/// The longest an append waits for its line to be synced before it fails (the caller fails
/// closed): a disk that hangs must not hold calls forever.
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `sync_data` after every batch: an acknowledged line survives a crash.
    Fsync,
    /// Write only (no sync), for measuring what durability costs.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOptions {
    pub max_file_bytes: u64,
    pub durability: Durability,
    /// After a failed write, the first retry waits this long, doubling up to `max_retry`;
    /// batches in between fail at once with the same cause.
    pub first_retry: Duration,
    pub max_retry: Duration,
    /// The longest an append waits for its batch (see [`ANSWER_DEADLINE`]).
    pub answer_deadline: Duration,
    /// This replica's id: its files are `decisions-<replica>-<sequence>.jsonl` and it lists,
    /// rotates and appends only those. `None` (a single process) keeps `decisions-<sequence>`.
    pub replica: Option<ReplicaId>,
    /// Writer threads with fsync, 1 to [`MAX_SYNC_THREADS`] (see [`DEFAULT_SYNC_THREADS`]);
    /// without fsync one thread writes.
    pub sync_threads: usize,
    /// Zero-filled room kept past the open file's last line with fsync (see `room` and
    /// [`SUGGESTED_ROOM_BYTES`]); 0 (the default) grows the file line by line.
    pub room_bytes: u64,
    /// Signed checkpoints of the chain (`audit::chain::checkpoint`); `None` writes the chain
    /// without them.
    pub checkpoints: Option<Checkpoints>,
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            durability: Durability::Fsync,
            first_retry: FIRST_RETRY,
            max_retry: MAX_RETRY,
            answer_deadline: ANSWER_DEADLINE,
            replica: None,
            sync_threads: DEFAULT_SYNC_THREADS,
            room_bytes: DEFAULT_ROOM_BYTES,
            checkpoints: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error("cannot encode the record: {0}")]
    Encode(String),
    #[error("cannot write the decision log `{path}`: {message}")]
    Io { path: String, message: String },
    #[error("the decision log file `{path}` is no longer the open file ({message}); it is not written to again")]
    Replaced { path: String, message: String },
    #[error("the decision log is closed")]
    Closed,
    #[error("the decision log's queue is full ({limit} bytes wait to be written)")]
    Full { limit: usize },
    #[error("the decision log did not confirm the write within {} s", deadline.as_secs_f64())]
    Slow { deadline: Duration },
}

impl LogError {
    fn io(path: &Path, error: &std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            message: error.to_string(),
        }
    }
}

/// What the appenders and the writer thread share.
#[derive(Debug)]
struct Shared {
    queue: Queue,
    failures: FailureState,
    stats: stats::Stats,
}

/// The decision log of one directory. Cheap to share (`&self` appends from any thread).
pub struct DecisionLog {
    shared: Arc<Shared>,
    /// The crew's threads (see `pipeline`).
    workers: Vec<JoinHandle<()>>,
    /// Closing and unsigned records, shared with the writer (see [`ChainFlags`]).
    flags: Arc<ChainFlags>,
    /// Wakes the writer for checkpoints due by time; dropped (disconnected) to stop it.
    ticker: Option<(std::sync::mpsc::Sender<()>, JoinHandle<()>)>,
    answer_deadline: Duration,
}

impl DecisionLog {
    /// Creates `dir` if needed and opens the current file (a new one when the last file is
    /// full or ends in a torn line, so new lines never join a torn one).
    pub fn open(dir: &Path, options: LogOptions) -> Result<DecisionLog, LogError> {
        Self::open_bounded(dir, options, MAX_QUEUED_BYTES)
    }

    /// `open` with a queue of at most `limit` bytes.
    pub fn open_bounded(
        dir: &Path,
        options: LogOptions,
        limit: usize,
    ) -> Result<DecisionLog, LogError> {
        std::fs::create_dir_all(dir).map_err(|error| LogError::io(dir, &error))?;
        let flags = Arc::new(ChainFlags::default());
        let mut sink = Sink::new(dir.to_path_buf(), options.clone(), Arc::clone(&flags));
        sink.open_current()?;
        let shared = Arc::new(Shared {
            queue: Queue::new(limit),
            failures: FailureState::default(),
            stats: stats::Stats::default(),
        });
        let threads = match options.durability {
            Durability::Fsync => options.sync_threads.clamp(1, MAX_SYNC_THREADS),
            Durability::None => 1,
        };
        let crew = Arc::new(Crew::new(Writer {
            sink,
            pacing: Pacing::new(options.first_retry, options.max_retry),
        }));
        let mut log = DecisionLog {
            shared,
            workers: Vec::with_capacity(threads),
            flags,
            ticker: None,
            answer_deadline: options.answer_deadline,
        };
        for lane in 0..threads {
            let (crew, shared) = (Arc::clone(&crew), Arc::clone(&log.shared));
            let worker = std::thread::Builder::new()
                .name(format!("askgate-decision-log-{lane}"))
                .spawn(move || {
                    pipeline::run(lane, &crew, &shared.queue, &shared.failures, &shared.stats)
                })
                // Dropping the log stops the threads already started.
                .map_err(|error| LogError::io(dir, &error))?;
            log.workers.push(worker);
        }
        if let Some(checkpoints) = &options.checkpoints {
            let (shared, flags) = (&log.shared, &log.flags);
            log.ticker = Some(start_ticker(shared, flags, checkpoints.interval, dir)?);
        }
        Ok(log)
    }

    /// Appends `record`; returns once it is durable (per the options) or failed.
    pub async fn append(&self, record: &Record) -> Result<(), LogError> {
        self.submit(record)?
            .wait(Step::Synced, self.answer_deadline)
            .await
    }

    /// Appends `record`; returns once it is written, before its sync: it survives a crash of
    /// askgate and is seen by readers, and is synced with its batch right after. For records
    /// logged after the fact (outcomes), whose call does not wait on their durability.
    pub async fn append_written(&self, record: &Record) -> Result<(), LogError> {
        self.submit(record)?
            .wait(Step::Written, self.answer_deadline)
            .await
    }

    /// [`DecisionLog::append`] for threads that may block (tests, the command line).
    pub fn append_blocking(&self, record: &Record) -> Result<(), LogError> {
        self.submit(record)?
            .wait_blocking(Step::Synced, self.answer_deadline)
    }

    /// Why the last batch the writer tried could not be written; `None` while the log is
    /// healthy (nothing tried yet, or the last batch was written).
    pub fn failure(&self) -> Option<LogFailure> {
        self.shared.failures.current()
    }

    /// What the writer has done since the log opened.
    pub fn stats(&self) -> LogStats {
        self.shared.stats.snapshot()
    }

    /// Encodes `record` on the caller's thread (the writer only writes) and queues the line.
    fn submit(&self, record: &Record) -> Result<Arc<Batch>, LogError> {
        let line = record
            .to_line()
            .map_err(|error| LogError::Encode(error.to_string()))?;
        self.shared.queue.push(&line)
    }
}

/// What the log and its writer tell each other about the chain.
#[derive(Debug, Default)]
struct ChainFlags {
    /// The log closes: the last write signs what is unsigned.
    closing: AtomicBool,
    /// Records were written since the last checkpoint (set by the writer).
    unsigned: AtomicBool,
}

/// Every quarter of `interval` (at most a second), while records wait to be signed, an empty
/// line goes to the queue, so the writer looks whether a checkpoint is due by time even when
/// no record comes (and an idle log writes nothing).
fn start_ticker(
    shared: &Arc<Shared>,
    flags: &Arc<ChainFlags>,
    interval: Duration,
    dir: &Path,
) -> Result<(std::sync::mpsc::Sender<()>, JoinHandle<()>), LogError> {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let period = (interval / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let (shared, flags) = (Arc::clone(shared), Arc::clone(flags));
    let thread = std::thread::Builder::new()
        .name("askgate-decision-log-ticker".to_string())
        .spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(period)
            {
                if flags.unsigned.load(Ordering::Relaxed) && shared.queue.push(b"").is_err() {
                    break;
                }
            }
        })
        .map_err(|error| LogError::io(dir, &error))?;
    Ok((stop, thread))
}

impl Drop for DecisionLog {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.ticker.take() {
            drop(stop);
            let _ = thread.join();
            // The last write signs what is unsigned.
            self.flags.closing.store(true, Ordering::Relaxed);
            let _ = self.shared.queue.push(b"");
        }
        self.shared.queue.close();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn record(id: u32) -> Record {
        let line = format!(
            r#"{{"v":1,"kind":"outcome","id":"o{id:03}","time":"t","decision_id":"d","status":"ok","error_kind":null}}"#
        );
        Record::Outcome(serde_json::from_str(&line).unwrap())
    }

    /// The bytes [`record`] takes in the file as one of its first ten lines (chained).
    pub(super) fn stored_len() -> usize {
        record(0).to_line().unwrap().len() + crate::audit::chain::overhead(0) as usize
    }

    /// Four threads append 50 records each (ids `thread * 100 + index`), each waiting for its
    /// line before the next.
    pub(super) fn append_from_four_threads(log: &DecisionLog) {
        std::thread::scope(|scope| {
            for thread in 0..4u32 {
                scope.spawn(move || {
                    for index in 0..50u32 {
                        log.append_blocking(&record(thread * 100 + index)).unwrap();
                    }
                });
            }
        });
    }

    /// The record ids of the lines of `text`.
    pub(super) fn ids_of(text: &str) -> Vec<u32> {
        text.lines()
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                value["id"].as_str().unwrap()[1..].parse().unwrap()
            })
            .collect()
    }

    /// All 200 lines of [`append_from_four_threads`] are there, each thread's in the order it
    /// appended them.
    pub(super) fn assert_each_thread_in_order(ids: &[u32]) {
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

    /// The queue is bounded by bytes: a record larger than the bound is refused at once,
    /// nothing is written, and the bytes of answered appends come back.
    #[test]
    fn an_append_past_the_queue_bound_is_refused_and_answered_bytes_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let size = record(1).to_line().unwrap().len();
        let options = LogOptions {
            durability: Durability::None,
            ..LogOptions::default()
        };
        let tight =
            DecisionLog::open_bounded(&dir.path().join("a"), options.clone(), size - 1).unwrap();
        let refused = tight.append_blocking(&record(1)).unwrap_err();
        assert_eq!(refused, LogError::Full { limit: size - 1 });
        drop(tight);
        let written = std::fs::read_dir(dir.path().join("a"))
            .unwrap()
            .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
            .collect::<String>();
        assert!(written.is_empty(), "{written}");

        let log = DecisionLog::open_bounded(&dir.path().join("b"), options, 2 * size).unwrap();
        for id in 0..10 {
            log.append_blocking(&record(id)).unwrap();
        }
        assert_eq!(log.shared.queue.waiting(), 0);
    }

    #[test]
    fn a_directory_under_a_file_cannot_be_opened() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let error = DecisionLog::open(&file.join("logs"), LogOptions::default())
            .err()
            .unwrap();
        assert!(matches!(error, LogError::Io { .. }), "{error}");
    }

    /// Every line moves to a new file (limit 1 byte), so each append lists the directory:
    /// a directory replaced by a file makes every append fail until it is back.
    #[test]
    fn a_failing_log_reports_why_and_recovers_after_a_write() {
        let work = tempfile::tempdir().unwrap();
        let logs = work.path().join("logs");
        let options = LogOptions {
            max_file_bytes: 1,
            durability: Durability::None,
            first_retry: Duration::ZERO,
            ..LogOptions::default()
        };
        let log = DecisionLog::open(&logs, options).unwrap();
        assert_eq!(log.failure(), None, "nothing written yet");
        log.append_blocking(&record(0)).unwrap();
        assert_eq!(log.failure(), None);

        let aside = work.path().join("aside");
        std::fs::rename(&logs, &aside).unwrap();
        std::fs::write(&logs, "").unwrap();
        let first = log.append_blocking(&record(1)).unwrap_err();
        let failure = log.failure().unwrap();
        assert_eq!(failure.error, first);
        assert_eq!(failure.period, 1);
        log.append_blocking(&record(2)).unwrap_err();
        assert_eq!(log.failure().unwrap().period, 1, "still the same period");

        std::fs::remove_file(&logs).unwrap();
        std::fs::rename(&aside, &logs).unwrap();
        log.append_blocking(&record(3)).unwrap();
        assert_eq!(log.failure(), None, "one written batch is enough");

        std::fs::rename(&logs, &aside).unwrap();
        std::fs::write(&logs, "").unwrap();
        log.append_blocking(&record(4)).unwrap_err();
        assert_eq!(log.failure().unwrap().period, 2, "a new period");
    }
}
