//! audit::writer: the durable, rotating decision log. Appenders hand encoded lines to one
//! writer thread that writes a batch, syncs once and then acknowledges every line in it (group
//! commit). It owns the files of one directory and must never drop or reorder an acknowledged line.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::JoinHandle;

use super::files::{log_file_name, sequence_files};
use super::record::Record;

/// Default size after which the log moves to the next file.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Most lines written under one sync (bounds the latency of the first appender of a batch).
const MAX_BATCH_LINES: usize = 4096;

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
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            durability: Durability::Fsync,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    #[error("cannot encode the record: {0}")]
    Encode(String),
    #[error("cannot write the decision log `{path}`: {message}")]
    Io { path: String, message: String },
    #[error("the decision log is closed")]
    Closed,
}

impl LogError {
    fn io(path: &Path, error: &std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            message: error.to_string(),
        }
    }
}

type Reply = Box<dyn FnOnce(Result<(), LogError>) + Send>;

struct Request {
    line: Vec<u8>,
    reply: Reply,
}

/// The decision log of one directory. Cheap to share (`&self` appends from any thread).
pub struct DecisionLog {
    sender: Mutex<Option<mpsc::Sender<Request>>>,
    worker: Option<JoinHandle<()>>,
}

impl DecisionLog {
    /// Creates `dir` if needed and opens the current file (a new one when the last file is
    /// full or ends in a torn line, so new lines never join a torn one).
    pub fn open(dir: &Path, options: LogOptions) -> Result<DecisionLog, LogError> {
        std::fs::create_dir_all(dir).map_err(|error| LogError::io(dir, &error))?;
        let mut sink = Sink::new(dir.to_path_buf(), options);
        sink.open_current()?;
        let (sender, receiver) = mpsc::channel::<Request>();
        let worker = std::thread::Builder::new()
            .name("askgate-decision-log".to_string())
            .spawn(move || sink.run(&receiver))
            .map_err(|error| LogError::io(dir, &error))?;
        Ok(DecisionLog {
            sender: Mutex::new(Some(sender)),
            worker: Some(worker),
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

    fn submit(&self, record: &Record, reply: Reply) -> Result<(), LogError> {
        // Encoding happens on the caller's thread so the writer only writes.
        let line = record
            .to_line()
            .map_err(|error| LogError::Encode(error.to_string()))?;
        let guard = self.sender.lock().map_err(|_| LogError::Closed)?;
        let sender = guard.as_ref().ok_or(LogError::Closed)?;
        sender
            .send(Request { line, reply })
            .map_err(|_| LogError::Closed)
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

/// The writer thread's state: the open file, its sequence number and size.
struct Sink {
    dir: PathBuf,
    options: LogOptions,
    file: Option<File>,
    path: PathBuf,
    sequence: u64,
    size: u64,
}

impl Sink {
    fn new(dir: PathBuf, options: LogOptions) -> Self {
        Self {
            path: dir.join(log_file_name(1)),
            dir,
            options,
            file: None,
            sequence: 0,
            size: 0,
        }
    }

    fn run(&mut self, receiver: &mpsc::Receiver<Request>) {
        while let Ok(first) = receiver.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH_LINES {
                match receiver.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            let result = self.write_batch(&batch);
            if result.is_err() {
                // The next append starts a fresh file rather than trust this one's tail.
                self.file = None;
            }
            for request in batch {
                (request.reply)(result.clone());
            }
        }
    }

    fn write_batch(&mut self, batch: &[Request]) -> Result<(), LogError> {
        let mut pending: Vec<u8> = Vec::new();
        for request in batch {
            let line_bytes = u64::try_from(request.line.len()).unwrap_or(u64::MAX);
            let pending_bytes = u64::try_from(pending.len()).unwrap_or(u64::MAX);
            let used = self.size.saturating_add(pending_bytes);
            if self.file.is_none() || (used > 0 && used + line_bytes > self.options.max_file_bytes)
            {
                self.flush(&pending)?;
                pending.clear();
                self.rotate()?;
            }
            pending.extend_from_slice(&request.line);
        }
        self.flush(&pending)
    }

    /// Writes and (per the options) syncs `bytes` to the current file.
    fn flush(&mut self, bytes: &[u8]) -> Result<(), LogError> {
        if bytes.is_empty() {
            return Ok(());
        }
        let path = &self.path;
        let file = self.file.as_mut().ok_or(LogError::Closed)?;
        file.write_all(bytes)
            .map_err(|error| LogError::io(path, &error))?;
        if self.options.durability == Durability::Fsync {
            file.sync_data()
                .map_err(|error| LogError::io(path, &error))?;
        }
        self.size += u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        Ok(())
    }

    /// Moves to the next file: the first open continues the last file when it has room and
    /// ends cleanly; any later move starts a new one.
    fn rotate(&mut self) -> Result<(), LogError> {
        if self.file.is_none() && self.sequence == 0 {
            return self.open_current();
        }
        let last = self.last_sequence()?;
        self.open_sequence(last.max(self.sequence) + 1)
    }

    fn open_current(&mut self) -> Result<(), LogError> {
        let last = self.last_sequence()?;
        if last == 0 {
            return self.open_sequence(1);
        }
        let path = self.dir.join(log_file_name(last));
        let size = std::fs::metadata(&path)
            .map_err(|error| LogError::io(&path, &error))?
            .len();
        if size < self.options.max_file_bytes && ends_cleanly(&path)? {
            self.open_sequence(last)
        } else {
            self.open_sequence(last + 1)
        }
    }

    fn last_sequence(&self) -> Result<u64, LogError> {
        let files = sequence_files(&self.dir).map_err(|error| LogError::io(&self.dir, &error))?;
        Ok(files.last().map_or(0, |(sequence, _)| *sequence))
    }

    fn open_sequence(&mut self, sequence: u64) -> Result<(), LogError> {
        let path = self.dir.join(log_file_name(sequence));
        self.file = None;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|error| LogError::io(&path, &error))?;
        let size = file
            .metadata()
            .map_err(|error| LogError::io(&path, &error))?
            .len();
        if self.options.durability == Durability::Fsync {
            // Make the new file's directory entry durable too.
            if let Ok(directory) = File::open(&self.dir) {
                let _ = directory.sync_all();
            }
        }
        self.file = Some(file);
        self.path = path;
        self.sequence = sequence;
        self.size = size;
        Ok(())
    }
}

/// True when the file is empty or its last byte is a newline.
fn ends_cleanly(path: &Path) -> Result<bool, LogError> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path).map_err(|error| LogError::io(path, &error))?;
    let length = file
        .metadata()
        .map_err(|error| LogError::io(path, &error))?
        .len();
    if length == 0 {
        return Ok(true);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::End(-1))
        .and_then(|_| file.read_exact(&mut last))
        .map_err(|error| LogError::io(path, &error))?;
    Ok(last == [b'\n'])
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

    fn record(id: u32) -> Record {
        let line = format!(
            r#"{{"v":1,"kind":"outcome","id":"o{id:03}","time":"t","decision_id":"d","status":"ok","error_kind":null}}"#
        );
        Record::Outcome(serde_json::from_str(&line).unwrap())
    }

    fn line_bytes() -> u64 {
        record(0).to_line().unwrap().len() as u64
    }

    fn file_lines(dir: &Path) -> Vec<usize> {
        sequence_files(dir)
            .unwrap()
            .iter()
            .map(|(_, path)| std::fs::read_to_string(path).unwrap().lines().count())
            .collect()
    }

    fn write(dir: &Path, max_file_bytes: u64, count: u32, durability: Durability) {
        let options = LogOptions {
            max_file_bytes,
            durability,
        };
        let log = DecisionLog::open(dir, options).unwrap();
        for id in 0..count {
            log.append_blocking(&record(id)).unwrap();
        }
    }

    #[test]
    fn a_file_fills_exactly_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 2 * line_bytes(), 5, Durability::Fsync);
        assert_eq!(file_lines(dir.path()), vec![2, 2, 1]);
    }

    #[test]
    fn one_byte_under_the_limit_moves_each_line_on() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 2 * line_bytes() - 1, 3, Durability::None);
        assert_eq!(file_lines(dir.path()), vec![1, 1, 1]);
    }

    #[test]
    fn a_line_longer_than_the_limit_still_gets_written() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 1, 2, Durability::Fsync);
        assert_eq!(file_lines(dir.path()), vec![1, 1]);
    }

    #[test]
    fn reopening_continues_a_clean_file_with_room() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 10 * line_bytes(), 2, Durability::Fsync);
        write(dir.path(), 10 * line_bytes(), 2, Durability::Fsync);
        assert_eq!(file_lines(dir.path()), vec![4]);
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
}
