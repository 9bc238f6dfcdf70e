//! audit::reader::streams: which files of the logs a command line names make up which
//! replica's log — a directory gives every replica's files in it, a file is grouped with the
//! other named files of its directory and replica (by its name) — each stream in sequence order,
//! optionally narrowed to the files that hold records of a time window. It lists and reads
//! record times only; decoding lines is `decode`'s, checking chains `chain::verify`'s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use time::OffsetDateTime;

use super::{read_bytes, readable, split_lines, ReadError};
use crate::audit::files::{all_log_files, parse_log_name};

/// A log file and its sequence number, when its name gives one.
pub type LogFile = (Option<u64>, PathBuf);

/// One replica's log: its files in sequence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// `<dir> replica <id>` (`-` for files without an id; a file of another name is its own
    /// stream, named by its path).
    pub name: String,
    pub files: Vec<LogFile>,
}

/// The replicas' logs `paths` name, each a stream of its files in sequence order. A path that
/// does not exist or a directory that cannot be listed is an error; whether each file can be
/// read as a log is the reader's to say ([`Stream::check`]).
pub fn log_streams(paths: &[PathBuf]) -> Result<Vec<Stream>, ReadError> {
    let mut streams: BTreeMap<(String, String), Vec<LogFile>> = BTreeMap::new();
    for path in paths {
        let unreadable = |error: std::io::Error| ReadError {
            path: path.display().to_string(),
            message: error.to_string(),
        };
        let metadata = std::fs::metadata(path).map_err(unreadable)?;
        if metadata.is_dir() {
            for (replica, sequence, file) in all_log_files(path).map_err(unreadable)? {
                let replica = replica.map_or("-".to_string(), |id| id.as_str().to_string());
                streams
                    .entry((path.display().to_string(), replica))
                    .or_default()
                    .push((Some(sequence), file));
            }
        } else {
            let parent = path
                .parent()
                .unwrap_or(Path::new("."))
                .display()
                .to_string();
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned());
            let (replica, sequence) = match name.as_deref().and_then(parse_log_name) {
                Some((replica, sequence)) => (
                    replica.map_or("-".to_string(), |id| id.as_str().to_string()),
                    Some(sequence),
                ),
                None => (path.display().to_string(), None),
            };
            streams
                .entry((parent, replica))
                .or_default()
                .push((sequence, path.clone()));
        }
    }
    Ok(streams
        .into_iter()
        .map(|((dir, replica), mut files)| {
            files.sort();
            files.dedup();
            Stream {
                name: format!("{dir} replica {replica}"),
                files,
            }
        })
        .collect())
}

impl Stream {
    /// An error naming the first file that is not [`readable`] as a log (a regular file of a
    /// log's size).
    pub fn check(&self) -> Result<(), ReadError> {
        for (_, file) in &self.files {
            readable(file).map_err(|message| ReadError {
                path: file.display().to_string(),
                message,
            })?;
        }
        Ok(())
    }
}

/// A time window: records at or after `from`, at or before `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    pub from: Option<OffsetDateTime>,
    pub to: Option<OffsetDateTime>,
}

impl Window {
    pub fn is_all(&self) -> bool {
        self.from.is_none() && self.to.is_none()
    }

    /// Whether records from `first` to `last` may hold one inside the window.
    fn overlaps(&self, first: OffsetDateTime, last: OffsetDateTime) -> bool {
        self.from.is_none_or(|from| last >= from) && self.to.is_none_or(|to| first <= to)
    }
}

impl Stream {
    /// The stream narrowed to the files that hold a line of `window`'s time: a replica writes
    /// its files one after another, so they are a run of consecutive files. A file none of
    /// whose lines gives a time is kept (nothing says it is outside), as is an unreadable one
    /// (reading it reports it).
    pub fn within(mut self, window: Window) -> Self {
        if window.is_all() {
            return self;
        }
        self.files.retain(|(_, path)| match span(path) {
            Some((first, last)) => window.overlaps(first, last),
            None => true,
        });
        self
    }
}

