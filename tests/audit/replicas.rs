//! Issue 37 §2 through the binary: several replicas' logs read as one, merged by decision time
//! (`askgate log`, `askgate replay`); the commands that read a log say when its hash chain does
//! not hold; `askgate log verify --from/--to` checks the files of a window of a rotated log.

use std::path::{Path, PathBuf};

use askgate::audit::{DecisionLog, DecisionRecord, Durability, LogOptions, Record, Verdict};
use serde_json::Value;

use super::{askgate, corpus_records, records_in, write_lines};
use crate::support::baseline_snapshot;

/// A corpus decision as logged at second `second` of 10:00, with id `d<second>`; `flipped`
/// logs another outcome than the policies give, so replay reports it as a change.
fn decision_at(template: &DecisionRecord, second: usize, flipped: bool) -> Record {
    let mut record = template.clone();
    record.id = format!("d{second}");
    record.time = format!("2026-12-01T10:00:{second:02}.000Z");
    if flipped {
        record.decision = match record.decision {
            Verdict::Deny => Verdict::Allow,
            _ => Verdict::Deny,
        };
    }
    Record::Decision(Box::new(record))
}

fn template() -> DecisionRecord {
    corpus_records(&baseline_snapshot())
        .into_iter()
        .next()
        .expect("a corpus decision")
}

