use std::path::Path;
use std::time::Duration;

use super::*;
use crate::audit::chain::checkpoint::Checkpoints;
use crate::audit::chain::key::CheckpointKey;
use crate::audit::files::sequence_files;
use crate::audit::writer::{DecisionLog, Durability, LogOptions};
use crate::audit::Record;

fn record(id: u32) -> Record {
    let line = format!(
        r#"{{"v":1,"kind":"outcome","id":"o{id:03}","time":"t","decision_id":"d","status":"ok","error_kind":null}}"#
    );
    Record::Outcome(serde_json::from_str(&line).unwrap())
}

fn key() -> CheckpointKey {
    CheckpointKey::from_seed([3; 32])
}

/// Writes `count` records (checkpoints every 4, files of about 6 lines).
fn write(dir: &Path, count: u32) {
    let line = record(0).to_line().unwrap().len() as u64 + 90;
    let options = LogOptions {
        durability: Durability::None,
        max_file_bytes: 6 * line,
        checkpoints: Some(Checkpoints {
            key: key(),
            every_records: 4,
            interval: Duration::from_secs(3600),
        }),
        ..LogOptions::default()
    };
    let log = DecisionLog::open(dir, options).unwrap();
    for id in 0..count {
        log.append_blocking(&record(id)).unwrap();
    }
}

fn kinds(dir: &Path) -> Vec<FindingKind> {
    let report = verify(&[dir.to_path_buf()], &[key().signing().verifying_key()]).unwrap();
    report
        .findings
        .iter()
        .map(|finding| finding.kind)
        .filter(|kind| kind.is_tampering())
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    sequence_files(dir, None)
        .unwrap()
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

fn edit_lines(path: &Path, change: impl FnOnce(&mut Vec<String>)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    change(&mut lines);
    std::fs::write(
        path,
        lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
    )
    .unwrap();
}

#[test]
fn an_untouched_log_verifies_across_files_restarts_and_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 10);
    write(dir.path(), 5);
    assert!(files(dir.path()).len() > 2);
    let report = verify(
        &[dir.path().to_path_buf()],
        &[key().signing().verifying_key()],
    )
    .unwrap();
    assert!(!report.tampered(), "{:?}", report.findings);
    assert!(report.chains[0].checkpoints >= 4, "{:?}", report.chains);
    assert!(
        report.findings.is_empty(),
        "closing signs the rest: {:?}",
        report.findings
    );
}

/// Changes a log's files in one way.
type Tamper = Box<dyn Fn(&Path)>;

#[test]
fn each_kind_of_tampering_is_named() {
    let cases: Vec<(&str, FindingKind, Tamper)> = vec![
        (
            "delete",
            FindingKind::Deleted,
            Box::new(|dir| {
                edit_lines(&files(dir)[0], |lines| {
                    lines.remove(1);
                })
            }),
        ),
        (
            "insert",
            FindingKind::Inserted,
            Box::new(|dir| {
                edit_lines(&files(dir)[0], |lines| {
                    let copy = lines[1].clone();
                    lines.insert(2, copy);
                })
            }),
        ),
        (
            "change",
            FindingKind::Changed,
            Box::new(|dir| {
                edit_lines(&files(dir)[0], |lines| {
                    lines[1] = lines[1].replace("\"status\":\"ok\"", "\"status\":\"error\"");
                })
            }),
        ),
        (
            "reorder",
            FindingKind::Reordered,
            Box::new(|dir| edit_lines(&files(dir)[0], |lines| lines.swap(1, 2))),
        ),
        (
            "missing file",
            FindingKind::MissingFile,
            Box::new(|dir| std::fs::remove_file(&files(dir)[1]).unwrap()),
        ),
        (
            "truncated",
            FindingKind::TruncatedTail,
            Box::new(|dir| {
                let last = files(dir).pop().unwrap();
                let bytes = std::fs::read(&last).unwrap();
                std::fs::write(&last, &bytes[..bytes.len() - 20]).unwrap();
            }),
        ),
        (
            "foreign key",
            FindingKind::UnknownKey,
            Box::new(|dir| {
                // The whole log rewritten and signed with another key.
                for path in files(dir) {
                    std::fs::remove_file(path).unwrap();
                }
                let options = LogOptions {
                    durability: Durability::None,
                    checkpoints: Some(Checkpoints {
                        key: CheckpointKey::from_seed([9; 32]),
                        every_records: 4,
                        interval: Duration::from_secs(3600),
                    }),
                    ..LogOptions::default()
                };
                let log = DecisionLog::open(dir, options).unwrap();
                log.append_blocking(&record(1)).unwrap();
            }),
        ),
    ];
    for (name, expected, tamper) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 12);
        assert_eq!(kinds(dir.path()), vec![], "{name}: before");
        tamper(dir.path());
        let found = kinds(dir.path());
        assert_eq!(found.first(), Some(&expected), "{name}: {found:?}");
    }
}

#[test]
fn a_torn_tail_recorded_at_restart_is_a_note_not_tampering() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), 3);
    let last = files(dir.path()).pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    bytes.extend_from_slice(b"{\"v\":1,\"kind\":\"outc");
    std::fs::write(&last, &bytes).unwrap();
    assert_eq!(kinds(dir.path()), vec![FindingKind::TruncatedTail]);
    write(dir.path(), 2);
    let report = verify(&[dir.path().to_path_buf()], &[]).unwrap();
    assert!(!report.tampered(), "{:?}", report.findings);
    assert!(report
        .findings
        .iter()
        .any(|finding| finding.kind == FindingKind::TornTailRecorded));
}

#[test]
fn old_unchained_records_verify_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let old = record(0).to_line().unwrap();
    std::fs::write(
        dir.path().join("decisions-000001.jsonl"),
        [&old[..], &old[..]].concat(),
    )
    .unwrap();
    write(dir.path(), 2);
    let report = verify(&[dir.path().to_path_buf()], &[]).unwrap();
    assert!(!report.tampered(), "{:?}", report.findings);
    assert_eq!(report.findings[0].kind, FindingKind::Unchained);
}