/// The earliest and latest `time` of a file's lines (every kind of line the log holds carries
/// one), `None` when no line gives a time or the file cannot be read.
fn span(path: &Path) -> Option<(OffsetDateTime, OffsetDateTime)> {
    #[derive(Deserialize)]
    struct Timed {
        time: String,
    }
    let bytes = read_bytes(path).ok()?;
    let mut span: Option<(OffsetDateTime, OffsetDateTime)> = None;
    for line in split_lines(&bytes).filter(|line| !line.torn) {
        let Ok(timed) = serde_json::from_slice::<Timed>(line.text) else {
            continue;
        };
        let Ok(time) =
            OffsetDateTime::parse(&timed.time, &time::format_description::well_known::Rfc3339)
        else {
            continue;
        };
        span = Some(match span {
            None => (time, time),
            Some((first, last)) => (first.min(time), last.max(time)),
        });
    }
    span
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    fn write(dir: &Path, name: &str, times: &[&str]) -> PathBuf {
        let path = dir.join(name);
        let lines: String = times
            .iter()
            .map(|time| format!("{{\"time\":\"{time}\"}}\n"))
            .collect();
        std::fs::write(&path, lines).unwrap();
        path
    }

    #[test]
    fn a_directory_is_one_stream_per_replica_in_sequence_order() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "decisions-b-000002.jsonl", &[]);
        write(dir.path(), "decisions-b-000001.jsonl", &[]);
        write(dir.path(), "decisions-a-000001.jsonl", &[]);
        write(dir.path(), "notes.txt", &[]);
        let streams = log_streams(&[dir.path().to_path_buf()]).unwrap();
        let shown: Vec<(String, Vec<Option<u64>>)> = streams
            .iter()
            .map(|stream| {
                let replica = stream.name.rsplit(' ').next().unwrap().to_string();
                (replica, stream.files.iter().map(|(n, _)| *n).collect())
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("a".to_string(), vec![Some(1)]),
                ("b".to_string(), vec![Some(1), Some(2)])
            ]
        );
    }

    #[test]
    fn named_files_are_grouped_by_their_replica() {
        let dir = tempfile::tempdir().unwrap();
        let two = write(dir.path(), "decisions-a-000002.jsonl", &[]);
        let one = write(dir.path(), "decisions-a-000001.jsonl", &[]);
        let other = write(dir.path(), "decisions-b-000001.jsonl", &[]);
        let streams = log_streams(&[two, other, one]).unwrap();
        assert_eq!(streams.len(), 2);
        assert_eq!(streams[0].files.len(), 2);
        assert_eq!(streams[0].files[0].0, Some(1));
    }

    #[test]
    fn a_window_keeps_the_files_with_records_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "decisions-000001.jsonl",
            &["2026-12-01T10:00:00.000Z", "2026-12-01T11:00:00.000Z"],
        );
        write(
            dir.path(),
            "decisions-000002.jsonl",
            &["2026-12-02T10:00:00.000Z", "2026-12-02T11:00:00.000Z"],
        );
        write(
            dir.path(),
            "decisions-000003.jsonl",
            &["2026-12-03T10:00:00.000Z"],
        );
        let stream = || log_streams(&[dir.path().to_path_buf()]).unwrap().remove(0);
        let sequences =
            |stream: Stream| -> Vec<Option<u64>> { stream.files.iter().map(|(n, _)| *n).collect() };
        let window = Window {
            from: Some(datetime!(2026-12-01 10:30 UTC)),
            to: Some(datetime!(2026-12-02 10:30 UTC)),
        };
        assert_eq!(sequences(stream().within(window)), vec![Some(1), Some(2)]);
        let late = Window {
            from: Some(datetime!(2026-12-02 12:00 UTC)),
            to: None,
        };
        assert_eq!(sequences(stream().within(late)), vec![Some(3)]);
        assert_eq!(sequences(stream().within(Window::default())).len(), 3);
    }
}
