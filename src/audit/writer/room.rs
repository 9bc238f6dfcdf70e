//! audit::writer::room: the zero-filled room kept past the open log file's last line (with
//! fsync). A write into blocks the file already has changes neither its size nor its block map,
//! so `fdatasync` flushes the data alone instead of committing the filesystem's journal too
//! (measured on this disk with 5-line batches: 0.18–0.22 ms a sync without room, 0.11–0.13 ms
//! with 1 MiB). Only the batch that runs out of room grows the file, by the next room at once,
//! written with it and synced by its sync. The room is never a line (`audit::reader` stops at
//! its first zero byte); it is cut off when the writer leaves the file and, after a crash, when
//! the log opens again. Which file is open and what is committed in it is `rotation`'s.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::LogError;

/// The room of the open file.
#[derive(Debug, Default)]
pub(super) struct Room {
    /// Room made at a time (0: none).
    bytes: u64,
    /// The file's length as the writer left it: past the last byte written when the file ends
    /// in room, else that byte.
    end: u64,
    /// Making room failed in this file (a full disk, say): it grows line by line from then on.
    failed: bool,
}

impl Room {
    pub(super) fn new(bytes: u64) -> Self {
        Self {
            bytes,
            ..Self::default()
        }
    }

    /// Whether room is made at all (with fsync and `room_bytes` above 0).
    pub(super) fn is_on(&self) -> bool {
        self.bytes > 0
    }

    /// A file was opened (or cut back) at `length`, with no room.
    pub(super) fn reset(&mut self, length: u64) {
        self.end = length;
    }

    /// A file was opened: room may be made in it again.
    pub(super) fn opened(&mut self, length: u64) {
        self.end = length;
        self.failed = false;
    }

    /// The length the file may have after `written` bytes: at least `written`, and the room
    /// past them (so a cut back may take it off).
    pub(super) fn length_after(&self, written: u64) -> u64 {
        written.max(self.end)
    }

    /// `file` now holds bytes up to `written`: when they reach the end of the room, zero-fills
    /// the next room after them (at most up to `limit`). A failure is no failure of the write:
    /// the zeros are cut back and the file grows line by line.
    pub(super) fn after_write(&mut self, file: &File, path: &Path, written: u64, limit: u64) {
        if written < self.end {
            return;
        }
        self.end = written;
        let wanted = self.bytes.min(limit.saturating_sub(written));
        if self.failed || wanted == 0 {
            return;
        }
        let zeros = vec![0u8; usize::try_from(wanted).unwrap_or(0)];
        match file.write_all_at(&zeros, written) {
            Ok(()) => self.end = written + wanted,
            Err(error) => {
                tracing::warn!(%error, path = %path.display(), "no room made in the decision log file; it grows line by line");
                self.failed = true;
                // Should the cut fail too, the file's length is not the one `rotation` expects,
                // so the next batch leaves the file for a new one (`Sink::still_current`).
                if let Err(error) = file.set_len(written) {
                    tracing::warn!(%error, path = %path.display(), "cannot cut back the zeros of a failed room");
                }
            }
        }
    }

    /// Cuts the room off `file`, which ends at `size` (nothing in flight), when the file is as
    /// the writer left it (its length is the room's end). Best effort: a room left behind is no
    /// line to any reader, and is cut when the log opens again.
    pub(super) fn cut(&mut self, file: &File, size: u64) {
        if self.end <= size {
            return;
        }
        let length = file.metadata().map(|metadata| metadata.len());
        if matches!(length, Ok(length) if length == self.end) && file.set_len(size).is_ok() {
            self.end = size;
        }
    }
}

