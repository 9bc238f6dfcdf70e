//! audit::chain::tail: where the chain of a replica's log continues when the writer opens it —
//! the hash and number of the last complete line of its last non-empty file, and the note to
//! write first when that is not the whole story: a torn last line (a crash mid-write), named
//! by file, offset, length and hash so it is never passed over silently, or a tail that could
//! not be read (the chain restarts from the genesis hash, saying why).

use std::path::Path;

use super::notes::ChainNote;
use super::{split, LineHash};
use crate::audit::files::{sequence_files, ReplicaId};

/// Where the chain continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub head: LineHash,
    pub next: u64,
    pub note: Option<ChainNote>,
}

impl Default for Start {
    fn default() -> Self {
        Self {
            head: LineHash::GENESIS,
            next: 0,
            note: None,
        }
    }
}

/// How much of a file's end is read first (a line longer than this reads the whole file).
const TAIL_WINDOW: u64 = 1024 * 1024;

/// The end of a regular file (its offset and bytes): the last [`TAIL_WINDOW`] bytes, or the
/// whole file when they hold no complete line before the last newline.
fn read_tail(path: &Path) -> std::io::Result<(u64, Vec<u8>)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let length = metadata.len();
    let start = length.saturating_sub(TAIL_WINDOW);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.by_ref().take(length - start).read_to_end(&mut bytes)?;
    let newlines = bytes.iter().filter(|byte| **byte == b'\n').count();
    if start > 0 && newlines < 2 {
        file.seek(SeekFrom::Start(0))?;
        bytes.clear();
        file.take(length).read_to_end(&mut bytes)?;
        return Ok((0, bytes));
    }
    if start > 0 {
        // The window's first line may be cut: it starts after the first newline.
        let first = bytes
            .iter()
            .position(|byte| *byte == b'\n')
            .map_or(0, |at| at + 1);
        return Ok((start + first as u64, bytes.split_off(first)));
    }
    Ok((0, bytes))
}

/// Reads the replica's files from the last backwards until a complete line is found.
pub fn find_start(dir: &Path, replica: Option<&ReplicaId>) -> Start {
    let files = match sequence_files(dir, replica) {
        Ok(files) => files,
        Err(error) => {
            return Start {
                note: Some(ChainNote::tail_unreadable(
                    &dir.display().to_string(),
                    &error.to_string(),
                )),
                ..Start::default()
            }
        }
    };
    let mut note = None;
    for (_, path) in files.iter().rev() {
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (window_start, bytes) = match read_tail(path) {
            Ok(read) => read,
            Err(error) => {
                return Start {
                    note: Some(ChainNote::tail_unreadable(&name, &error.to_string())),
                    ..Start::default()
                }
            }
        };
        // The writer's zero-filled room ends the lines (as `audit::reader` reads them).
        let lines = bytes
            .iter()
            .position(|byte| *byte == 0)
            .and_then(|end| bytes.get(..end))
            .unwrap_or(&bytes);
        let complete_end = lines
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |at| at + 1);
        let (complete, torn) = lines.split_at(complete_end);
        if !torn.is_empty() && note.is_none() {
            note = Some(ChainNote::torn_tail(
                &name,
                window_start + complete_end as u64,
                torn,
            ));
        }
        let complete = complete.strip_suffix(b"\n").unwrap_or(complete);
        if complete.is_empty() {
            continue;
        }
        let last = complete
            .iter()
            .rposition(|byte| *byte == b'\n')
            .and_then(|at| complete.get(at + 1..))
            .unwrap_or(complete);
        return Start {
            head: LineHash::of(last),
            next: split(last).map_or(0, |(_, link)| link.n + 1),
            note,
        };
    }
    Start {
        note,
        ..Start::default()
    }
}

#[cfg(test)]
mod tests {
    use super::super::notes::NoteEvent;
    use super::*;

    #[test]
    fn a_torn_tail_is_named_and_the_chain_continues_from_the_last_complete_line() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find_start(dir.path(), None), Start::default());
        let line = format!(r#"{{"a":1,"n":4,"prev":"{}"}}"#, "0".repeat(64));
        std::fs::write(
            dir.path().join("decisions-000001.jsonl"),
            format!("{line}\n"),
        )
        .unwrap();
        std::fs::write(dir.path().join("decisions-000002.jsonl"), "{\"cut").unwrap();
        let start = find_start(dir.path(), None);
        assert_eq!((start.head, start.next), (LineHash::of(line.as_bytes()), 5));
        let note = start.note.unwrap();
        assert_eq!(note.event, NoteEvent::TornTail);
        assert_eq!(note.file, "decisions-000002.jsonl");
        assert_eq!((note.offset, note.bytes), (Some(0), Some(5)));
        assert_eq!(note.sha256, Some(LineHash::of(b"{\"cut").to_hex()));
    }

    #[test]
    fn an_old_unchained_line_is_chained_to_as_number_zero_follows() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("decisions-000001.jsonl"),
            "{\"old\":1}\n\0\0\0",
        )
        .unwrap();
        let start = find_start(dir.path(), None);
        assert_eq!(
            (start.head, start.next, start.note),
            (LineHash::of(b"{\"old\":1}"), 0, None)
        );
    }
}
