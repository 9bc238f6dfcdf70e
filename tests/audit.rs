//! The decision log end to end: records built from corpus scenarios, the group-commit writer,
//! the reader's problem reports, replay and `askgate log` through the binary.

mod fixtures;
mod replicas;

use std::path::{Path, PathBuf};
use std::process::Command;

use askgate::audit::reader::parse_record;
use askgate::audit::record::{format_time, REDACTED};
use askgate::audit::{
    read_log, replay, ApprovalAction, ApprovalRecord, DecisionLog, DecisionOrigin, DecisionRecord,
    Durability, LogLine, LogOptions, LogText, OutcomeRecord, OutcomeStatus, ProblemKind, Record,
    ReplaySets, Verdict,
};
use askgate::authz::{decide, PolicySnapshot};
use askgate::scenario::run::gather;
use askgate::scenario::Scenario;
use serde_json::{json, Value};
use time::macros::datetime;

use crate::support::{baseline_snapshot, corpus_files, load_scenario};

const SECRET: &str = "sk-ant-oat01-SECRET-do-not-log";

fn record_of(scenario: &Scenario, id: &str, snapshot: &PolicySnapshot) -> Option<DecisionRecord> {
    let facts = gather(scenario).ok()?.ok()?;
    let decision = decide(&facts, snapshot);
    let origin = DecisionOrigin {
        id: id.to_string(),
        time: datetime!(2026-11-30 10:00:00.123 UTC),
        account: "acct-1".to_string(),
        session: format!("session-{}", id.len() % 3),
        tool_use_id: None,
    };
    DecisionRecord::new(origin, &facts, &decision).ok()
}

/// Decision records of every corpus scenario that runs on the baseline alone.
fn corpus_records(snapshot: &PolicySnapshot) -> Vec<DecisionRecord> {
    corpus_files()
        .iter()
        .map(|path| load_scenario(path))
        .filter(|scenario| scenario.policy_files.is_empty())
        .enumerate()
        .filter_map(|(index, scenario)| record_of(&scenario, &format!("d-{index:04}"), snapshot))
        .collect()
}

fn approval(decision_id: &str) -> Record {
    Record::Approval(ApprovalRecord {
        v: askgate::audit::record::Version::CURRENT,
        kind: Default::default(),
        id: format!("a-{decision_id}"),
        time: format_time(datetime!(2026-11-30 10:00:01 UTC)),
        decision_id: decision_id.to_string(),
        approval_id: "ap-1".to_string(),
        action: ApprovalAction::Approved,
        by: "admin@example.com".to_string(),
        note: None,
        call: Some(format!("sha256:{}", "ab".repeat(32))),
    })
}

fn outcome(decision_id: &str, status: OutcomeStatus) -> Record {
    Record::Outcome(OutcomeRecord {
        v: askgate::audit::record::Version::CURRENT,
        kind: Default::default(),
        id: format!("o-{decision_id}"),
        time: format_time(datetime!(2026-11-30 10:00:02 UTC)),
        decision_id: decision_id.to_string(),
        status,
        error_kind: (status == OutcomeStatus::Error).then(|| "upstream_5xx".to_string()),
    })
}

fn write_lines(path: &Path, records: &[Record]) {
    let mut bytes = Vec::new();
    for record in records {
        bytes.extend(record.to_line().unwrap());
    }
    std::fs::write(path, bytes).unwrap();
}