/// Cuts off the room a crash left at the end of `path`, from its first zero byte (no line
/// holds one, and a write torn by the crash may have reached the disk only in part), and
/// returns the file's length without it.
pub(super) fn cut_left_room(path: &Path) -> Result<u64, LogError> {
    let io = |error: std::io::Error| LogError::io(path, &error);
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        // Not a file the writer made (a device, say): nothing of it is room.
        return Ok(metadata.len());
    }
    let file = File::open(path).map_err(io)?;
    // Room always runs to the end of the file: a file whose last byte is not zero has none.
    let Some(last_byte) = metadata.len().checked_sub(1) else {
        return Ok(0);
    };
    let mut last = [0u8];
    file.read_exact_at(&mut last, last_byte).map_err(io)?;
    if last != [0] {
        return Ok(metadata.len());
    }
    let Some(end) = first_zero(&file, metadata.len()).map_err(io)? else {
        return Ok(metadata.len());
    };
    let file = OpenOptions::new().write(true).open(path).map_err(io)?;
    file.set_len(end)
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    tracing::info!(path = %path.display(), cut = metadata.len() - end, "cut the zero-filled room a crash left in the decision log file");
    Ok(end)
}

/// The offset of the first zero byte of `file`'s `length` bytes, read a chunk at a time.
fn first_zero(file: &File, length: u64) -> std::io::Result<Option<u64>> {
    let mut chunk = vec![0u8; 1024 * 1024];
    let mut at = 0;
    while at < length {
        let read = file.read_at(&mut chunk, at)?;
        let Some(part) = chunk.get(..read).filter(|part| !part.is_empty()) else {
            break;
        };
        if let Some(zero) = part.iter().position(|byte| *byte == 0) {
            return Ok(Some(at + u64::try_from(zero).unwrap_or(0)));
        }
        at += u64::try_from(read).unwrap_or(u64::MAX);
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ids_of, record, stored_len};
    use super::super::{DecisionLog, Durability, LogOptions};
    use crate::audit::files::sequence_files;
    use crate::audit::{read_log, LogLine};

    const ROOM: u64 = 64 * 1024;

    fn options(room_bytes: u64) -> LogOptions {
        LogOptions {
            room_bytes,
            ..LogOptions::default()
        }
    }

    fn files(dir: &std::path::Path) -> Vec<Vec<u8>> {
        sequence_files(dir, None)
            .unwrap()
            .iter()
            .map(|(_, path)| std::fs::read(path).unwrap())
            .collect()
    }

    /// The records the log's own reader finds in `dir`, and the problems it reports.
    fn read_back(dir: &std::path::Path) -> (usize, usize) {
        let lines: Vec<LogLine> = read_log(&[dir.to_path_buf()]).unwrap().collect();
        let records = lines
            .iter()
            .filter(|line| matches!(line, LogLine::Record(_)))
            .count();
        (records, lines.len() - records)
    }

    /// While the log is open its file ends in zero-filled room (made by the first batch, one
    /// room past it, and filled by the next ones), which the reader does not read as lines;
    /// closed, the file ends at its last line.
    #[test]
    fn the_open_file_ends_in_room_and_the_closed_one_at_its_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = DecisionLog::open(dir.path(), options(ROOM)).unwrap();
        for id in 0..3 {
            log.append_blocking(&record(id)).unwrap();
        }
        let line = stored_len();
        let lines = 3 * line;
        let open = &files(dir.path())[0];
        assert_eq!(open.len() as u64, line as u64 + ROOM);
        assert!(open[..lines].ends_with(b"\n") && !open[..lines].contains(&0));
        assert!(open[lines..].iter().all(|byte| *byte == 0));
        assert_eq!(read_back(dir.path()), (3, 0));
        drop(log);
        let closed = &files(dir.path())[0];
        assert_eq!(closed.len(), lines);
        assert_eq!(ids_of(std::str::from_utf8(closed).unwrap()), vec![0, 1, 2]);
    }

    /// Without fsync, or with no room asked for, the file grows line by line.
    #[test]
    fn no_room_without_fsync_or_when_none_is_asked_for() {
        for options in [
            options(0),
            LogOptions {
                durability: Durability::None,
                ..options(ROOM)
            },
        ] {
            let dir = tempfile::tempdir().unwrap();
            let log = DecisionLog::open(dir.path(), options).unwrap();
            log.append_blocking(&record(0)).unwrap();
            assert_eq!(files(dir.path())[0].len(), stored_len());
        }
    }

    /// Room is never made past the file limit: an open file is never larger than it.
    #[test]
    fn the_room_stops_at_the_file_limit() {
        let dir = tempfile::tempdir().unwrap();
        let line = stored_len() as u64;
        let log = DecisionLog::open(
            dir.path(),
            LogOptions {
                max_file_bytes: 3 * line,
                ..options(ROOM)
            },
        )
        .unwrap();
        log.append_blocking(&record(0)).unwrap();
        assert_eq!(files(dir.path())[0].len() as u64, 3 * line);
        for id in 1..4 {
            log.append_blocking(&record(id)).unwrap();
        }
        let sizes: Vec<u64> = files(dir.path()).iter().map(|f| f.len() as u64).collect();
        assert_eq!(
            sizes,
            vec![3 * line, 3 * line],
            "the second file has room too"
        );
        drop(log);
        assert_eq!(read_back(dir.path()), (4, 0));
    }

    /// A crash leaves the room (and maybe part of a batch that never synced) in the last file:
    /// the log opening again cuts it at its first zero byte and continues the file when its
    /// lines end cleanly, or starts a new one after a torn line, as without room.
    #[test]
    fn a_room_left_by_a_crash_is_cut_when_the_log_opens_again() {
        let line = record(0).to_line().unwrap();
        for (tail, continued) in [(&b""[..], true), (&b"{\"v\":1,\"ki"[..], false)] {
            let dir = tempfile::tempdir().unwrap();
            let left = dir.path().join("decisions-000001.jsonl");
            let mut bytes = [&line[..], &line[..], tail].concat();
            bytes.extend(std::iter::repeat_n(0u8, 4096));
            // A page of the unsynced batch reached the disk after a page that did not.
            bytes.extend_from_slice(&line);
            bytes.extend(std::iter::repeat_n(0u8, 4096));
            std::fs::write(&left, &bytes).unwrap();

            let log = DecisionLog::open(dir.path(), options(ROOM)).unwrap();
            log.append_blocking(&record(7)).unwrap();
            drop(log);
            let files = files(dir.path());
            assert!(files.iter().all(|file| !file.contains(&0)));
            if continued {
                assert_eq!(files.len(), 1);
                // Two lines from before the chain, and one chained to them.
                assert_eq!(files[0].len(), 2 * line.len() + stored_len());
                assert_eq!(read_back(dir.path()), (3, 0));
            } else {
                assert_eq!(files.len(), 2, "a torn line is never joined");
                assert_eq!(files[0].len(), 2 * line.len() + tail.len());
                assert_eq!(read_back(dir.path()), (3, 1));
            }
        }
    }

    /// With room the writer writes at an offset, so a file truncated under it (logrotate's
    /// copytruncate) would get a hole of zeros before the next line: it is left as it is and
    /// the next lines go to a new file. A file another program appended to is left too.
    #[test]
    fn a_file_whose_length_changed_under_the_writer_is_left() {
        for change in ["truncated", "appended"] {
            let dir = tempfile::tempdir().unwrap();
            let log = DecisionLog::open(dir.path(), options(ROOM)).unwrap();
            log.append_blocking(&record(0)).unwrap();
            let path = dir.path().join("decisions-000001.jsonl");
            let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            if change == "truncated" {
                file.set_len(0).unwrap();
            } else {
                use std::os::unix::fs::FileExt;
                let end = file.metadata().unwrap().len();
                file.write_all_at(b"{}\n", end).unwrap();
            }
            log.append_blocking(&record(1)).unwrap();
            log.append_blocking(&record(2)).unwrap();
            drop(log);
            let files = files(dir.path());
            assert_eq!(files.len(), 2, "{change}");
            if change == "truncated" {
                assert!(files[0].is_empty(), "no hole of zeros");
            }
            let newest = std::str::from_utf8(&files[1]).unwrap();
            assert_eq!(ids_of(newest), vec![1, 2], "{change}");
        }
    }
}
