//! audit::chain::checkpoint: the signed checkpoint — every N records or T seconds (and when the
//! log closes) the writer appends a record whose chain fields carry the head, signed with the
//! replica's Ed25519 key over its number, that head, its time, how many records it covers and
//! the public key. Building, parsing and checking one is here; when to write one is `head`'s.

use std::time::Duration;

use ed25519_dalek::{Signature, Signer, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

use super::key::CheckpointKey;
use super::notes::CHECKPOINT_KIND;
use super::{hex, Link};

/// Default: a checkpoint after this many records…
pub const DEFAULT_EVERY_RECORDS: u64 = 1000;
/// …or this long after the last one, whichever comes first (only when records were written).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// When and with what key the writer signs checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoints {
    pub key: CheckpointKey,
    pub every_records: u64,
    pub interval: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointRecord {
    pub v: u64,
    pub kind: String,
    pub time: String,
    /// Records written since the checkpoint before (chain notes and checkpoints not counted).
    pub records: u64,
    /// The signer's public key, hex.
    pub key: String,
    /// Ed25519 over [`message`], hex.
    pub sig: String,
}

/// What a checkpoint signs.
pub fn message(link: Link, time: &str, records: u64, key: &str) -> Vec<u8> {
    format!(
        "askgate-checkpoint-v1\nn={}\nprev={}\ntime={time}\nrecords={records}\nkey={key}",
        link.n,
        link.prev.to_hex()
    )
    .into_bytes()
}

/// The checkpoint record to write as line `link` (no chain fields yet).
pub fn sign(key: &CheckpointKey, link: Link, time: String, records: u64) -> Vec<u8> {
    let public = key.public_hex();
    let sig = key.signing().sign(&message(link, &time, records, &public));
    let record = CheckpointRecord {
        v: 1,
        kind: CHECKPOINT_KIND.to_string(),
        time,
        records,
        key: public,
        sig: hex(&sig.to_bytes()),
    };
    serde_json::to_vec(&record).unwrap_or_default()
}

/// Why a checkpoint does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalid {
    /// Not a checkpoint record (a field changed or missing).
    Malformed(String),
    /// The signature does not match what it signs.
    BadSignature,
}

/// Checks the checkpoint `record` (its chain fields split off) stored as `link`; returns the
/// public key that signed it.
pub fn check(record: &[u8], link: Link) -> Result<VerifyingKey, Invalid> {
    let parsed: CheckpointRecord =
        serde_json::from_slice(record).map_err(|error| Invalid::Malformed(error.to_string()))?;
    if parsed.v != 1 || parsed.kind != CHECKPOINT_KIND {
        return Err(Invalid::Malformed("not a version 1 checkpoint".to_string()));
    }
    let key = super::LineHash::parse(parsed.key.as_bytes())
        .and_then(|bytes| VerifyingKey::from_bytes(&bytes.0).ok())
        .ok_or_else(|| Invalid::Malformed("its key is not an Ed25519 public key".to_string()))?;
    let sig = parse_signature(&parsed.sig).ok_or(Invalid::BadSignature)?;
    key.verify(
        &message(link, &parsed.time, parsed.records, &parsed.key),
        &sig,
    )
    .map_err(|_| Invalid::BadSignature)?;
    Ok(key)
}

fn parse_signature(text: &str) -> Option<Signature> {
    let bytes = text.as_bytes();
    let (high, low) = (bytes.get(..64)?, bytes.get(64..)?);
    let (high, low) = (super::LineHash::parse(high)?, super::LineHash::parse(low)?);
    let mut all = [0u8; 64];
    all.get_mut(..32)?.copy_from_slice(&high.0);
    all.get_mut(32..)?.copy_from_slice(&low.0);
    Some(Signature::from_bytes(&all))
}

#[cfg(test)]
mod tests {
    use super::super::LineHash;
    use super::*;

    #[test]
    fn a_checkpoint_checks_only_with_its_own_link_and_fields() {
        let key = CheckpointKey::from_seed([7; 32]);
        let link = Link {
            n: 41,
            prev: LineHash::of(b"x"),
        };
        let record = sign(&key, link, "2026-12-05T08:00:00Z".to_string(), 3);
        assert_eq!(check(&record, link).unwrap(), key.signing().verifying_key());
        let moved = Link { n: 42, ..link };
        assert_eq!(check(&record, moved), Err(Invalid::BadSignature));
        let other_head = Link {
            prev: LineHash::of(b"y"),
            ..link
        };
        assert_eq!(check(&record, other_head), Err(Invalid::BadSignature));
        let text = String::from_utf8(record).unwrap();
        let more = text.replace("\"records\":3", "\"records\":4");
        assert_eq!(check(more.as_bytes(), link), Err(Invalid::BadSignature));
        let extra = text.replace("\"records\"", "\"x\":1,\"records\"");
        assert!(matches!(
            check(extra.as_bytes(), link),
            Err(Invalid::Malformed(_))
        ));
    }
}