fn askgate(args: &[&str]) -> (u8, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .output()
        .expect("askgate runs");
    (
        u8::try_from(output.status.code().unwrap_or(-1)).unwrap_or(255),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn records_in(paths: &[PathBuf]) -> (Vec<Record>, Vec<askgate::audit::Problem>) {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    for line in read_log(paths).unwrap() {
        match line {
            LogLine::Record(record) => records.push(record),
            LogLine::Problem(problem) => problems.push(problem),
        }
    }
    (records, problems)
}

#[test]
fn every_record_kind_round_trips_through_one_line() {
    let snapshot = baseline_snapshot();
    let decisions = corpus_records(&snapshot);
    assert!(decisions.len() > 300, "{}", decisions.len());
    for decision in decisions.into_iter().take(100) {
        let record = Record::Decision(Box::new(decision));
        let line = record.to_line().unwrap();
        assert_eq!(line.last(), Some(&b'\n'));
        assert!(line.starts_with(br#"{"v":2,"kind":"decision","id":""#));
        let text = line.strip_suffix(b"\n").unwrap();
        assert_eq!(parse_record(text).unwrap(), record);
    }
    for record in [approval("d-1"), outcome("d-1", OutcomeStatus::Error)] {
        let line = record.to_line().unwrap();
        assert_eq!(
            parse_record(line.strip_suffix(b"\n").unwrap()).unwrap(),
            record
        );
    }
}

#[test]
fn group_commit_keeps_every_acknowledged_line_across_rotations() {
    let dir = tempfile::tempdir().unwrap();
    let options = LogOptions {
        max_file_bytes: 16 * 1024,
        durability: Durability::Fsync,
        ..LogOptions::default()
    };
    let log = DecisionLog::open(dir.path(), options).unwrap();
    let acknowledged: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|thread| {
                let log = &log;
                scope.spawn(move || {
                    (0..500)
                        .map(|index| {
                            let record = approval(&format!("t{thread}-{index}"));
                            log.append_blocking(&record).unwrap();
                            record.id().to_string()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    });
    drop(log);
    let (records, problems) = records_in(&[dir.path().to_path_buf()]);
    assert!(problems.is_empty(), "{problems:?}");
    let mut found: Vec<String> = records.iter().map(|r| r.id().to_string()).collect();
    let mut expected = acknowledged;
    found.sort();
    expected.sort();
    assert_eq!(found, expected);
    let files = askgate::audit::log_files(&[dir.path().to_path_buf()]).unwrap();
    assert!(files.len() > 10, "{} files", files.len());
    for file in files {
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size <= 16 * 1024, "{} has {size} bytes", file.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn async_append_is_durable_when_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let log = DecisionLog::open(dir.path(), LogOptions::default()).unwrap();
    log.append(&approval("d-async")).await.unwrap();
    let (records, _) = records_in(&[dir.path().to_path_buf()]);
    assert_eq!(records, vec![approval("d-async")]);
}

#[test]
fn a_torn_tail_is_reported_and_new_lines_start_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = DecisionLog::open(dir.path(), LogOptions::default()).unwrap();
    log.append_blocking(&approval("d-1")).unwrap();
    drop(log);
    let first = dir.path().join("decisions-000001.jsonl");
    // A complete, valid record cut off just before its newline: still torn, never a record.
    let mut bytes = std::fs::read(&first).unwrap();
    bytes.extend(
        approval("d-2")
            .to_line()
            .unwrap()
            .strip_suffix(b"\n")
            .unwrap(),
    );
    std::fs::write(&first, bytes).unwrap();

    let log = DecisionLog::open(dir.path(), LogOptions::default()).unwrap();
    log.append_blocking(&approval("d-3")).unwrap();
    drop(log);
    assert!(dir.path().join("decisions-000002.jsonl").exists());
    let (records, problems) = records_in(&[dir.path().to_path_buf()]);
    assert_eq!(records, vec![approval("d-1"), approval("d-3")]);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].kind, ProblemKind::Torn);
    assert_eq!(problems[0].line_number, 2);
}

#[test]
fn an_unusable_directory_is_an_error_and_the_log_recovers() {
    let dir = tempfile::tempdir().unwrap();
    // Root ignores permission bits, so "unwritable" is a directory path under a regular file.
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "").unwrap();
    assert!(DecisionLog::open(&blocker.join("log"), LogOptions::default()).is_err());

    // Every append rotates (tiny limit), so each one opens a file in `logs`.
    let logs = dir.path().join("logs");
    let options = LogOptions {
        max_file_bytes: 1,
        durability: Durability::Fsync,
        first_retry: std::time::Duration::ZERO,
        ..LogOptions::default()
    };
    let log = DecisionLog::open(&logs, options).unwrap();
    log.append_blocking(&approval("d-1")).unwrap();
    let aside = dir.path().join("aside");
    std::fs::rename(&logs, &aside).unwrap();
    std::fs::write(&logs, "").unwrap();
    let error = log.append_blocking(&approval("d-2")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("cannot write the decision log"),
        "{error}"
    );
    std::fs::remove_file(&logs).unwrap();
    std::fs::rename(&aside, &logs).unwrap();
    log.append_blocking(&approval("d-3")).unwrap();
    drop(log);
    let (records, problems) = records_in(&[logs]);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(records, vec![approval("d-1"), approval("d-3")]);
}

#[test]
fn a_full_disk_is_an_error_and_the_next_file_recovers() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The current file writes to /dev/full (ENOSPC, even for root).
    std::os::unix::fs::symlink("/dev/full", dir.path().join("decisions-000001.jsonl")).unwrap();
    let options = LogOptions {
        first_retry: std::time::Duration::ZERO,
        ..LogOptions::default()
    };
    let log = DecisionLog::open(dir.path(), options).unwrap();
    let error = log.append_blocking(&approval("d-1")).unwrap_err();
    assert!(
        error.to_string().contains("decisions-000001.jsonl"),
        "{error}"
    );
    // After an error the log moves on to a fresh file.
    log.append_blocking(&approval("d-2")).unwrap();
    drop(log);
    let (records, _) = records_in(&[dir.path().join("decisions-000002.jsonl")]);
    assert_eq!(records, vec![approval("d-2")]);
}

fn problem_log(dir: &Path, snapshot: &PolicySnapshot) -> PathBuf {
    let records = corpus_records(snapshot);
    let good = Record::Decision(Box::new(records[0].clone()));
    let line = String::from_utf8(good.to_line().unwrap()).unwrap();
    let mut value: Value = serde_json::from_str(&line).unwrap();
    value["v"] = json!(3);
    let foreign = value.to_string();
    value["v"] = json!(1);
    value["kind"] = json!("audit");
    let unknown = value.to_string();
    value["kind"] = json!("decision");
    value["extra"] = json!(true);
    let extra = value.to_string();
    let reordered = format!("{{\"id\":\"o-x\",\"kind\":\"outcome\",\"status\":\"ok\",\"error_kind\":null,\"decision_id\":\"{}\",\"time\":\"t\",\"v\":1}}", records[1].id);
    let text = [
        line.trim_end().to_string(),
        line.get(..line.len() / 2).unwrap().to_string(),
        foreign,
        unknown,
        extra,
        "not json at all".to_string(),
        reordered,
        String::new(),
        String::from_utf8(
            Record::Decision(Box::new(records[1].clone()))
                .to_line()
                .unwrap(),
        )
        .unwrap()
        .trim_end()
        .to_string(),
    ]
    .join("\n");
    let path = dir.join("problems.jsonl");
    std::fs::write(&path, format!("{text}\n{{\"v\":1,\"kind\":\"outc")).unwrap();
    path
}

#[test]
fn bad_lines_are_reported_by_line_number_and_replay_continues() {
    let snapshot = baseline_snapshot();
    let dir = tempfile::tempdir().unwrap();
    let path = problem_log(dir.path(), &snapshot);
    let (records, problems) = records_in(std::slice::from_ref(&path));
    assert_eq!(records.len(), 3);
    let found: Vec<(usize, ProblemKind)> =
        problems.iter().map(|p| (p.line_number, p.kind)).collect();
    assert_eq!(
        found,
        vec![
            (2, ProblemKind::Malformed),
            (3, ProblemKind::ForeignVersion),
            (4, ProblemKind::UnknownKind),
            (5, ProblemKind::Malformed),
            (6, ProblemKind::Malformed),
            (8, ProblemKind::Malformed),
            (10, ProblemKind::Torn),
        ]
    );
    let (code, stdout, _) = askgate(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("replayed 3 records (2 decisions)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("problems: 4 malformed, 1 foreign_version, 1 unknown_kind, 1 torn")
            || stdout.contains("problems: 1 torn, 4 malformed, 1 foreign_version, 1 unknown_kind"),
        "{stdout}"
    );
    assert!(stdout.contains("problems.jsonl:10: torn"), "{stdout}");
}

#[test]
fn random_bytes_never_panic_the_reader_or_replay() {
    let snapshot = baseline_snapshot();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut bytes = Vec::new();
    for _ in 0..200_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let byte = (state & 0xff) as u8;
        bytes.push(if byte % 23 == 0 { b'\n' } else { byte });
    }
    bytes.extend_from_slice(br#"{"v":1,"kind":"decision","facts":{"#);
    let logs = [LogText {
        file: "random".to_string(),
        bytes,
    }];
    let report = replay(
        &logs,
        &ReplaySets {
            live: &snapshot,
            hook: &snapshot,
        },
        3,
    );
    assert_eq!(report.records, 0);
    assert!(!report.problems.is_empty());
    assert_eq!(report.problems.last().unwrap().kind, ProblemKind::Torn);
}

fn write_corpus_log(dir: &Path, snapshot: &PolicySnapshot) -> (PathBuf, Vec<DecisionRecord>) {
    let records = corpus_records(snapshot);
    let mut lines: Vec<Record> = Vec::new();
    for record in &records {
        lines.push(Record::Decision(Box::new(record.clone())));
        lines.push(outcome(&record.id, OutcomeStatus::Ok));
    }
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    write_lines(&logs.join("decisions-000001.jsonl"), &lines);
    (logs, records)
}

#[test]
fn replay_on_the_same_policies_changes_nothing() {
    let snapshot = baseline_snapshot();
    let dir = tempfile::tempdir().unwrap();
    let (logs, records) = write_corpus_log(dir.path(), &snapshot);
    let (code, stdout, stderr) =
        askgate(&["replay", logs.to_str().unwrap(), "--jobs", "3", "--stats"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let expected = format!(
        "replayed {} records ({} decisions): 0 changed",
        records.len() * 2,
        records.len(),
    );
    assert!(stdout.starts_with(&expected), "{stdout}");
    // R1: the header names the snapshots that wrote the log and the ones that decide it now.
    assert!(
        stdout.contains(&format!("replayed on: live {}", snapshot.hash())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("logged by:   live {}", snapshot.hash())),
        "{stdout}"
    );
    assert!(!stdout.contains("warning:"), "{stdout}");
    assert!(stderr.contains("records/s"), "{stderr}");
}

#[test]
fn replay_on_a_changed_set_reports_the_transitions_and_exits_5() {
    let snapshot = baseline_snapshot();
    let dir = tempfile::tempdir().unwrap();
    let (logs, records) = write_corpus_log(dir.path(), &snapshot);
    let deletes = records
        .iter()
        .filter(|r| r.operation == "project_delete" && r.decision == Verdict::Allow)
        .count();
    assert!(deletes >= 2, "{deletes}");
    let managed = dir.path().join("managed");
    std::fs::create_dir_all(&managed).unwrap();
    std::fs::copy(
        "policies/examples/ask-project-delete.cedar",
        managed.join("ask-project-delete.cedar"),
    )
    .unwrap();
    let args = [
        "replay",
        logs.to_str().unwrap(),
        "--policies",
        managed.to_str().unwrap(),
        "--format",
        "json",
    ];
    let (code, stdout, stderr) = askgate(&args);
    assert_eq!(code, 5, "{stdout}{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let allow_to_ask = report["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|cell| cell["from"] == "allow" && cell["to"] == "ask")
        .unwrap();
    let allow_to_deny = report["transitions"][2]["count"].as_u64().unwrap();
    let allow_to_ask = allow_to_ask["count"].as_u64().unwrap();
    // Where no human can be asked (a non-interactive subagent) the new ask becomes a deny.
    assert!(allow_to_ask >= 2, "{allow_to_ask}");
    assert_eq!(allow_to_ask + allow_to_deny, deletes as u64);
    assert_eq!(report["changed"], json!(deletes));
    let changes = report["changes"].as_array().unwrap();
    assert!(changes
        .iter()
        .all(|change| change["operation"] == "project_delete"));
    assert!(changes.iter().any(|change| change["new"]["policies"]
        .as_array()
        .unwrap()
        .contains(&json!("example.ask-project-delete"))));
    let (code, table, _) = askgate(&[&args[..4], &["--only-changes"]].concat());
    assert_eq!(code, 5);
    assert!(
        table.lines().next().unwrap().contains("allow → ask"),
        "{table}"
    );
    assert!(
        table.contains("approval batch policies [example.ask-project-delete"),
        "{table}"
    );
}

#[test]
fn unreadable_input_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let (code, _, stderr) = askgate(&["replay", missing.to_str().unwrap()]);
    assert_eq!(code, 4);
    assert!(stderr.starts_with("cannot read the log"), "{stderr}");
    let (code, _, _) = askgate(&["log", "stats", missing.to_str().unwrap()]);
    assert_eq!(code, 4);
}

/// Scenarios whose every free-text input holds the secret; paths and project ids stay plain.
fn secret_scenarios() -> Vec<Value> {
    let design = |operation: &str, arguments: Value| {
        json!({"now": "2026-11-30T10:00:00Z", "state": {"consent": true},
               "call": {"tool": "ClaudeDesign", "input": {"operation": operation, "arguments": arguments}}})
    };
    let projects = |input: Value| {
        json!({"now": "2026-11-30T10:00:00Z", "environment": {"attached_project": "p-attached"},
               "call": {"tool": "Projects", "input": input}})
    };
    vec![
        design(
            "write_files",
            json!({"project_id": "p1", "plan_token": SECRET,
            "files": [{"path": "index.html", "data": SECRET, "encoding": "utf-8", "if_match": SECRET},
                      {"path": "b.html", "local_path": SECRET}]}),
        ),
        design(
            "delete_files",
            json!({"project_id": "p1", "plan_token": SECRET, "paths": ["old.html"]}),
        ),
        design(
            "copy_files",
            json!({"project_id": "p1", "plan_token": SECRET,
            "files": [{"src": "a.html", "dest": "b.html", "if_match": SECRET}]}),
        ),
        design(
            "create_support_js",
            json!({"project_id": "p1", "plan_token": SECRET, "path": "support.js", "if_match": SECRET}),
        ),
        design(
            "put_conversation",
            json!({"project_id": "p1", "title": SECRET,
            "messages": [{"role": "user", "content": SECRET}]}),
        ),
        design(
            "create_project",
            json!({"name": SECRET, "design_system_id": SECRET}),
        ),
        design(
            "add_member",
            json!({"project_id": "p1", "account_uuid": SECRET, "email": SECRET, "role": "viewer"}),
        ),
        design(
            "get_conversation",
            json!({"project_id": "p1", "chat_id": SECRET}),
        ),
        design(
            "render_preview",
            json!({"project_id": "p1", "path": "index.html", "render": SECRET, "validators": [SECRET]}),
        ),
        design(
            "get_claude_design_prompt",
            json!({"design_system_id": SECRET}),
        ),
        projects(json!({"method": "project_write", "path": "notes.md", "content": SECRET})),
        projects(json!({"method": "project_write", "path": "notes.md", "local_path": SECRET})),
        projects(json!({"method": "project_search", "query": SECRET})),
    ]
}

#[test]
fn redacted_no_token_in_any_input_field_reaches_the_log() {
    let snapshot = baseline_snapshot();
    let mut logged = 0;
    for (index, value) in secret_scenarios().into_iter().enumerate() {
        let scenario: Scenario = serde_json::from_value(value.clone()).unwrap();
        let facts = gather(&scenario).unwrap();
        let facts = facts.unwrap_or_else(|error| panic!("scenario {index} refused: {error:?}"));
        // The secret did reach the call's input; the record is what must not carry it.
        assert!(value.to_string().contains(SECRET));
        let record = record_of(&scenario, &format!("r-{index}"), &snapshot).unwrap();
        let line = String::from_utf8(
            Record::Decision(Box::new(record.clone()))
                .to_line()
                .unwrap(),
        )
        .unwrap();
        assert!(!line.contains("SECRET"), "scenario {index} leaked: {line}");
        if record.operation == "project_search" {
            assert!(line.contains(REDACTED));
            assert_ne!(
                serde_json::to_value(&facts)
                    .unwrap()
                    .to_string()
                    .find("SECRET"),
                None
            );
        }
        logged += 1;
    }
    assert_eq!(logged, 13);
}

#[test]
fn log_tail_show_and_stats_read_like_a_person_would() {
    let snapshot = baseline_snapshot();
    let dir = tempfile::tempdir().unwrap();
    let (logs, records) = write_corpus_log(dir.path(), &snapshot);
    let log = logs.to_str().unwrap();
    let last = records.last().unwrap();

    let (code, stdout, _) = askgate(&["log", "tail", log, "-n", "2"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 2);
    assert!(
        stdout.lines().last().unwrap().ends_with(&last.id),
        "{stdout}"
    );
    assert!(stdout.contains("2026-11-30T10:00:00.123Z"), "{stdout}");

    let (_, stdout, _) = askgate(&[
        "log",
        "tail",
        log,
        "-n",
        "1000",
        "--decision",
        "deny",
        "--policy",
        "projects.allowed",
    ]);
    assert_eq!(stdout, "");
    let (_, stdout, _) = askgate(&["log", "tail", log, "-n", "1000", "--decision", "ask"]);
    let asks = records
        .iter()
        .filter(|r| r.decision == Verdict::Ask)
        .count();
    assert_eq!(stdout.lines().count(), asks);
    let (_, stdout, _) = askgate(&["log", "tail", log, "--since", "2026-12-01T00:00:00Z"]);
    assert_eq!(stdout, "");

    let (code, stdout, _) = askgate(&["log", "show", &last.id, log]);
    assert_eq!(code, 0);
    assert!(stdout.contains(&format!("\"id\": \"{}\"", last.id)));
    assert!(stdout.contains("\"kind\": \"outcome\""), "{stdout}");
    let (code, _, stderr) = askgate(&["log", "show", "nope", log]);
    assert_eq!((code, stderr.trim()), (1, "no decision `nope` in the log"));

    let (code, stdout, _) = askgate(&[
        "log",
        "stats",
        log,
        "--project",
        "0f6c2a1e-1111-4222-8333-444455556666",
    ]);
    assert_eq!(code, 0);
    let header = stdout.lines().next().unwrap();
    assert!(
        header.starts_with("tool") && header.ends_with("error"),
        "{header}"
    );
    let delete_row = stdout
        .lines()
        .find(|l| l.contains("project_delete"))
        .unwrap();
    assert!(delete_row.starts_with("Projects"), "{delete_row}");
}

/// Issue #20 §3: the corpus log split between replicas `a` and `b` (and an old unnamed file)
/// replays as one log, whether the replicas share a directory or each has its own.
#[test]
fn issue_20_several_replicas_files_replay_as_one_log() {
    let snapshot = baseline_snapshot();
    let dir = tempfile::tempdir().unwrap();
    let (logs, records) = write_corpus_log(dir.path(), &snapshot);
    let lines: Vec<Record> = read_log(std::slice::from_ref(&logs))
        .unwrap()
        .filter_map(|line| match line {
            LogLine::Record(record) => Some(record),
            LogLine::Problem(_) => None,
        })
        .collect();
    // Even cuts keep each decision with its outcome.
    let cut = lines.len() / 3 / 2 * 2;
    assert!(cut > 0);
    let (first, rest) = lines.split_at(cut);
    let (second, third) = rest.split_at(cut);
    let shared = dir.path().join("shared");
    let (own_a, own_b) = (dir.path().join("a"), dir.path().join("b"));
    for path in [&shared, &own_a, &own_b] {
        std::fs::create_dir_all(path).unwrap();
    }
    write_lines(&shared.join("decisions-000001.jsonl"), first);
    write_lines(&shared.join("decisions-a-000001.jsonl"), second);
    write_lines(&shared.join("decisions-b-000001.jsonl"), third);
    write_lines(&own_a.join("decisions-000001.jsonl"), first);
    write_lines(&own_a.join("decisions-a-000001.jsonl"), second);
    write_lines(&own_b.join("decisions-b-000001.jsonl"), third);
    let expected = format!(
        "replayed {} records ({} decisions): 0 changed",
        records.len() * 2,
        records.len(),
    );
    for paths in [vec![&shared], vec![&own_a, &own_b]] {
        let mut args = vec!["replay"];
        args.extend(paths.iter().map(|path| path.to_str().unwrap()));
        let (code, stdout, stderr) = askgate(&args);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(stdout.starts_with(&expected), "{paths:?}: {stdout}");
    }
}
