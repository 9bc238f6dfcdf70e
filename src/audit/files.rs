//! audit::files: the naming of log files (`decisions-<6-digit sequence>.jsonl`, or
//! `decisions-<replica>-<6-digit sequence>.jsonl` for a replica with an id, so replicas may
//! share a directory) and listing a directory's log files in sequence order. It must not read or
//! write their contents.

use std::path::{Path, PathBuf};

const PREFIX: &str = "decisions-";
const SUFFIX: &str = ".jsonl";
/// Long enough for a host name's first label, short enough to keep file names readable.
const MAX_REPLICA_LEN: usize = 32;

/// A replica's id as it appears in its log files' names: 1–32 of `[a-z0-9-]`, starting with a
/// letter or digit (so `decisions-<replica>-000001.jsonl` parses back unambiguously).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReplicaId(String);

/// Why a replica id was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("replica_id `{given}` is not valid: {reason}")]
pub struct ReplicaIdError {
    pub given: String,
    pub reason: &'static str,
}

impl ReplicaId {
    pub fn parse(given: &str) -> Result<Self, ReplicaIdError> {
        let refuse = |reason| ReplicaIdError {
            given: given.to_string(),
            reason,
        };
        if given.is_empty() || given.len() > MAX_REPLICA_LEN {
            return Err(refuse("it must be 1 to 32 characters long"));
        }
        if !given
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
        {
            return Err(refuse(
                "only lower-case letters, digits and `-` are allowed",
            ));
        }
        if given.starts_with('-') {
            return Err(refuse("it must start with a letter or a digit"));
        }
        Ok(Self(given.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `decisions-000001.jsonl` for sequence 1 without a replica id (more digits once past
/// 999999), `decisions-a-000001.jsonl` for replica `a`.
pub fn log_file_name(replica: Option<&ReplicaId>, sequence: u64) -> String {
    match replica {
        None => format!("{PREFIX}{sequence:06}{SUFFIX}"),
        Some(replica) => format!("{PREFIX}{}-{sequence:06}{SUFFIX}", replica.as_str()),
    }
}

/// The replica (if any) and sequence number of a log file name, `None` for any other name.
pub fn parse_log_name(name: &str) -> Option<(Option<ReplicaId>, u64)> {
    let stem = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let (replica, digits) = match stem.rsplit_once('-') {
        None => (None, stem),
        Some((replica, digits)) => (Some(ReplicaId::parse(replica).ok()?), digits),
    };
    if digits.len() < 6 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    Some((replica, digits.parse().ok()?))
}

/// The sequence number of a log file name without a replica id, `None` for any other name.
pub fn parse_sequence(name: &str) -> Option<u64> {
    match parse_log_name(name)? {
        (None, sequence) => Some(sequence),
        (Some(_), _) => None,
    }
}

/// One replica's log files directly in `dir` (those without an id for `None`), sorted by
/// sequence number. A writer lists only these, so it never touches another replica's files.
pub fn sequence_files(
    dir: &Path,
    replica: Option<&ReplicaId>,
) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut files: Vec<(u64, PathBuf)> = all_log_files(dir)?
        .into_iter()
        .filter(|(owner, _, _)| owner.as_ref() == replica)
        .map(|(_, sequence, path)| (sequence, path))
        .collect();
    files.sort();
    Ok(files)
}

/// Every replica's log files directly in `dir`, sorted by replica (files without an id first),
/// then sequence number.
pub fn all_log_files(dir: &Path) -> std::io::Result<Vec<(Option<ReplicaId>, u64, PathBuf)>> {
    let mut files: Vec<(Option<ReplicaId>, u64, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let (replica, sequence) = parse_log_name(name.to_str()?)?;
            Some((replica, sequence, entry.path()))
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_six_digits_and_parse_back() {
        assert_eq!(log_file_name(None, 1), "decisions-000001.jsonl");
        assert_eq!(log_file_name(None, 1_000_000), "decisions-1000000.jsonl");
        assert_eq!(parse_sequence("decisions-000042.jsonl"), Some(42));
        assert_eq!(parse_sequence("decisions-1000000.jsonl"), Some(1_000_000));
    }

    #[test]
    fn other_names_are_not_log_files() {
        for name in [
            "decisions-00001.jsonl",
            "decisions-00000a.jsonl",
            "decisions-000001.json",
            "decision-000001.jsonl",
            "decisions-+00001.jsonl",
            "",
        ] {
            assert_eq!(parse_sequence(name), None, "{name}");
        }
    }

    #[test]
    fn listing_sorts_by_sequence_and_skips_other_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "decisions-000010.jsonl",
            "decisions-000002.jsonl",
            "notes.txt",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let files = sequence_files(dir.path(), None).unwrap();
        let sequences: Vec<u64> = files.iter().map(|(sequence, _)| *sequence).collect();
        assert_eq!(sequences, vec![2, 10]);
    }

    #[test]
    fn replica_names_parse_back_and_are_not_unnamed_files() {
        let a = ReplicaId::parse("replica-a").unwrap();
        assert_eq!(
            log_file_name(Some(&a), 7),
            "decisions-replica-a-000007.jsonl"
        );
        assert_eq!(
            parse_log_name("decisions-replica-a-000007.jsonl"),
            Some((Some(a), 7))
        );
        assert_eq!(parse_sequence("decisions-replica-a-000007.jsonl"), None);
        assert_eq!(parse_log_name("decisions-Replica-000007.jsonl"), None);
    }

    #[test]
    fn bad_replica_ids_are_refused_naming_the_field() {
        let long = "a".repeat(33);
        for given in ["", "A", "a_b", "-a", "a/b", long.as_str()] {
            let error = ReplicaId::parse(given).unwrap_err();
            assert!(error.to_string().starts_with("replica_id `"), "{error}");
        }
        assert!(ReplicaId::parse("eu-1").is_ok());
    }

    #[test]
    fn a_replica_lists_only_its_own_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "decisions-000001.jsonl",
            "decisions-a-000001.jsonl",
            "decisions-a-000002.jsonl",
            "decisions-b-000005.jsonl",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let a = ReplicaId::parse("a").unwrap();
        let own: Vec<u64> = sequence_files(dir.path(), Some(&a))
            .unwrap()
            .iter()
            .map(|(sequence, _)| *sequence)
            .collect();
        assert_eq!(own, vec![1, 2]);
        assert_eq!(sequence_files(dir.path(), None).unwrap().len(), 1);
        assert_eq!(all_log_files(dir.path()).unwrap().len(), 4);
    }
}
