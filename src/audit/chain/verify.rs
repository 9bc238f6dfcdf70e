//! audit::chain::verify: checks the chains of decision logs — each replica's files in sequence
//! order, every line's number and the hash it chains to, every checkpoint's signature (against
//! the keys given, if any) and the writer's restart notes — and says what is wrong and where:
//! a record deleted, inserted, changed or reordered, a file missing from the middle, a tail cut
//! mid-record that no restart recorded, a checkpoint that does not verify or is signed by an
//! unknown key. What only deserves a note (records written before the chain, a log whose first
//! files are gone, records not yet signed) is said as such. It reads whole files into memory and
//! changes nothing.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use ed25519_dalek::VerifyingKey;

use super::checkpoint::{self, Invalid};
use super::notes::{ChainNote, NoteEvent, CHECKPOINT_KIND, NOTE_KIND};
use super::{split, LineHash, Link};
use crate::audit::reader::{log_streams, parse_record, split_lines, LogFile, ReadError, Window};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    Deleted,
    Inserted,
    Changed,
    Reordered,
    MissingFile,
    TruncatedTail,
    BadSignature,
    UnknownKey,
    Malformed,
    /// Notes (not tampering):
    Unchained,
    StartsLate,
    TornTailRecorded,
    ChainRestarted,
    Unsigned,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Deleted => "deleted",
            Self::Inserted => "inserted",
            Self::Changed => "changed",
            Self::Reordered => "reordered",
            Self::MissingFile => "missing-file",
            Self::TruncatedTail => "truncated-tail",
            Self::BadSignature => "bad-signature",
            Self::UnknownKey => "unknown-key",
            Self::Malformed => "malformed",
            Self::Unchained => "unchained",
            Self::StartsLate => "starts-late",
            Self::TornTailRecorded => "torn-tail-recorded",
            Self::ChainRestarted => "chain-restarted",
            Self::Unsigned => "unsigned",
        }
    }

    /// True when the finding means the log is not as the writer left it.
    pub fn is_tampering(self) -> bool {
        !matches!(
            self,
            Self::Unchained
                | Self::StartsLate
                | Self::TornTailRecorded
                | Self::ChainRestarted
                | Self::Unsigned
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// `file:line`, or the file.
    pub place: String,
    pub message: String,
}

/// One replica's chain.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainSummary {
    /// `dir` and replica id (`-` for files without one).
    pub name: String,
    pub files: usize,
    /// Complete lines, the log's own included.
    pub lines: u64,
    pub checkpoints: u64,
    /// Public keys (hex) that signed valid checkpoints.
    pub signers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    pub chains: Vec<ChainSummary>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn tampered(&self) -> bool {
        self.findings
            .iter()
            .any(|finding| finding.kind.is_tampering())
    }
}

/// The bytes of a regular file of a log's size (never a device that reads forever, nor a
/// file past `reader::MAX_READ_FILE_BYTES`).
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    crate::audit::reader::read_bytes(path).map_err(std::io::Error::other)
}

/// The most findings reported for one chain (the rest are counted in one more).
const MAX_FINDINGS: usize = 100;

/// Verifies every chain in `paths` (directories: every replica's files; files: grouped by the
/// replica their name gives). With `keys`, a checkpoint must be signed by one of them.
pub fn verify(paths: &[PathBuf], keys: &[VerifyingKey]) -> Result<Report, ReadError> {
    verify_within(paths, keys, Window::default())
}

/// [`verify`] of the links and checkpoints only: a record line is not decoded (a reader that
/// reads the log reports a malformed line itself), so a command that reads the log can check
/// its chains beside the reading at little more than a hash per line.
pub fn verify_links(paths: &[PathBuf]) -> Result<Report, ReadError> {
    walk_all(paths, &[], Window::default(), false)
}

/// [`verify`] of the files that hold records of `window` (`Stream::within`): each chain is
/// checked whole across them, and a chain that starts before the window is a note.
pub fn verify_within(
    paths: &[PathBuf],
    keys: &[VerifyingKey],
    window: Window,
) -> Result<Report, ReadError> {
    walk_all(paths, keys, window, true)
}

/// Every stream's walk; `decode` also decodes each record line to report a malformed one.
fn walk_all(
    paths: &[PathBuf],
    keys: &[VerifyingKey],
    window: Window,
    decode: bool,
) -> Result<Report, ReadError> {
    let streams = log_streams(paths)?;
    for stream in &streams {
        stream.check()?;
    }
    let mut report = Report::default();
    for stream in streams {
        let total = stream.files.len();
        let stream = stream.within(window);
        let mut walk = Walk::new(keys, &stream.files);
        walk.windowed = total != stream.files.len();
        walk.decode = decode;
        walk.summary.name = stream.name;
        walk.run(&stream.files);
        walk.finish();
        report.findings.extend(walk.findings);
        report.chains.push(walk.summary);
    }
    Ok(report)
}

