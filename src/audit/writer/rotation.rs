//! audit::writer::rotation: the writer's current file — which one is open, how much of
//! it holds acknowledged lines, whether the path still names it, and the move to the next file
//! by size (names come from `audit::files`). It writes and syncs the bytes it is given, keeps
//! them once `commit`ted and otherwise cuts them back; batching, pacing and acknowledging them
//! is `commit`'s. Every line goes through the chain (`audit::chain::head`) on its way to the
//! file, whose links follow the bytes: kept on commit, taken back with them. With fsync the open file ends in zero-filled room (`room`), cut off when
//! the writer leaves it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::super::chain::head::Chainer;
use super::super::chain::tail::{self, Start};
use super::super::files::{log_file_name, sequence_files};
use super::room::{self, Room};
use super::{ChainFlags, Durability, LogError, LogOptions};

/// The writer's state: the open file, its sequence number and size.
pub(super) struct Sink {
    dir: PathBuf,
    options: LogOptions,
    file: Option<File>,
    path: PathBuf,
    sequence: u64,
    /// Bytes of the file up to the end of its last committed line.
    size: u64,
    /// Bytes written after `size` and not yet committed (taken back if they fail).
    pending: u64,
    /// The zero-filled room past what is written (with fsync; see `room`).
    room: Room,
    /// `(dev, ino)` of the open file: the path must still name it for a write to count.
    identity: (u64, u64),
    /// Descriptions of the open file of their own, one per crew thread (empty without fsync, or
    /// when the file could not be opened again): syncs in flight together each use their own,
    /// because the kernel reports a failed write-back once per description, and two syncs on
    /// one description could let one of them miss it.
    sync_handles: Vec<Arc<File>>,
    /// The chain's links of what is written (see `audit::chain::head`).
    chain: Chainer,
    /// The log is closing; records wait to be signed (see `ChainFlags`).
    flags: Arc<ChainFlags>,
    /// Time spent chaining and signing since [`Sink::take_chained`] last took it.
    chained: std::time::Duration,
}

impl Sink {
    pub(super) fn new(dir: PathBuf, options: LogOptions, flags: Arc<ChainFlags>) -> Self {
        let room = Room::new(match options.durability {
            Durability::Fsync => options.room_bytes,
            Durability::None => 0,
        });
        Self {
            path: dir.join(log_file_name(options.replica.as_ref(), 1)),
            dir,
            file: None,
            sequence: 0,
            size: 0,
            pending: 0,
            room,
            identity: (0, 0),
            sync_handles: Vec::new(),
            chain: Chainer::new(Start::default(), options.checkpoints.clone()),
            flags,
            chained: std::time::Duration::ZERO,
            options,
        }
    }

    /// The bytes a line of `raw_bytes` takes in the file (see `Chainer::line_len`).
    pub(super) fn line_len(&self, raw_bytes: u64) -> u64 {
        self.chain.line_len(raw_bytes)
    }

    /// The bytes `lines` lines of `raw_bytes` take in the file (see `Chainer::batch_len`).
    pub(super) fn batch_len(&self, raw_bytes: u64, lines: u64) -> u64 {
        self.chain.batch_len(raw_bytes, lines)
    }

    /// True when `bytes` more fit in the open file after what is written (committed or not).
    pub(super) fn fits(&self, bytes: u64) -> bool {
        let used = self.size.saturating_add(self.pending);
        self.file.is_some() && used.saturating_add(bytes) <= self.options.max_file_bytes
    }

    /// The open file's own description for sync slot `index`, if it has one.
    pub(super) fn sync_handle(&self, index: usize) -> Option<Arc<File>> {
        self.sync_handles.get(index).map(Arc::clone)
    }

    /// The first `bytes` written since the last commit are kept: they are synced in a file the
    /// path names (the rest are still in flight).
    pub(super) fn commit_bytes(&mut self, bytes: u64) {
        let bytes = bytes.min(self.pending);
        self.size = self.size.saturating_add(bytes);
        self.pending -= bytes;
        self.chain.commit_upto(self.size);
    }

