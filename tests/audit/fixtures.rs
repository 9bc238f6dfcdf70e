//! The committed decision logs of every past record format (`tests/fixtures/log-v<N>/`) must
//! decode without one problem line and replay on today's baseline, forever after: a change that
//! breaks an old log fails here. `serve/` was written by `askgate serve` through real HTTP
//! (allow, ask, deny, approvals approved and refused, outcomes); `corpus/` holds one decision
//! of each distinct (tool, operation, decision, policies, approval) of the scenario corpus, so
//! every context shape is covered. What replay says is snapshotted: a policy change that moves
//! an old decision on purpose shows up in the snapshot's diff. `log-v2/serve` is a real serve's
//! file as written (chained, with its signed checkpoint); `log-v2/corpus` holds the records of
//! `log-v1/corpus` as format 2 writes them, so the two formats are compared record for record.

use std::path::{Path, PathBuf};

use askgate::audit::{read_log, replay, LogLine, LogText, Record, ReplaySets};
use serde_json::json;

use crate::support::baseline_snapshot;

/// Every format a released build has written; add the next one, never remove one.
const FORMATS: &[&str] = &["log-v1", "log-v2"];
const SETS: &[&str] = &["serve", "corpus"];

fn fixture(format: &str, set: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format)
        .join(set)
}

/// Counts of each record kind; panics on the first problem line.
fn decode_all(dir: &Path) -> (usize, usize, usize) {
    let (mut decisions, mut approvals, mut outcomes) = (0, 0, 0);
    for line in read_log(&[dir.to_path_buf()]).unwrap() {
        match line {
            LogLine::Record(Record::Decision(_)) => decisions += 1,
            LogLine::Record(Record::Approval(_)) => approvals += 1,
            LogLine::Record(Record::Outcome(_)) => outcomes += 1,
            LogLine::Problem(problem) => panic!("{}: {problem:?}", dir.display()),
        }
    }
    (decisions, approvals, outcomes)
}

#[test]
fn every_committed_log_format_decodes_and_replays() {
    let snapshot = baseline_snapshot();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for format in FORMATS {
        for set in SETS {
            let dir = fixture(format, set);
            let (decisions, approvals, outcomes) = decode_all(&dir);
            assert!(decisions > 0, "{}", dir.display());
            let file = dir.join("decisions-000001.jsonl");
            let logs = [LogText {
                file: format!("{format}/{set}"),
                bytes: std::fs::read(&file).unwrap(),
            }];
            let report = replay(
                &logs,
                &ReplaySets {
                    live: &snapshot,
                    hook: &snapshot,
                },
                2,
            );
            assert!(report.problems.is_empty(), "{:?}", report.problems);
            assert_eq!(report.decisions, decisions);
            assert_eq!(report.records, decisions + approvals + outcomes);
            let transitions: Vec<_> = report
                .transitions
                .iter()
                .filter(|cell| cell.count > 0)
                .collect();
            let changes: Vec<_> = report
                .changes
                .iter()
                .map(|change| {
                    json!({"line": change.line_number, "operation": change.operation,
                           "old": change.old, "new": change.new})
                })
                .collect();
            let summary = json!({
                "decisions": decisions, "approvals": approvals, "outcomes": outcomes,
                "transitions": transitions, "changes": changes,
            });
            settings.bind(|| insta::assert_json_snapshot!(format!("{format}-{set}"), summary));
        }
    }
}

/// The lines of a committed log that are records (chain fields split off, the log's own
/// checkpoints and notes left out), as written.
fn record_lines(format: &str, set: &str) -> Vec<String> {
    let file = fixture(format, set).join("decisions-000001.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    text.lines()
        .filter(|line| !askgate::audit::chain::notes::is_log_own(line.as_bytes()))
        .map(|line| match askgate::audit::chain::split(line.as_bytes()) {
            Some((record, _)) => String::from_utf8(record).unwrap(),
            None => line.to_string(),
        })
        .collect()
}

/// The wire types still are format 2 as the fixtures hold it: every line decodes and re-encodes
/// to the same bytes, so no record field was renamed, dropped or reordered (the context is kept
/// as its JSON object, so a fact added to it is not a change here).
#[test]
fn todays_records_encode_as_the_v2_fixture_lines() {
    for set in SETS {
        for (number, line) in record_lines("log-v2", set).iter().enumerate() {
            let record = askgate::audit::reader::parse_record(line.as_bytes()).unwrap();
            let encoded = record.to_line().unwrap();
            assert_eq!(
                String::from_utf8_lossy(&encoded).trim_end(),
                line,
                "{set} line {}",
                number + 1
            );
        }
    }
}

/// Format 2 leaves out only what format 1 said twice or said empty: each format 1 corpus record
/// and its format 2 line decode to the same record, and the format 2 line is shorter.
#[test]
fn format_2_records_are_format_1_records_without_what_they_repeat() {
    let old = record_lines("log-v1", "corpus");
    let new = record_lines("log-v2", "corpus");
    assert_eq!(old.len(), new.len());
    for (number, (old, new)) in old.iter().zip(&new).enumerate() {
        let mut from_old = askgate::audit::reader::parse_record(old.as_bytes()).unwrap();
        let from_new = askgate::audit::reader::parse_record(new.as_bytes()).unwrap();
        match &mut from_old {
            Record::Decision(record) => record.v = askgate::audit::record::Version::V2,
            Record::Approval(record) => record.v = askgate::audit::record::Version::V2,
            Record::Outcome(record) => record.v = askgate::audit::record::Version::V2,
        }
        assert_eq!(from_old, from_new, "corpus line {}", number + 1);
        assert!(new.len() < old.len(), "corpus line {}", number + 1);
    }
}

/// The committed real serve's log verifies whole against the key it was signed with.
#[test]
fn the_committed_v2_serve_log_verifies() {
    let key = askgate::audit::chain::key::parse_public(V2_SERVE_KEY).unwrap();
    let report =
        askgate::audit::chain::verify::verify(&[fixture("log-v2", "serve")], &[key]).unwrap();
    assert!(!report.tampered(), "{:?}", report.findings);
    assert_eq!(report.chains.len(), 1);
    assert_eq!(report.chains[0].checkpoints, 1);
}

/// The public key of the replica that wrote `log-v2/serve` (its private key was not kept).
const V2_SERVE_KEY: &str = "b619bfa6a9864a90eb24e758abed86e265606a6c314f40d97c9a4c5ed7ae4b09";
