//! audit::writer: the durable, rotating decision log. Appenders hand encoded lines to one
//! writer thread that writes a batch, syncs once and then acknowledges every line in it (group
//! commit, `commit`); the thread moves from file to file by size (`rotation`) and keeps the
//! log's failure state (`health`). It owns the files of one directory and must never drop or
//! reorder an acknowledged line.

mod commit;
mod health;
mod pacing;
mod rotation;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::record::Record;
use commit::{Reply, Request};
use health::FailureState;
use pacing::Pacing;
use rotation::Sink;

pub use health::LogFailure;
pub use pacing::{FIRST_RETRY, MAX_RETRY};

/// Default size after which the log moves to the next file.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The most bytes of encoded records waiting for the writer; an append past it fails at once
/// (the caller fails closed) rather than queueing without bound.
pub const MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `sync_data` after every batch: an acknowledged line survives a crash.
    Fsync,
    /// Write only (no sync), for measuring what durability costs.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOptions {
    pub max_file_bytes: u64,
    pub durability: Durability,
    /// After a failed write, the first retry waits this long, doubling up to `max_retry`;
    /// batches in between fail at once with the same cause.
    pub first_retry: Duration,
    pub max_retry: Duration,
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            durability: Durability::Fsync,
            first_retry: FIRST_RETRY,
            max_retry: MAX_RETRY,
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
}

impl LogError {
    fn io(path: &Path, error: &std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            message: error.to_string(),
        }
    }
}

/// The decision log of one directory. Cheap to share (`&self` appends from any thread).
pub struct DecisionLog {
    sender: Mutex<Option<mpsc::Sender<Request>>>,
    worker: Option<JoinHandle<()>>,
    failures: Arc<FailureState>,
    /// Bytes of the lines submitted and not yet answered by the writer (at most `limit`).
    queued: Arc<AtomicUsize>,
    limit: usize,
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
        let mut sink = Sink::new(dir.to_path_buf(), options);
        sink.open_current()?;
        let failures = Arc::new(FailureState::default());
        let recorder = Arc::clone(&failures);
        let pacing = Pacing::new(options.first_retry, options.max_retry);
        let (sender, receiver) = mpsc::channel::<Request>();
        let worker = std::thread::Builder::new()
            .name("askgate-decision-log".to_string())
            .spawn(move || commit::run(&mut sink, &receiver, &recorder, pacing))
            .map_err(|error| LogError::io(dir, &error))?;
        Ok(DecisionLog {
            sender: Mutex::new(Some(sender)),
            worker: Some(worker),
            failures,
            queued: Arc::default(),
            limit,
        })
    }

    /// Appends `record`; returns once it is durable (per the options) or failed.
    pub async fn append(&self, record: &Record) -> Result<(), LogError> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.submit(
            record,
            Box::new(move |result| {
                let _ = sender.send(result);
            }),
        )?;
        receiver.await.map_err(|_| LogError::Closed)?
    }

    /// [`DecisionLog::append`] for threads that may block (tests, the command line).
    pub fn append_blocking(&self, record: &Record) -> Result<(), LogError> {
        let (sender, receiver) = mpsc::sync_channel(1);
        self.submit(
            record,
            Box::new(move |result| {
                let _ = sender.send(result);
            }),
        )?;
        receiver.recv().map_err(|_| LogError::Closed)?
    }

    /// Why the last batch the writer tried could not be written; `None` while the log is
    /// healthy (nothing tried yet, or the last batch was written).
    pub fn failure(&self) -> Option<LogFailure> {
        self.failures.current()
    }

    fn submit(&self, record: &Record, reply: Reply) -> Result<(), LogError> {
        // Encoding happens on the caller's thread so the writer only writes.
        let line = record
            .to_line()
            .map_err(|error| LogError::Encode(error.to_string()))?;
        let size = line.len();
        let before = self.queued.fetch_add(size, Ordering::AcqRel);
        if before.saturating_add(size) > self.limit {
            self.queued.fetch_sub(size, Ordering::AcqRel);
            return Err(LogError::Full { limit: self.limit });
        }
        let queued = Arc::clone(&self.queued);
        let reply: Reply = Box::new(move |result| {
            queued.fetch_sub(size, Ordering::AcqRel);
            reply(result);
        });
        let sent = match self.sender.lock() {
            Ok(guard) => match guard.as_ref() {
                Some(sender) => sender.send(Request { line, reply }).map_err(|_| ()),
                None => Err(()),
            },
            Err(_) => Err(()),
        };
        sent.map_err(|()| {
            // Not queued: its reply (which gives the bytes back) never runs.
            self.queued.fetch_sub(size, Ordering::AcqRel);
            LogError::Closed
        })
    }
}

impl Drop for DecisionLog {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.sender.lock() {
            guard.take();
        }
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
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

    use super::*;

    pub(super) fn record(id: u32) -> Record {
        let line = format!(
            r#"{{"v":1,"kind":"outcome","id":"o{id:03}","time":"t","decision_id":"d","status":"ok","error_kind":null}}"#
        );
        Record::Outcome(serde_json::from_str(&line).unwrap())
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
        let tight = DecisionLog::open_bounded(&dir.path().join("a"), options, size - 1).unwrap();
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
        assert_eq!(log.queued.load(Ordering::Acquire), 0);
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