    /// True when a line of `line_bytes`, after `planned_bytes` to be written before it, must go
    /// to the next file: no file is open, or the current one has content and the line would
    /// pass the limit (a line longer than the limit still gets a file of its own).
    pub(super) fn must_rotate(&self, planned_bytes: u64, line_bytes: u64) -> bool {
        let used = self.size.saturating_add(planned_bytes);
        self.file.is_none() || (used > 0 && used + line_bytes > self.options.max_file_bytes)
    }

    /// Forgets the open file (its room cut off), so the next move starts a new one.
    pub(super) fn abandon_file(&mut self) {
        self.leave_file();
        self.file = None;
        self.sync_handles.clear();
        self.pending = 0;
        self.chain.take_back();
    }

    /// Cuts the open file's room off (see `Room::cut`): a file the writer leaves ends at its
    /// last line.
    fn leave_file(&mut self) {
        if let (Some(file), 0) = (self.file.as_ref(), self.pending) {
            self.room.cut(file, self.size);
        }
    }

    /// Whether the log path still names the open file (true when none is open). A file deleted,
    /// renamed or replaced under the writer (or its directory) would swallow every later line
    /// into an inode no reader finds, so such a file is never written to again; with room, nor
    /// is one whose length another program changed.
    pub(super) fn still_current(&self) -> Result<(), LogError> {
        if self.file.is_none() {
            return Ok(());
        }
        let gone = |message: String| LogError::Replaced {
            path: self.path.display().to_string(),
            message,
        };
        let expected = self
            .room
            .length_after(self.size.saturating_add(self.pending));
        match std::fs::metadata(&self.path) {
            Ok(metadata) if (metadata.dev(), metadata.ino()) != self.identity => {
                Err(gone("another file took its place".to_string()))
            }
            // With room the writer writes at an offset: a file another program truncated or
            // wrote to (logrotate's copytruncate) would get a hole of zeros, so it is left.
            Ok(metadata) if self.room.is_on() && metadata.len() != expected => Err(gone(format!(
                "its length changed under the writer ({} bytes, not {expected})",
                metadata.len()
            ))),
            Ok(_) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Err(gone("it was deleted".to_string()))
            }
            Err(error) => Err(gone(error.to_string())),
        }
    }

    /// Whether the log path still names the open file, whatever its length.
    fn same_file(&self) -> bool {
        self.file.is_some()
            && std::fs::metadata(&self.path)
                .is_ok_and(|metadata| (metadata.dev(), metadata.ino()) == self.identity)
    }

    /// After a failed write, or one the path no longer names: cuts the file back to its last
    /// committed line (only when nothing but these bytes came after it, so no one else's line is
    /// cut), so a full disk costs no new file per attempt and a file renamed while it was
    /// written keeps exactly the lines acknowledged in it. A file the path no longer names, or
    /// that cannot be cut back, is abandoned: the next move starts a new one, never after a
    /// torn line.
    pub(super) fn take_back(&mut self) {
        // The same file, whatever its length: a failed write (a full disk) leaves it anywhere
        // between its last committed line and what was written, which the cut below checks.
        // Asking `still_current` here would, with room, take a partial write for another
        // program's and leave the file on every failed batch (P9).
        let current = self.same_file();
        let written = self
            .room
            .length_after(self.size.saturating_add(self.pending));
        let cut = self.file.as_ref().is_some_and(|file| {
            let length = file.metadata().map(|metadata| metadata.len());
            matches!(length, Ok(length) if length >= self.size && length <= written)
                && file.set_len(self.size).is_ok()
        });
        self.pending = 0;
        self.chain.take_back();
        // Cut or not, no room is counted on: the next write makes it again.
        self.room.reset(self.size);
        if !(current && cut) {
            self.abandon_file();
        }
    }

    /// Writes the lines of `raw` (complete encoded records), chained, to the current file
    /// after what is written (not yet committed), then lets the room follow them; returns how
    /// many bytes went to the file.
    pub(super) fn write(&mut self, raw: &[u8]) -> Result<u64, LogError> {
        let file = self.file.as_ref().ok_or(LogError::Closed)?;
        let closing = self.flags.closing.load(Ordering::Relaxed);
        let started = Instant::now();
        let bytes = self.chain.chain(raw, started, closing);
        self.chained += started.elapsed();
        let at = self.size.saturating_add(self.pending);
        let end = at.saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
        // Counted before the write: a partial write is cut back too.
        self.pending = end - self.size;
        let written = if self.room.is_on() {
            file.write_all_at(bytes, at)
        } else {
            // Appended, as without room the file was always written.
            (&mut &*file).write_all(bytes)
        };
        written.map_err(|error| LogError::io(&self.path, &error))?;
        self.chain.written(end);
        let unsigned = self.chain.has_unsigned();
        self.flags.unsigned.store(unsigned, Ordering::Relaxed);
        self.room
            .after_write(file, &self.path, end, self.options.max_file_bytes);
        Ok(end - at)
    }

    /// The time the chain took (its fields, hashes and checkpoint signatures) in the writes
    /// since the last call: the cost of the chain, in the writer's `stats`.
    pub(super) fn take_chained(&mut self) -> std::time::Duration {
        std::mem::take(&mut self.chained)
    }

    /// A failed sync of the open file, as the log reports it.
    pub(super) fn sync_failed(&self, error: &std::io::Error) -> LogError {
        LogError::io(&self.path, error)
    }

    /// Syncs what was written (per the options).
    pub(super) fn sync(&mut self) -> Result<(), LogError> {
        let file = self.file.as_ref().ok_or(LogError::Closed)?;
        if self.options.durability == Durability::Fsync {
            file.sync_data()
                .map_err(|error| LogError::io(&self.path, &error))?;
        }
        Ok(())
    }

    /// The bytes written since the last commit are kept: they are synced in a file the path
    /// names.
    pub(super) fn commit(&mut self) {
        self.size = self.size.saturating_add(self.pending);
        self.pending = 0;
        self.chain.commit_all();
    }

    /// Moves to the next file: the first open continues the last file when it has room and
    /// ends cleanly; any later move starts a new one.
    pub(super) fn rotate(&mut self) -> Result<(), LogError> {
        if self.file.is_none() && self.sequence == 0 {
            return self.open_current();
        }
        self.leave_file();
        let last = self.last_sequence()?;
        self.open_sequence(last.max(self.sequence) + 1)
    }

    /// Opens the file the log continues in, and finds where its chain continues (with the
    /// note to write first, if any: see `audit::chain::tail`).
    pub(super) fn open_current(&mut self) -> Result<(), LogError> {
        let start = tail::find_start(&self.dir, self.options.replica.as_ref());
        if let Some(note) = &start.note {
            tracing::warn!(event = ?note.event, file = %note.file, "decision log: the chain continues past an unclean tail; a chain note records it");
        }
        self.chain = Chainer::new(start, self.options.checkpoints.clone());
        let last = self.last_sequence()?;
        if last == 0 {
            return self.open_sequence(1);
        }
        let path = self
            .dir
            .join(log_file_name(self.options.replica.as_ref(), last));
        let size = room::cut_left_room(&path)?;
        if size < self.options.max_file_bytes && ends_cleanly(&path)? {
            self.open_sequence(last)
        } else {
            self.open_sequence(last + 1)
        }
    }

    fn last_sequence(&self) -> Result<u64, LogError> {
        let files = sequence_files(&self.dir, self.options.replica.as_ref())
            .map_err(|error| LogError::io(&self.dir, &error))?;
        Ok(files.last().map_or(0, |(sequence, _)| *sequence))
    }

    fn open_sequence(&mut self, sequence: u64) -> Result<(), LogError> {
        let path = self
            .dir
            .join(log_file_name(self.options.replica.as_ref(), sequence));
        self.file = None;
        self.sync_handles.clear();
        // With room, written at the end of its lines (`write`), not in append mode: the room
        // after them is overwritten, not grown past.
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(!self.room.is_on())
            .truncate(false)
            .open(&path)
            .map_err(|error| LogError::io(&path, &error))?;
        let metadata = file
            .metadata()
            .map_err(|error| LogError::io(&path, &error))?;
        if self.options.durability == Durability::Fsync {
            // Make the new file's directory entry durable too.
            if let Ok(directory) = File::open(&self.dir) {
                let _ = directory.sync_all();
            }
        }
        self.sync_handles = self.sync_handles_of(&file);
        self.file = Some(file);
        self.path = path;
        self.sequence = sequence;
        self.size = metadata.len();
        self.pending = 0;
        self.room.opened(self.size);
        self.identity = (metadata.dev(), metadata.ino());
        Ok(())
    }
}

