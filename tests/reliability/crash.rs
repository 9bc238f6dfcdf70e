//! `kill -9` of the real `askgate serve` under load: every decision the agent saw acknowledged
//! is in the log, the log reads cleanly past at most one torn tail line, replay still runs,
//! and a restart on the same directory serves and appends to a new file after a torn tail.
//! Also: SIGINT (and, per the docs, SIGTERM) end `serve` gracefully with exit 0.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use askgate::audit::files::parse_sequence;
use askgate::audit::{read_log, LogLine, Problem, ProblemKind, Record};
use serde_json::Value;

use super::harness::{askgate, delete_notes, read_notes, send, tokenless_copy, Binary, AGENT};

const LOOPS: usize = 4;
const LOAD_FOR: Duration = Duration::from_millis(1500);

/// The decision ids of every `200` from `/v1/authorize`, until the first transport error.
async fn request_loop(url: String, loop_index: usize, stop: Arc<AtomicBool>) -> Vec<String> {
    let http = reqwest::Client::new();
    let session = format!("crash-{loop_index}");
    let bodies: [Value; 3] = [
        read_notes(&session),
        delete_notes(&session),
        tokenless_copy(&session),
    ];
    let mut acknowledged = Vec::new();
    for body in bodies.iter().cycle() {
        let target = format!("{url}/v1/authorize");
        let sent = send(
            &http,
            reqwest::Method::POST,
            target,
            Some(AGENT),
            Some(body.to_string().into_bytes()),
        )
        .await;
        match sent {
            Ok(reply) if reply.status == 200 => {
                let id = reply.body["decision_id"].as_str().unwrap_or("");
                assert!(!id.is_empty(), "{}", reply.body);
                acknowledged.push(id.to_string());
            }
            Ok(reply) => panic!("unexpected status {}: {}", reply.status, reply.body),
            Err(_) if stop.load(Ordering::SeqCst) => break,
            Err(error) => panic!("request failed before the kill: {error}"),
        }
    }
    acknowledged
}

/// Runs the loops for `LOAD_FOR`, kills the service with SIGKILL mid-flight, and returns the
/// acknowledged ids.
async fn load_then_kill(binary: &mut Binary) -> Vec<String> {
    let stop = Arc::new(AtomicBool::new(false));
    let loops: Vec<_> = (0..LOOPS)
        .map(|index| tokio::spawn(request_loop(binary.url.clone(), index, Arc::clone(&stop))))
        .collect();
    tokio::time::sleep(LOAD_FOR).await;
    stop.store(true, Ordering::SeqCst);
    binary.kill_9();
    let mut acknowledged = Vec::new();
    for one in loops {
        acknowledged.extend(one.await.unwrap());
    }
    acknowledged
}

/// Decision ids and problems, in log order.
fn read_decisions(logs: &Path) -> (Vec<String>, Vec<Problem>) {
    let (mut decisions, mut problems) = (Vec::new(), Vec::new());
    for line in read_log(&[logs.to_path_buf()]).unwrap() {
        match line {
            LogLine::Record(Record::Decision(record)) => decisions.push(record.id.clone()),
            LogLine::Record(_) => {}
            LogLine::Problem(problem) => problems.push(problem),
        }
    }
    (decisions, problems)
}

/// At most `most` problems, each the torn last line of its file.
fn assert_only_torn_tails(problems: &[Problem], most: usize) {
    assert!(problems.len() <= most, "{problems:?}");
    for problem in problems {
        assert_eq!(problem.kind, ProblemKind::Torn, "{problem:?}");
        let bytes = std::fs::read(&problem.file).unwrap();
        let newlines = bytes.iter().filter(|byte| **byte == b'\n').count();
        assert!(!bytes.ends_with(b"\n"), "{problem:?}");
        assert_eq!(
            problem.line_number,
            newlines + 1,
            "not the last line: {problem:?}"
        );
    }
}

