//! audit::chain::notes: the records the writer adds to a log of its own — a checkpoint (the
//! chain head signed; fields in `checkpoint`) and a chain note, written first when the writer
//! restarts after something it must not pass over silently: the last file ends in a torn line
//! (named by file, offset, length and hash), or the tail could not be read (and why). Readers
//! of decisions skip both (`is_log_own`); `verify` checks them.

use serde::{Deserialize, Serialize};

/// The `kind` of a chain note.
pub const NOTE_KIND: &str = "chain";
/// The `kind` of a checkpoint.
pub const CHECKPOINT_KIND: &str = "checkpoint";

/// Why the chain did not simply continue from the last line on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteEvent {
    /// The last file ended in a line cut short (a crash mid-write); the chain continues from
    /// the last complete line before it.
    TornTail,
    /// The tail could not be read: the chain starts again from the genesis hash.
    TailUnreadable,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainNote {
    pub v: u64,
    pub kind: String,
    pub time: String,
    pub event: NoteEvent,
    /// The file's name (no directory).
    pub file: String,
    /// Torn tail: where the torn bytes start, how many there are and their SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Unreadable tail: the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ChainNote {
    pub fn torn_tail(file: &str, offset: u64, torn: &[u8]) -> Self {
        Self {
            v: 1,
            kind: NOTE_KIND.to_string(),
            time: now(),
            event: NoteEvent::TornTail,
            file: file.to_string(),
            offset: Some(offset),
            bytes: Some(torn.len() as u64),
            sha256: Some(super::LineHash::of(torn).to_hex()),
            reason: None,
        }
    }

    pub fn tail_unreadable(file: &str, reason: &str) -> Self {
        Self {
            v: 1,
            kind: NOTE_KIND.to_string(),
            time: now(),
            event: NoteEvent::TailUnreadable,
            file: file.to_string(),
            offset: None,
            bytes: None,
            sha256: None,
            reason: Some(reason.to_string()),
        }
    }

    /// The note as a record line (no chain fields yet).
    pub fn to_line(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The current time as records write it.
pub fn now() -> String {
    crate::audit::record::format_time(time::OffsetDateTime::now_utc())
}

/// True for a line (its chain fields on or off) the writer wrote of its own: a checkpoint or
/// a chain note, which are no decision records.
pub fn is_log_own(text: &[u8]) -> bool {
    text.starts_with(br#"{"v":1,"kind":"checkpoint""#)
        || text.starts_with(br#"{"v":1,"kind":"chain""#)
}
