//! audit::reader: reads decision logs back — expands directories to every replica's log files
//! (by replica, then sequence) and splits lines, marking a last line without a newline as
//! torn; `decode` turns each line into a record or reports every line it cannot trust (torn,
//! malformed, foreign version, unknown kind) by file and line number. It never panics on any
//! bytes and never reads a torn last line as a record. The zero-filled room at the end of a file
//! the writer has open (`audit::writer::room`) is no line: the lines end at its first zero
//! byte, and anything but zeros after it is one more line (malformed), so nothing hides behind it.

mod decode;

use std::path::{Path, PathBuf};

use super::files::all_log_files;

pub use decode::{decode, parse_record, LogLine, Problem, ProblemKind};

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

/// The files `paths` name: files as given, directories as their log files
/// (every replica's, by replica then sequence).
pub fn log_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ReadError> {
    let mut files = Vec::new();
    for path in paths {
        let unreadable = |error: std::io::Error| ReadError {
            path: path.display().to_string(),
            message: error.to_string(),
        };
        let metadata = std::fs::metadata(path).map_err(unreadable)?;
        if metadata.is_dir() {
            let listed = all_log_files(path).map_err(unreadable)?;
            files.extend(listed.into_iter().map(|(_, _, file)| file));
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Every line of every log `paths` name, in order, as records or problems.
pub fn read_log(paths: &[PathBuf]) -> Result<impl Iterator<Item = LogLine>, ReadError> {
    let files = log_files(paths)?;
    Ok(files.into_iter().flat_map(|file| read_file(&file)))
}

/// The lines of one file; an unreadable file is one `Unreadable` problem.
pub fn read_file(path: &Path) -> Vec<LogLine> {
    let name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => split_lines(&bytes)
            .map(|line| decode(&name, line))
            .collect(),
        Err(error) => vec![LogLine::Problem(Problem {
            file: name,
            line_number: 0,
            kind: ProblemKind::Unreadable,
            message: error.to_string(),
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
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]

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
