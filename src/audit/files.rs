//! audit::files: the naming of log files (`decisions-<6-digit sequence>.jsonl`) and listing a
//! directory's log files in sequence order. It must not read or write their contents.

use std::path::{Path, PathBuf};

const PREFIX: &str = "decisions-";
const SUFFIX: &str = ".jsonl";

/// `decisions-000001.jsonl` for sequence 1 (more digits once past 999999).
pub fn log_file_name(sequence: u64) -> String {
    format!("{PREFIX}{sequence:06}{SUFFIX}")
}

/// The sequence number of a log file name, `None` for any other name.
pub fn parse_sequence(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    if digits.len() < 6 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The log files directly in `dir`, sorted by sequence number.
pub fn sequence_files(dir: &Path) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let sequence = parse_sequence(name.to_str()?)?;
            Some((sequence, entry.path()))
        })
        .collect();
    files.sort();
    Ok(files)
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
    fn names_have_six_digits_and_parse_back() {
        assert_eq!(log_file_name(1), "decisions-000001.jsonl");
        assert_eq!(log_file_name(1_000_000), "decisions-1000000.jsonl");
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
        let files = sequence_files(dir.path()).unwrap();
        let sequences: Vec<u64> = files.iter().map(|(sequence, _)| *sequence).collect();
        assert_eq!(sequences, vec![2, 10]);
    }
}