impl Drop for Sink {
    /// The log closes: its last file ends at its last line.
    fn drop(&mut self) {
        self.leave_file();
    }
}

impl Sink {
    /// Opens `file` again through `/proc/self/fd` (the same file, however its name changes),
    /// once per crew thread; none at all without fsync or when any open fails (every batch
    /// then goes one at a time, synced on the main description).
    fn sync_handles_of(&self, file: &File) -> Vec<Arc<File>> {
        use std::os::fd::AsRawFd;
        if self.options.durability != Durability::Fsync {
            return Vec::new();
        }
        let own = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        let handles: Result<Vec<_>, _> =
            (0..self.options.sync_threads.clamp(1, super::MAX_SYNC_THREADS))
                .map(|_| File::open(&own).map(Arc::new))
                .collect();
        handles.unwrap_or_default()
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
    use super::super::tests::{record, stored_len};
    use super::super::DecisionLog;
    use super::*;
    use crate::audit::files::ReplicaId;

    fn line_bytes() -> u64 {
        stored_len() as u64
    }

    fn file_lines(dir: &Path) -> Vec<usize> {
        sequence_files(dir, None)
            .unwrap()
            .iter()
            .map(|(_, path)| std::fs::read_to_string(path).unwrap().lines().count())
            .collect()
    }

    fn write(dir: &Path, max_file_bytes: u64, count: u32, durability: Durability) {
        let options = LogOptions {
            max_file_bytes,
            durability,
            ..LogOptions::default()
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

    fn replica_lines(dir: &Path, replica: &ReplicaId) -> Vec<usize> {
        sequence_files(dir, Some(replica))
            .unwrap()
            .iter()
            .map(|(_, path)| std::fs::read_to_string(path).unwrap().lines().count())
            .collect()
    }

    #[test]
    fn two_replicas_in_one_directory_never_touch_each_others_files() {
        let dir = tempfile::tempdir().unwrap();
        let open = |name: &str| {
            let options = LogOptions {
                max_file_bytes: 2 * line_bytes(),
                replica: Some(ReplicaId::parse(name).unwrap()),
                ..LogOptions::default()
            };
            DecisionLog::open(dir.path(), options).unwrap()
        };
        // An old single-process log already lies in the directory.
        write(dir.path(), 10 * line_bytes(), 1, Durability::Fsync);
        let (a, b) = (open("a"), open("b"));
        for id in 0..5 {
            a.append_blocking(&record(id)).unwrap();
            if id < 3 {
                b.append_blocking(&record(id)).unwrap();
            }
        }
        drop((a, b));
        let a = ReplicaId::parse("a").unwrap();
        let b = ReplicaId::parse("b").unwrap();
        assert_eq!(replica_lines(dir.path(), &a), vec![2, 2, 1]);
        assert_eq!(replica_lines(dir.path(), &b), vec![2, 1]);
        assert_eq!(file_lines(dir.path()), vec![1]);
    }
}