/// A complete line found in the chain, for the look-ahead that tells a reorder from a deletion.
struct Numbered {
    /// Its position among the chain's numbered lines.
    positions: HashMap<u64, Vec<usize>>,
}

struct Walk<'a> {
    keys: &'a [VerifyingKey],
    findings: Vec<Finding>,
    dropped: usize,
    summary: ChainSummary,
    numbered: Numbered,
    /// Numbered lines seen so far.
    ordinal: usize,
    /// The hash the next line must chain to (`None`: unknown, after a gap).
    head: Option<LineHash>,
    /// The hash of the line before the last one.
    before_head: Option<LineHash>,
    /// The number the next line must carry (`None`: unknown).
    next: Option<u64>,
    chained: bool,
    /// Numbers seen, with the hash and place of their line.
    seen: HashMap<u64, (LineHash, String)>,
    /// Numbers a reported reorder skipped (found later, not reported again).
    skipped: HashSet<u64>,
    /// The last line was reported: the next one's link is not blamed for it again.
    quiet: bool,
    last_place: String,
    /// A torn tail waiting for the restart note that names it: file, offset, bytes, place.
    torn: Option<(String, u64, Vec<u8>, String)>,
    unchained: u64,
    first_unchained: Option<String>,
    /// Records since the last valid checkpoint, and its place.
    unsigned: u64,
    last_checkpoint: Option<String>,
    /// Files outside a `--from`/`--to` window were left out.
    windowed: bool,
    /// Record lines are decoded to report a malformed one (not in `verify_links`).
    decode: bool,
}

impl<'a> Walk<'a> {
    fn new(keys: &'a [VerifyingKey], files: &[LogFile]) -> Self {
        let mut positions: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut ordinal = 0;
        for (_, path) in files {
            let Ok(bytes) = read_regular(path) else {
                continue;
            };
            for line in split_lines(&bytes).filter(|line| !line.torn) {
                if let Some((_, link)) = split(line.text) {
                    positions.entry(link.n).or_default().push(ordinal);
                    ordinal += 1;
                }
            }
        }
        Self {
            keys,
            findings: Vec::new(),
            dropped: 0,
            summary: ChainSummary {
                files: files.len(),
                ..ChainSummary::default()
            },
            numbered: Numbered { positions },
            ordinal: 0,
            head: Some(LineHash::GENESIS),
            before_head: None,
            next: Some(0),
            chained: false,
            seen: HashMap::new(),
            skipped: HashSet::new(),
            quiet: false,
            last_place: String::new(),
            torn: None,
            unchained: 0,
            first_unchained: None,
            unsigned: 0,
            last_checkpoint: None,
            windowed: false,
            decode: true,
        }
    }

    fn report(&mut self, kind: FindingKind, place: &str, message: String) {
        if self.findings.len() >= MAX_FINDINGS {
            self.dropped += 1;
            return;
        }
        self.findings.push(Finding {
            kind,
            place: place.to_string(),
            message,
        });
    }

    fn run(&mut self, files: &[LogFile]) {
        let mut previous: Option<u64> = None;
        for (index, (sequence, path)) in files.iter().enumerate() {
            let shown = path.display().to_string();
            match (previous, *sequence) {
                (None, Some(first)) if first > 1 => {
                    let why = if self.windowed {
                        "the files before it hold no record of the --from/--to window and were not read"
                    } else {
                        "the files before it are not here (removed?)"
                    };
                    self.report(
                        FindingKind::StartsLate,
                        &shown,
                        format!("the log starts at file sequence {first}: {why}; its first line cannot be checked against them"),
                    );
                    self.unknown_head();
                }
                (Some(before), Some(now)) if now > before + 1 => {
                    let missing = if now == before + 2 {
                        format!("sequence {}", before + 1)
                    } else {
                        format!("sequences {} to {}", before + 1, now - 1)
                    };
                    self.report(
                        FindingKind::MissingFile,
                        &shown,
                        format!("a file is missing from the middle of the log: {missing}, between this file and the one before"),
                    );
                    self.unknown_head();
                }
                _ => {}
            }
            previous = *sequence;
            let bytes = match read_regular(path) {
                Ok(bytes) => bytes,
                Err(error) => {
                    self.report(
                        FindingKind::MissingFile,
                        &shown,
                        format!("the file cannot be read: {error}"),
                    );
                    self.unknown_head();
                    continue;
                }
            };
            let last_file = index + 1 == files.len();
            let mut offset = 0u64;
            for line in split_lines(&bytes) {
                let place = format!("{shown}:{}", line.line_number);
                if line.torn {
                    let name = path
                        .file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    self.torn = Some((name, offset, line.text.to_vec(), place));
                    if last_file {
                        self.unrecorded_torn_tail(true);
                    }
                    continue;
                }
                offset += line.text.len() as u64 + 1;
                self.line(line.text, &place);
            }
        }
    }