#[test]
fn i37_several_replicas_logs_read_as_one_by_decision_time() {
    let template = template();
    let dir = tempfile::tempdir().unwrap();
    let at = |seconds: &[usize]| -> Vec<Record> {
        seconds
            .iter()
            .map(|second| decision_at(&template, *second, true))
            .collect()
    };
    // Replica a logged the even seconds, b the odd ones, each in two files.
    write_lines(&dir.path().join("decisions-a-000001.jsonl"), &at(&[0, 2]));
    write_lines(&dir.path().join("decisions-a-000002.jsonl"), &at(&[4, 6]));
    write_lines(
        &dir.path().join("decisions-b-000001.jsonl"),
        &at(&[1, 3, 5]),
    );
    write_lines(&dir.path().join("decisions-b-000002.jsonl"), &at(&[7]));
    let expected: Vec<String> = (0..8).map(|second| format!("d{second}")).collect();

    let (records, problems) = records_in(&[dir.path().to_path_buf()]);
    assert!(problems.is_empty(), "{problems:?}");
    let ids: Vec<String> = records.iter().map(|r| r.id().to_string()).collect();
    assert_eq!(ids, expected);

    let log = dir.path().to_str().unwrap();
    let (code, stdout, stderr) = askgate(&["log", "tail", log, "-n", "8"]);
    assert_eq!(code, 0, "{stderr}");
    let tail: Vec<String> = stdout
        .lines()
        .map(|line| line.rsplit(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(tail, expected, "{stdout}");
    // Unchained lines are no broken chain.
    assert!(!stderr.contains("chain"), "{stderr}");

    let (code, stdout, stderr) = askgate(&["replay", log, "--format", "json"]);
    assert_eq!(code, 5, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let changed: Vec<&str> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["id"].as_str().unwrap())
        .collect();
    assert_eq!(changed, expected, "changes in decision time order");
}

/// `count` decisions (seconds 0, 1, …) written by the real writer into `dir`, chained, in
/// files of at most `max_file_bytes`.
fn chained_log(dir: &Path, count: usize, max_file_bytes: u64) -> Vec<PathBuf> {
    let template = template();
    let options = LogOptions {
        durability: Durability::None,
        max_file_bytes,
        ..LogOptions::default()
    };
    let log = DecisionLog::open(dir, options).unwrap();
    for second in 0..count {
        log.append_blocking(&decision_at(&template, second, false))
            .unwrap();
    }
    drop(log);
    askgate::audit::log_files(&[dir.to_path_buf()]).unwrap()
}

/// Changes the id of decision `id` in `file` (same length: the line stays a valid record).
fn tamper(file: &Path, id: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let from = format!("\"id\":\"{id}\"");
    assert!(text.contains(&from), "{id} in {}", file.display());
    let to = format!("\"id\":\"{}\"", id.replace('d', "x"));
    std::fs::write(file, text.replacen(&from, &to, 1)).unwrap();
}

#[test]
fn i37_log_and_replay_say_when_the_chain_does_not_hold() {
    let dir = tempfile::tempdir().unwrap();
    chained_log(dir.path(), 6, 64 * 1024 * 1024);
    let log = dir.path().to_str().unwrap();
    let (code, _, stderr) = askgate(&["log", "tail", log]);
    assert_eq!(code, 0);
    assert!(!stderr.contains("warning"), "a whole chain: {stderr}");

    let files = askgate::audit::log_files(&[dir.path().to_path_buf()]).unwrap();
    tamper(&files[0], "d2");
    let (code, stdout, stderr) = askgate(&["log", "tail", log]);
    assert_eq!(code, 0, "the log is still read");
    assert_eq!(stdout.lines().count(), 6);
    assert!(
        stderr.contains("warning: the log's hash chain does not hold: changed at")
            && stderr.contains("askgate log verify"),
        "{stderr}"
    );
    let (code, stdout, stderr) = askgate(&["replay", log, "--format", "json"]);
    assert_eq!(code, 0, "nothing changed on replay: {stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("hash chain does not hold")),
        "{warnings:?}"
    );
    assert!(stderr.contains("hash chain does not hold"), "{stderr}");
}

/// The `time` of the first line of `file`.
fn first_time(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    line["time"].as_str().unwrap().to_string()
}

#[test]
fn i37_log_verify_from_to_checks_the_files_of_the_window() {
    let dir = tempfile::tempdir().unwrap();
    // About two records per file.
    let files = chained_log(dir.path(), 8, 5 * 1024);
    assert!(files.len() >= 3, "{} files", files.len());
    let log = dir.path().to_str().unwrap();
    let verify = |extra: &[&str]| {
        let mut args = vec!["log", "verify", log];
        args.extend_from_slice(extra);
        askgate(&args)
    };
    let (code, stdout, _) = verify(&[]);
    assert_eq!(code, 0, "{stdout}");

    // A record changed in the first file: found by a whole check, outside a window that starts
    // with the second file, whose chain into the first is a note.
    let first = std::fs::read_to_string(&files[0]).unwrap();
    let first_id = serde_json::from_str::<Value>(first.lines().next().unwrap()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    tamper(&files[0], &first_id);
    let (code, stdout, _) = verify(&[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("TAMPERED changed"), "{stdout}");
    let from = first_time(&files[1]);
    let (code, stdout, _) = verify(&["--from", &from]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("note starts-late") && stdout.contains("--from/--to window"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{} file(s)", files.len() - 1)),
        "{stdout}"
    );

    // On a fresh log: a record changed in the file before the last, outside a window that ends
    // with the file before it.
    let other = tempfile::tempdir().unwrap();
    let files = chained_log(other.path(), 8, 5 * 1024);
    let changed = &files[files.len() - 2];
    let text = std::fs::read_to_string(changed).unwrap();
    let id = serde_json::from_str::<Value>(text.lines().next().unwrap()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    tamper(changed, &id);
    let to = first_time(&files[files.len() - 3]);
    let other_log = other.path().to_str().unwrap();
    let (code, stdout, _) = askgate(&["log", "verify", other_log, "--to", &to]);
    assert_eq!(code, 0, "{stdout}");
    let (code, stdout, _) = askgate(&["log", "verify", other_log]);
    assert_eq!(code, 1, "{stdout}");

    let (code, _, stderr) = verify(&[
        "--from",
        "2026-12-02T00:00:00Z",
        "--to",
        "2026-12-01T00:00:00Z",
    ]);
    assert_eq!((code, stderr.trim()), (2, "--from must not be after --to"));
    let (code, _, stderr) = verify(&["--from", "yesterday"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not an RFC 3339 time"), "{stderr}");
}
