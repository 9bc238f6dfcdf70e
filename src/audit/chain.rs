//! audit::chain: the hash chain of a replica's decision log. The writer ends every line it
//! stores with `,"n":<number>,"prev":"<hex>"}`: its place in the replica's log (0, 1, 2, …)
//! and the SHA-256 of the previous stored line (its bytes without the newline; 64 zeros
//! before the first), across rotation and restarts. What is hashed is what is stored, after
//! redaction, so checking needs no secret. This module owns that line format (adding and
//! splitting off the chain fields, hashing); the writer's running head is `head`, finding the
//! last good line on restart `tail`, the signed checkpoints `checkpoint` and their keys `key`,
//! the records the writer adds of its own (checkpoints, notes) `notes`, and checking a log
//! `verify`. It never decides and never reads a policy.

pub mod checkpoint;
pub mod head;
pub mod key;
pub mod notes;
pub mod tail;
pub mod verify;

use sha2::{Digest, Sha256};

/// SHA-256 of one stored line.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineHash(pub [u8; 32]);

impl LineHash {
    /// What the first line of a log chains to.
    pub const GENESIS: LineHash = LineHash([0; 32]);

    /// The hash of a stored line, `text` without its newline.
    pub fn of(text: &[u8]) -> Self {
        Self(Sha256::digest(text).into())
    }

    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    pub fn parse(text: &[u8]) -> Option<Self> {
        if text.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (index, pair) in text.chunks(2).enumerate() {
            let high = hex_value(*pair.first()?)?;
            let low = hex_value(*pair.get(1)?)?;
            *bytes.get_mut(index)? = high << 4 | low;
        }
        Some(Self(bytes))
    }
}

impl std::fmt::Debug for LineHash {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}", self.to_hex())
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let digit = |value: u8| char::from_digit(u32::from(value), 16).unwrap_or('0');
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(digit(byte >> 4));
        out.push(digit(byte & 0xf));
    }
    out
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

/// The chain fields of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub n: u64,
    pub prev: LineHash,
}

const PREV_FIELD: &[u8] = br#","prev":""#;
const N_FIELD: &[u8] = br#","n":"#;

/// The bytes the chain fields add to a line numbered `n`.
pub fn overhead(n: u64) -> u64 {
    let digits = n.checked_ilog10().unwrap_or(0) + 1;
    // `,"n":` + digits + `,"prev":"` + 64 + `"` (the closing brace was there already).
    (N_FIELD.len() + PREV_FIELD.len() + 64 + 1) as u64 + u64::from(digits)
}

/// Appends `raw` (one encoded record, `{…}` with or without its newline) to `out` with the
/// chain fields of `link` before its closing brace, and a newline. A line that does not end
/// in `}` (never written by the encoder) is stored as it is, without them.
pub fn append_chained(raw: &[u8], link: Link, out: &mut Vec<u8>) {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let Some(body) = raw.strip_suffix(b"}") else {
        out.extend_from_slice(raw);
        out.push(b'\n');
        return;
    };
    out.extend_from_slice(body);
    out.extend_from_slice(N_FIELD);
    out.extend_from_slice(link.n.to_string().as_bytes());
    out.extend_from_slice(PREV_FIELD);
    out.extend_from_slice(link.prev.to_hex().as_bytes());
    out.extend_from_slice(b"\"}\n");
}

/// A stored line split into its record (the chain fields taken out) and its link; `None` for
/// a line without chain fields (written before the chain, or not by askgate).
pub fn split(text: &[u8]) -> Option<(Vec<u8>, Link)> {
    let without_close = text.strip_suffix(b"\"}")?;
    let hex_start = without_close.len().checked_sub(64)?;
    let prev = LineHash::parse(without_close.get(hex_start..)?)?;
    let before_hex = without_close.get(..hex_start)?.strip_suffix(PREV_FIELD)?;
    let digits = before_hex
        .iter()
        .rev()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    let digits_start = before_hex.len() - digits;
    let number = before_hex.get(digits_start..)?;
    if number.is_empty() || number.len() > 20 || (number.len() > 1 && number.first() == Some(&b'0'))
    {
        return None;
    }
    let n = std::str::from_utf8(number).ok()?.parse().ok()?;
    let body = before_hex.get(..digits_start)?.strip_suffix(N_FIELD)?;
    let mut record = Vec::with_capacity(body.len() + 1);
    record.extend_from_slice(body);
    record.push(b'}');
    Some((record, Link { n, prev }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chained_line_splits_back_into_its_record_and_link() {
        let raw = br#"{"v":1,"kind":"outcome","id":"o"}"#;
        for n in [0, 9, 10, 12_345, u64::MAX] {
            let link = Link {
                n,
                prev: LineHash::of(b"before"),
            };
            let mut out = Vec::new();
            append_chained(&raw[..], link, &mut out);
            assert_eq!(out.len() as u64, raw.len() as u64 + 1 + overhead(n));
            let line = out.strip_suffix(b"\n").unwrap();
            assert!(line.ends_with(format!(r#","prev":"{}"}}"#, link.prev.to_hex()).as_bytes()));
            let value: serde_json::Value = serde_json::from_slice(line).unwrap();
            assert_eq!(value["n"], n);
            assert_eq!(split(line), Some((raw.to_vec(), link)));
        }
    }

    #[test]
    fn lines_without_chain_fields_do_not_split() {
        assert_eq!(split(br#"{"v":1,"kind":"outcome","id":"o"}"#), None);
        assert_eq!(split(br#"{"n":01,"prev":"00"}"#), None);
        let upper = format!(r#"{{"a":1,"n":1,"prev":"{}"}}"#, "A".repeat(64));
        assert_eq!(split(upper.as_bytes()), None);
        let zero_padded = format!(r#"{{"a":1,"n":01,"prev":"{}"}}"#, "a".repeat(64));
        assert_eq!(split(zero_padded.as_bytes()), None);
    }

    #[test]
    fn the_hash_is_sha256_of_the_stored_bytes() {
        assert_eq!(
            LineHash::of(b"abc").to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let parsed = LineHash::parse(LineHash::of(b"abc").to_hex().as_bytes()).unwrap();
        assert_eq!(parsed, LineHash::of(b"abc"));
    }
}