/// Every acknowledged id is a decision record; the only problems are torn tails.
fn assert_acknowledged_logged(acknowledged: &[String], logs: &Path, most_torn: usize) {
    let (decisions, problems) = read_decisions(logs);
    let logged: HashSet<&str> = decisions.iter().map(String::as_str).collect();
    let missing: Vec<&String> = acknowledged
        .iter()
        .filter(|id| !logged.contains(id.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged decisions are not in the log: {:?}",
        missing.len(),
        acknowledged.len(),
        missing.iter().take(5).collect::<Vec<_>>()
    );
    assert_only_torn_tails(&problems, most_torn);
}

fn assert_replay_unchanged(logs: &Path) {
    let (code, stdout, stderr) = askgate(&[OsStr::new("replay"), logs.as_os_str()]);
    assert_eq!(code, 0, "replay: {stdout}{stderr}");
    assert!(stdout.contains(": 0 changed"), "{stdout}");
}

fn log_files(logs: &Path) -> Vec<(u64, PathBuf)> {
    askgate::audit::files::sequence_files(logs, None).unwrap()
}

/// Appends half a record to the last file, as a write cut short by a crash would leave it.
fn tear_last_file(logs: &Path) -> u64 {
    let (sequence, path) = log_files(logs).last().cloned().unwrap();
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(br#"{"v":1,"kind":"decision","id":"torn-"#)
        .unwrap();
    sequence
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_under_load_loses_no_acknowledged_decision_and_restart_appends() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let mut binary = Binary::start(&logs, work.path()).await;
    let acknowledged = load_then_kill(&mut binary).await;
    assert!(acknowledged.len() >= 20, "only {}", acknowledged.len());
    assert_acknowledged_logged(&acknowledged, &logs, 1);
    assert_replay_unchanged(&logs);
    eprintln!(
        "kill -9: {} acknowledged decisions, all logged",
        acknowledged.len()
    );

    // A torn tail (whether or not the kill left one): the restart must not append to it.
    let (_, problems) = read_decisions(&logs);
    let torn_sequence = if problems.is_empty() {
        tear_last_file(&logs)
    } else {
        parse_sequence(
            Path::new(&problems[0].file)
                .file_name()
                .and_then(OsStr::to_str)
                .unwrap(),
        )
        .unwrap()
    };
    let mut restarted = Binary::start(&logs, work.path()).await;
    let after = load_then_kill(&mut restarted).await;
    assert!(!after.is_empty());
    // The old torn tail stays reported; the second kill may have torn the newest file too.
    assert_acknowledged_logged(&acknowledged, &logs, 2);
    assert_acknowledged_logged(&after, &logs, 2);
    let (_, problems) = read_decisions(&logs);
    let torn_name = askgate::audit::files::log_file_name(None, torn_sequence);
    assert!(
        problems
            .iter()
            .any(|problem| problem.file.ends_with(&torn_name)),
        "{problems:?}"
    );
    let newest = log_files(&logs).last().map(|(sequence, _)| *sequence);
    assert!(
        newest > Some(torn_sequence),
        "no new file after the torn one"
    );
    assert_replay_unchanged(&logs);
}

/// `serve` says it shuts down gracefully on Ctrl-C / SIGTERM, but only SIGINT is handled:
/// SIGTERM (what `docker stop` and systemd send) ends it at once, dropping in-flight calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_shuts_down_gracefully() {
    let work = tempfile::tempdir().unwrap();
    let mut binary = Binary::start(&work.path().join("logs"), work.path()).await;
    let code = binary.signal_and_wait("TERM", Duration::from_secs(10));
    let errors = std::fs::read_to_string(work.path().join("serve.err")).unwrap_or_default();
    assert_eq!(code, Some(0), "{errors}");
    assert!(errors.contains("shutting down"), "{errors}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_shuts_down_gracefully() {
    let work = tempfile::tempdir().unwrap();
    let mut binary = Binary::start(&work.path().join("logs"), work.path()).await;
    let code = binary.signal_and_wait("INT", Duration::from_secs(10));
    let errors = std::fs::read_to_string(work.path().join("serve.err")).unwrap_or_default();
    assert_eq!(code, Some(0), "{errors}");
    assert!(errors.contains("shutting down"), "{errors}");
}

/// Whether each log file (by sequence) holds a zero byte: zero-filled room.
fn files_with_room(logs: &Path) -> Vec<(u64, bool)> {
    log_files(logs)
        .into_iter()
        .map(|(sequence, path)| (sequence, std::fs::read(path).unwrap().contains(&0)))
        .collect()
}

/// With `log_room_bytes` the open file ends in zero-filled room, and `kill -9` leaves it there:
/// every acknowledged decision is still read back (the room is no line, no problem), replay
/// runs, and the restart cuts the room off before it writes. A graceful stop leaves no room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_room_loses_no_acknowledged_decision_and_restart_cuts_the_room() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let config = work.path().join("room.json");
    std::fs::write(&config, r#"{"log_room_bytes": 1048576}"#).unwrap();
    let args = [
        OsStr::new("--log-dir"),
        logs.as_os_str(),
        OsStr::new("--config"),
        config.as_os_str(),
    ];
    let mut binary = Binary::start_with(&args, work.path()).await;
    let acknowledged = load_then_kill(&mut binary).await;
    assert!(acknowledged.len() >= 20, "only {}", acknowledged.len());
    assert_eq!(
        files_with_room(&logs),
        vec![(1, true)],
        "the killed service's file ends in room"
    );
    assert_acknowledged_logged(&acknowledged, &logs, 1);
    assert_replay_unchanged(&logs);

    let mut restarted = Binary::start_with(&args, work.path()).await;
    let after = load_then_kill(&mut restarted).await;
    assert!(!after.is_empty());
    assert_acknowledged_logged(&acknowledged, &logs, 2);
    assert_acknowledged_logged(&after, &logs, 2);
    let rooms = files_with_room(&logs);
    let (older, newest) = rooms.split_at(rooms.len() - 1);
    assert!(
        older.iter().all(|(_, room)| !room),
        "the restart cut the room a crash left: {rooms:?}"
    );
    assert!(newest[0].1, "{rooms:?}");

    let mut stopped = Binary::start_with(&args, work.path()).await;
    let target = format!("{}/v1/authorize", stopped.url);
    let body = read_notes("stopped");
    let reply = send(
        &reqwest::Client::new(),
        reqwest::Method::POST,
        target,
        Some(AGENT),
        Some(body.to_string().into_bytes()),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        files_with_room(&logs).iter().any(|(_, room)| *room),
        "the running service's file ends in room"
    );
    assert_eq!(
        stopped.signal_and_wait("TERM", Duration::from_secs(10)),
        Some(0)
    );
    assert!(
        files_with_room(&logs).iter().all(|(_, room)| !room),
        "a graceful stop leaves no room"
    );
    assert_replay_unchanged(&logs);
}