    fn unknown_head(&mut self) {
        self.head = None;
        self.before_head = None;
        self.next = None;
        self.quiet = true;
    }

    fn unrecorded_torn_tail(&mut self, last_file: bool) {
        if let Some((_, offset, torn, place)) = self.torn.take() {
            let why = if last_file {
                "the log was truncated, or askgate crashed and has not been started again since (a restart records a torn tail)"
            } else {
                "no restart note records it: the file was truncated"
            };
            self.report(
                FindingKind::TruncatedTail,
                &place,
                format!(
                    "the file ends in a cut record ({} bytes at offset {offset}): {why}",
                    torn.len()
                ),
            );
        }
    }

    fn line(&mut self, text: &[u8], place: &str) {
        self.summary.lines += 1;
        let hash = LineHash::of(text);
        let Some((record, link)) = split(text) else {
            self.unchained_line(text, hash, place);
            return;
        };
        let note = record
            .starts_with(format!(r#"{{"v":1,"kind":"{NOTE_KIND}""#).as_bytes())
            .then(|| serde_json::from_slice::<ChainNote>(&record).ok())
            .flatten();
        self.check_torn_note(note.as_ref(), place);
        if let Some(note) = note
            .as_ref()
            .filter(|note| note.event == NoteEvent::TailUnreadable)
        {
            self.report(
                FindingKind::ChainRestarted,
                place,
                format!(
                    "the writer could not read the tail of `{}` when it started ({}): the chain starts again here",
                    note.file,
                    note.reason.as_deref().unwrap_or("no reason given")
                ),
            );
            self.head = Some(LineHash::GENESIS);
            self.next = Some(0);
            self.quiet = false;
        }
        self.check_link(link, hash, place);
        self.check_content(&record, link, note.is_some(), place);
        self.chained = true;
        self.before_head = self.head;
        self.head = Some(hash);
        self.last_place = place.to_string();
        self.ordinal += 1;
    }

    fn unchained_line(&mut self, text: &[u8], hash: LineHash, place: &str) {
        self.check_torn_note(None, place);
        if self.chained {
            self.report(
                FindingKind::Inserted,
                place,
                "a record without chain fields inside the chained log: inserted, or its chain fields were changed".to_string(),
            );
            self.quiet = true;
        } else {
            self.unchained += 1;
            self.first_unchained
                .get_or_insert_with(|| place.to_string());
            if let Err((_, message)) = parse_record(text) {
                self.report(
                    FindingKind::Malformed,
                    place,
                    format!("not a record: {message}"),
                );
            }
        }
        self.before_head = self.head;
        self.head = Some(hash);
        self.last_place = place.to_string();
    }

    /// A torn tail before this line must be named by this line, a restart note.
    fn check_torn_note(&mut self, note: Option<&ChainNote>, place: &str) {
        let Some((file, offset, torn, _)) = &self.torn else {
            if let Some(note) = note.filter(|note| note.event == NoteEvent::TornTail) {
                let named = format!("{}:{}", note.file, note.offset.unwrap_or(0));
                self.report(
                    FindingKind::Changed,
                    place,
                    format!("a restart note names a torn tail at {named} that is not there: the file was changed or completed after the crash"),
                );
            }
            return;
        };
        let matches = note.is_some_and(|note| {
            note.event == NoteEvent::TornTail
                && &note.file == file
                && note.offset == Some(*offset)
                && note.bytes == Some(torn.len() as u64)
                && note.sha256.as_deref() == Some(LineHash::of(torn).to_hex().as_str())
        });
        if matches {
            let (file, offset, torn, _) = self.torn.take().unwrap_or_default();
            self.report(
                FindingKind::TornTailRecorded,
                place,
                format!("`{file}` ends in a record cut short at offset {offset} ({} bytes, a crash): the writer recorded it when it started again", torn.len()),
            );
        } else {
            self.unrecorded_torn_tail(false);
        }
    }

    fn check_link(&mut self, link: Link, hash: LineHash, place: &str) {
        let quiet = std::mem::take(&mut self.quiet);
        let mut reported = false;
        match self.next {
            None => {}
            Some(expected) if link.n > expected => {
                let later = (expected..link.n.min(expected.saturating_add(1000))).find(|n| {
                    self.numbered
                        .positions
                        .get(n)
                        .is_some_and(|at| at.iter().any(|at| *at > self.ordinal))
                });
                if let Some(found) = later {
                    self.skipped.extend(expected..link.n);
                    self.report(
                        FindingKind::Reordered,
                        place,
                        format!("record {} comes before record {found}, which is further on: records were reordered", link.n),
                    );
                } else {
                    let missing = if link.n == expected + 1 {
                        format!("record {expected} is")
                    } else {
                        format!("records {expected} to {} are", link.n - 1)
                    };
                    self.report(
                        FindingKind::Deleted,
                        place,
                        format!(
                            "{missing} missing before this one (record {}): deleted",
                            link.n
                        ),
                    );
                }
                reported = true;
            }
            Some(expected) if link.n < expected => {
                if let Some((_, earlier)) = self.seen.get(&link.n) {
                    let earlier = earlier.clone();
                    self.report(
                        FindingKind::Inserted,
                        place,
                        format!("record number {} appears again (first at {earlier}): a record was inserted or copied", link.n),
                    );
                } else if !self.skipped.remove(&link.n) {
                    self.report(
                        FindingKind::Reordered,
                        place,
                        format!(
                            "record {} comes after record {}: records were reordered",
                            link.n,
                            expected - 1
                        ),
                    );
                }
                reported = true;
            }
            Some(_) => {}
        }
        if !reported && !quiet {
            if let Some(head) = self.head.filter(|head| *head != link.prev) {
                let _ = head;
                if self.before_head == Some(link.prev) {
                    let last = self.last_place.clone();
                    self.report(
                        FindingKind::Inserted,
                        &last,
                        format!("the record after it ({place}) chains past it: it was inserted"),
                    );
                } else if self.last_place.is_empty() {
                    self.report(
                        FindingKind::Deleted,
                        place,
                        "the first record does not chain to the start of the log: records before it were deleted".to_string(),
                    );
                } else {
                    let last = self.last_place.clone();
                    self.report(
                        FindingKind::Changed,
                        &last,
                        format!("this record was changed: the record after it ({place}) chains to a different hash"),
                    );
                }
            }
        }
        if reported {
            // The line after a misplaced one chains to another: not blamed for it again.
            self.quiet = true;
        }
        self.seen
            .entry(link.n)
            .or_insert_with(|| (hash, place.to_string()));
        self.next = Some(match self.next {
            Some(expected) if link.n < expected => expected,
            _ => link.n + 1,
        });
    }

    fn check_content(&mut self, record: &[u8], link: Link, note: bool, place: &str) {
        if note {
            return;
        }
        if record.starts_with(format!(r#"{{"v":1,"kind":"{CHECKPOINT_KIND}""#).as_bytes()) {
            self.checkpoint(record, link, place);
            return;
        }
        self.unsigned += 1;
        if !self.decode {
            return;
        }
        if let Err((_, message)) = parse_record(record) {
            self.report(
                FindingKind::Malformed,
                place,
                format!("not a record: {message}"),
            );
        }
    }

    fn checkpoint(&mut self, record: &[u8], link: Link, place: &str) {
        match checkpoint::check(record, link) {
            Ok(key) => {
                let public = super::hex(key.as_bytes());
                if !self.keys.is_empty() && !self.keys.contains(&key) {
                    self.report(
                        FindingKind::UnknownKey,
                        place,
                        format!("the checkpoint is signed by key {public}, which is none of the keys given with --key"),
                    );
                    return;
                }
                self.summary.checkpoints += 1;
                if !self.summary.signers.contains(&public) {
                    self.summary.signers.push(public);
                }
                self.unsigned = 0;
                self.last_checkpoint = Some(place.to_string());
            }
            Err(Invalid::BadSignature) => self.report(
                FindingKind::BadSignature,
                place,
                "the checkpoint's signature does not verify: the checkpoint, or the chain head it signs, was changed".to_string(),
            ),
            Err(Invalid::Malformed(message)) => self.report(
                FindingKind::Malformed,
                place,
                format!("not a checkpoint: {message}"),
            ),
        }
    }

    fn finish(&mut self) {
        let name = self.summary.name.clone();
        if self.unchained > 0 {
            let first = self.first_unchained.clone().unwrap_or_default();
            self.report(
                FindingKind::Unchained,
                &first,
                format!("{} record(s) from before the chain (no chain fields): readable, but their order and content cannot be verified", self.unchained),
            );
        }
        if self.unsigned > 0 {
            let since = match &self.last_checkpoint {
                Some(place) => format!("after the last checkpoint ({place})"),
                None => "and no checkpoint at all".to_string(),
            };
            self.report(
                FindingKind::Unsigned,
                &name,
                format!("{} record(s) {since} are chained but not signed: whoever can rewrite the files could rewrite them and their chain", self.unsigned),
            );
        }
        if self.dropped > 0 {
            let dropped = self.dropped;
            self.dropped = 0;
            self.findings.push(Finding {
                kind: FindingKind::Malformed,
                place: name,
                message: format!("{dropped} more finding(s) not shown"),
            });
        }
    }
}

#[cfg(test)]
mod tests;
