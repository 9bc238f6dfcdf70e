//! audit::reader::merge: several replicas' logs read as one, by decision time — a merge of
//! the streams' lines that always takes the earliest record at the head of a stream. A
//! replica's own lines keep their order; a problem line comes out as soon as its stream
//! reaches it. Each stream is read one file at a time, so memory holds one file per replica.

use std::collections::VecDeque;
use std::path::PathBuf;

use super::{read_file, LogLine};

/// One replica's lines, read a file at a time.
struct Cursor {
    files: VecDeque<PathBuf>,
    lines: VecDeque<LogLine>,
}

impl Cursor {
    /// The line at the head, reading the next file when the current one is done.
    fn head(&mut self) -> Option<&LogLine> {
        while self.lines.is_empty() {
            let file = self.files.pop_front()?;
            self.lines = read_file(&file).into();
        }
        self.lines.front()
    }
}

/// The lines of every stream (each a replica's files in sequence order), merged by record
/// time; records of equal time come in stream order.
pub fn by_time(streams: Vec<Vec<PathBuf>>) -> impl Iterator<Item = LogLine> {
    let mut cursors: Vec<Cursor> = streams
        .into_iter()
        .map(|files| Cursor {
            files: files.into(),
            lines: VecDeque::new(),
        })
        .collect();
    std::iter::from_fn(move || {
        let mut earliest: Option<(usize, String)> = None;
        for (index, cursor) in cursors.iter_mut().enumerate() {
            let time = match cursor.head() {
                None => continue,
                Some(LogLine::Problem(_)) => {
                    earliest = Some((index, String::new()));
                    break;
                }
                Some(LogLine::Record(record)) => record.time(),
            };
            if earliest
                .as_ref()
                .is_none_or(|(_, best)| time < best.as_str())
            {
                earliest = Some((index, time.to_string()));
            }
        }
        let (index, _) = earliest?;
        cursors.get_mut(index)?.lines.pop_front()
    })
}
