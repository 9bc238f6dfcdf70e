//! The committed decision logs of every past record format (`tests/fixtures/log-v<N>/`) must
//! decode without one problem line and replay on today's baseline, forever after: a change that
//! breaks an old log fails here. `serve/` was written by `askgate serve` through real HTTP
//! (allow, ask, deny, approvals approved and refused, outcomes); `corpus/` holds one decision
//! of each distinct (tool, operation, decision, policies, approval) of the scenario corpus, so
//! every context shape is covered. What replay says is snapshotted: a policy change that moves
//! an old decision on purpose shows up in the snapshot's diff.

use std::path::{Path, PathBuf};

use askgate::audit::{read_log, replay, LogLine, LogText, Record, ReplaySets};
use serde_json::json;

use crate::support::baseline_snapshot;

/// Every format a released build has written; add the next one, never remove one.
const FORMATS: &[&str] = &["log-v1"];
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

/// The wire types still are format 1 as the fixtures hold it: every line decodes and re-encodes
/// to the same bytes, so no record field was renamed, dropped or reordered (the context is kept
/// as its JSON object, so a fact added to it is not a change here).
#[test]
fn todays_records_encode_as_the_v1_fixture_lines() {
    for set in SETS {
        let file = fixture("log-v1", set).join("decisions-000001.jsonl");
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
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
