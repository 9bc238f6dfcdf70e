//! audit::reader: reads decision logs back — expands directories to every replica's log files
//! (by replica, then sequence) and splits lines, marking a last line without a newline as
//! torn; which files are which replica's is `streams`'s, reading replicas as one log by time
//! `merge`'s; `decode` turns each line into a record or reports every line it cannot trust (torn,
//! malformed, foreign version, unknown kind) by file and line number. It reads only regular
//! files of at most [`MAX_READ_FILE_BYTES`] (P10), never panics on any
//! bytes and never reads a torn last line as a record. A line's chain fields are taken off
//! before it is decoded, and the log's own lines (checkpoints, chain notes) are skipped
//! (`audit::chain`; `log verify` checks them). The zero-filled room at the end of a file
//! the writer has open (`audit::writer::room`) is no line: the lines end at its first zero
//! byte, and anything but zeros after it is one more line (malformed), so nothing hides behind it.

mod decode;
mod merge;
mod streams;

use std::path::{Path, PathBuf};

use super::chain::notes::is_log_own;

pub use decode::{decode, parse_record, LogLine, Problem, ProblemKind};
pub use streams::{log_streams, LogFile, Stream, Window};

/// A path named on the command line cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read the log `{path}`: {message}")]
pub struct ReadError {
    pub path: String,
    pub message: String,
}

/// One line of a file before decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLine<'a> {
    pub line_number: usize,
    pub text: &'a [u8],
    /// No newline ended it (only ever the last line of a file).
    pub torn: bool,
}

/// The files `paths` name: every replica's (`streams`), by replica then sequence.
pub fn log_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ReadError> {
    Ok(log_streams(paths)?
        .into_iter()
        .flat_map(|stream| stream.files.into_iter().map(|(_, file)| file))
        .collect())
}

/// Every line of every log `paths` name, as records or problems: each replica's lines in
/// their order, the replicas' merged by decision time (`merge`).
pub fn read_log(paths: &[PathBuf]) -> Result<impl Iterator<Item = LogLine>, ReadError> {
    let streams = log_streams(paths)?
        .into_iter()
        .map(|stream| stream.files.into_iter().map(|(_, file)| file).collect())
        .collect();
    Ok(merge::by_time(streams))
}

/// The largest log file a reader takes (P10): the writer rotates at `max_file_bytes` (64 MiB
/// by default), so anything past this bound is not a log askgate wrote, and reading it would
/// cost its size in memory.
pub const MAX_READ_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Whether `path` may be read as a log: a regular file (through symlinks: a link to a device
/// or a FIFO is refused, since reading it would never end) of at most
/// [`MAX_READ_FILE_BYTES`]. Checked before the file is opened, so a FIFO is never opened.
pub fn readable(path: &Path) -> Result<(), String> {
    let metadata = std::fs::metadata(path).map_err(|error| error.to_string())?;
    if !metadata.is_file() {
        return Err(
            "is not a regular file (a device, FIFO or socket, or a link to one): refused, a log \
             is a regular file"
                .to_string(),
        );
    }
    if metadata.len() > MAX_READ_FILE_BYTES {
        return Err(format!(
            "is {} bytes, more than the {MAX_READ_FILE_BYTES} a log file can be: refused",
            metadata.len()
        ));
    }
    Ok(())
}

/// The bytes of one log file, if it is [`readable`]; read through the bound as well, since
/// the file may grow between the check and the read. Every reader of log files reads here.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    readable(path)?;
    let file = std::fs::File::open(path).map_err(|error| error.to_string())?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_READ_FILE_BYTES + 1),
        &mut bytes,
    )
    .map_err(|error| error.to_string())?;
    if bytes.len() as u64 > MAX_READ_FILE_BYTES {
        return Err(format!(
            "grew past the {MAX_READ_FILE_BYTES} bytes a log file can be: refused"
        ));
    }
    Ok(bytes)
}

/// The lines of one file; an unreadable or refused file is one `Unreadable` problem.
pub fn read_file(path: &Path) -> Vec<LogLine> {
    let name = path.display().to_string();
    match read_bytes(path) {
        Ok(bytes) => split_lines(&bytes)
            // The log's own checkpoints and chain notes are no decision records.
            .filter(|line| line.torn || !is_log_own(line.text))
            .map(|line| decode(&name, line))
            .collect(),
        Err(error) => vec![LogLine::Problem(Problem {
            file: name,
            line_number: 0,
            kind: ProblemKind::Unreadable,
            message: error,
            text_prefix: String::new(),
        })],
    }
}

/// Splits a file's bytes into lines; a last line without a newline is torn. The lines end at
/// the first zero byte (the writer's room); bytes other than zeros after it are one more line.
pub fn split_lines(bytes: &[u8]) -> impl Iterator<Item = RawLine<'_>> {
    let (mut rest, room) = match bytes.iter().position(|byte| *byte == 0) {
        Some(start) => bytes.split_at(start),
        None => (bytes, &[][..]),
    };
    let mut behind_room = room.iter().any(|byte| *byte != 0).then_some(room);
    let mut line_number = 0;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            let text = behind_room.take()?;
            line_number += 1;
            return Some(RawLine {
                line_number,
                text,
                torn: false,
            });
        }
        line_number += 1;
        let (text, torn) = match rest.iter().position(|byte| *byte == b'\n') {
            Some(end) => {
                let text = rest.get(..end).unwrap_or_default();
                rest = rest.get(end + 1..).unwrap_or_default();
                (text, false)
            }
            None => (std::mem::take(&mut rest), true),
        };
        Some(RawLine {
            line_number,
            text,
            torn,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_line_without_newline_is_torn() {
        assert_eq!(split_lines(b"").count(), 0);
        let lines: Vec<RawLine<'_>> = split_lines(b"a\nb").collect();
        assert_eq!(lines.len(), 2);
        assert!(!lines[0].torn && lines[1].torn);
        assert_eq!(lines[1].text, b"b");
        let complete: Vec<RawLine<'_>> = split_lines(b"a\n\n").collect();
        assert_eq!(complete.len(), 2);
        assert!(complete.iter().all(|line| !line.torn));
    }

    /// The writer's zero-filled room is no line; a line cut by it is torn; anything but zeros
    /// after it is one more line (which `decode` finds malformed).
    #[test]
    fn the_zero_filled_room_ends_the_lines() {
        let lines: Vec<RawLine<'_>> = split_lines(b"a\nb\n\0\0\0\0").collect();
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|line| !line.torn));
        let cut: Vec<RawLine<'_>> = split_lines(b"a\n{\"v\0\0").collect();
        assert_eq!(cut.len(), 2);
        assert!(cut[1].torn);
        assert_eq!(cut[1].text, b"{\"v");
        let hidden: Vec<RawLine<'_>> = split_lines(b"a\n\0\0b\n\0").collect();
        assert_eq!(hidden.len(), 2);
        assert_eq!(
            (hidden[1].line_number, hidden[1].text),
            (2, &b"\0\0b\n\0"[..])
        );
    }
}
