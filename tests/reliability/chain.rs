//! Issue 37: the decision log is hash-chained and signed. Two real `askgate serve` replicas
//! share one log directory and log decisions made over HTTP; `askgate log verify` (the real
//! binary) finds both chains whole, then names each kind of tampering done to copies of the
//! logs, and every single-byte change in a sample of offsets of a committed log file. A
//! replica killed mid-write and started again records its torn tail, which verify accepts.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::harness::{askgate, authorize, delete_notes, read_notes, send, tokenless_copy, Binary};

/// `serve` on `logs` as replica `id`, with checkpoints every 5 records.
async fn replica(logs: &Path, work: &Path, id: &str) -> Binary {
    let config = work.join(format!("{id}.json"));
    std::fs::write(&config, r#"{"log_checkpoint_records": 5}"#).unwrap();
    let args: [&OsStr; 6] = [
        "--log-dir".as_ref(),
        logs.as_os_str(),
        "--replica-id".as_ref(),
        id.as_ref(),
        "--config".as_ref(),
        config.as_os_str(),
    ];
    Binary::start_with(&args, work).await
}

/// `count` decisions (allow, ask, deny in turn) through `/v1/authorize`.
async fn decide(binary: &Binary, count: usize) {
    let http = reqwest::Client::new();
    for index in 0..count {
        let session = format!("chain-{index}");
        let body = match index % 3 {
            0 => read_notes(&session),
            1 => delete_notes(&session),
            _ => tokenless_copy(&session),
        };
        let reply = authorize(&http, &binary.url, &body).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
}

/// The public key `GET /v1/admin/log-key` serves, checked against the one `serve` printed.
async fn served_key(binary: &mut Binary) -> String {
    let http = reqwest::Client::new();
    let url = format!("{}/v1/admin/log-key", binary.url);
    let reply = send(&http, reqwest::Method::GET, url, None, None)
        .await
        .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    let key = reply.text("key").to_string();
    assert_eq!(key.len(), 64, "{}", reply.body);
    let printed = binary.announced("decision log checkpoint key: ").await;
    assert_eq!(printed, key);
    key
}

/// `askgate log verify` of `logs` with `keys`: exit code and stdout.
fn verify(logs: &Path, keys: &[&str]) -> (i32, String) {
    let mut args: Vec<&OsStr> = vec!["log".as_ref(), "verify".as_ref(), logs.as_os_str()];
    for key in keys {
        args.push("--key".as_ref());
        args.push(key.as_ref());
    }
    let (code, stdout, stderr) = askgate(&args);
    (code, format!("{stdout}{stderr}"))
}

fn log_files(logs: &Path, replica: &str) -> Vec<PathBuf> {
    let id = askgate::audit::files::ReplicaId::parse(replica).unwrap();
    askgate::audit::files::sequence_files(logs, Some(&id))
        .unwrap()
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

fn copy_logs(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn kind_of(line: &str) -> String {
    let value: Value = serde_json::from_str(line).unwrap();
    value["kind"].as_str().unwrap_or("").to_string()
}

/// Two replicas log into one directory and stop gracefully (their last checkpoint signs every
/// record); `log verify` with both keys finds both chains whole.
async fn two_replicas(work: &Path) -> (PathBuf, String, String) {
    let logs = work.join("logs");
    let mut a = replica(&logs, work, "a").await;
    let mut b = replica(&logs, work, "b").await;
    let (key_a, key_b) = (served_key(&mut a).await, served_key(&mut b).await);
    assert_ne!(key_a, key_b, "each replica signs with a key of its own");
    decide(&a, 12).await;
    decide(&b, 7).await;
    decide(&a, 6).await;
    for binary in [&mut a, &mut b] {
        assert_eq!(
            binary.signal_and_wait("TERM", Duration::from_secs(10)),
            Some(0)
        );
    }
    (logs, key_a, key_b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_verify_names_each_kind_of_tampering_in_logs_written_by_two_replicas() {
    let work = tempfile::tempdir().unwrap();
    let (logs, key_a, key_b) = two_replicas(work.path()).await;
    let (code, out) = verify(&logs, &[&key_a, &key_b]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("verify: ok"), "{out}");
    assert!(
        !out.contains("note unsigned"),
        "stopping signs the rest: {out}"
    );
    let a_files = log_files(&logs, "a");
    let first = lines_of(&a_files[0]);
    assert!(first.len() > 8, "{}", first.len());
    assert!(first.iter().any(|line| kind_of(line) == "checkpoint"));

    // Each tampering, on a copy, with the place it must be found at.
    let name = |path: &Path| path.file_name().unwrap().to_string_lossy().into_owned();
    let first_name = name(&a_files[0]);
    let cases: Vec<(&str, &str, String)> = vec![
        ("delete", "TAMPERED deleted", format!("{first_name}:2")),
        ("insert", "TAMPERED inserted", format!("{first_name}:4")),
        ("change", "TAMPERED changed", format!("{first_name}:2")),
        ("reorder", "TAMPERED reordered", format!("{first_name}:2")),
        ("truncate", "TAMPERED truncated-tail", String::new()),
        (
            "unknown key",
            "TAMPERED unknown-key",
            "decisions-b-".to_string(),
        ),
        ("forged checkpoint", "TAMPERED bad-signature", String::new()),
    ];
    for (index, (tamper, expected, place)) in cases.iter().enumerate() {
        let copy = work.path().join(format!("copy-{index}"));
        copy_logs(&logs, &copy);
        let files = log_files(&copy, "a");
        let mut lines = lines_of(&files[0]);
        let mut keys = vec![key_a.as_str(), key_b.as_str()];
        match *tamper {
            "delete" => {
                lines.remove(1);
                write_lines(&files[0], &lines);
            }
            "insert" => {
                let copied = lines[1].clone();
                lines.insert(3, copied);
                write_lines(&files[0], &lines);
            }
            "change" => {
                let changed =
                    lines[1].replacen("\"decision\":\"allow\"", "\"decision\":\"deny\"", 1);
                assert_ne!(
                    changed, lines[1],
                    "the second record is an allow, turned into a deny"
                );
                lines[1] = changed;
                write_lines(&files[0], &lines);
            }
            "reorder" => {
                lines.swap(1, 2);
                write_lines(&files[0], &lines);
            }
            "truncate" => {
                let last = files.last().unwrap();
                let bytes = std::fs::read(last).unwrap();
                std::fs::write(last, &bytes[..bytes.len() - 30]).unwrap();
            }
            "unknown key" => keys = vec![key_a.as_str()],
            "forged checkpoint" => {
                // The last line is a checkpoint: a different time, the signature kept.
                let last = files.last().unwrap();
                let mut tail = lines_of(last);
                let checkpoint = tail.last().unwrap().clone();
                assert_eq!(kind_of(&checkpoint), "checkpoint");
                *tail.last_mut().unwrap() =
                    checkpoint.replacen("\"time\":\"20", "\"time\":\"19", 1);
                write_lines(last, &tail);
            }
            other => panic!("{other}"),
        }
        let (code, out) = verify(&copy, &keys);
        assert_eq!(code, 1, "{tamper}: {out}");
        let finding = out
            .lines()
            .find(|line| line.starts_with("TAMPERED"))
            .unwrap_or_default();
        assert!(finding.starts_with(expected), "{tamper}: {out}");
        assert!(finding.contains(place.as_str()), "{tamper}: {out}");
    }

    // Usage errors and unreadable logs have codes of their own.
    assert_eq!(verify(&logs, &["not-a-key"]).0, 2);
    assert_eq!(askgate(&["log".as_ref(), "verify".as_ref()]).0, 2);
    assert_eq!(verify(&work.path().join("nowhere"), &[]).0, 4);
}

/// Every single-byte change at a sample of offsets of a committed log file (every 2nd byte
/// of its last line, a signed checkpoint; every 13th of its first; every 997th of the file)
/// is detected: some 400 runs of the binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_single_byte_change_to_a_committed_log_file_is_detected() {
    let work = tempfile::tempdir().unwrap();
    let (logs, key_a, key_b) = two_replicas(work.path()).await;
    let file = log_files(&logs, "a").pop().unwrap();
    let original = std::fs::read(&file).unwrap();
    let first_end = original.iter().position(|byte| *byte == b'\n').unwrap() + 1;
    let last_start = original[..original.len() - 1]
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(0, |at| at + 1);
    let offsets: Vec<usize> = (0..original.len())
        .filter(|at| {
            (*at < first_end && at % 13 == 0) || (*at >= last_start && at % 2 == 0) || at % 997 == 0
        })
        .collect();
    let mut checked = 0;
    for at in offsets {
        // A neighbouring byte value, or a space, in turn.
        let replacement = if at % 2 == 0 {
            original[at] ^ 0x01
        } else {
            b' '
        };
        if replacement != original[at] {
            let mut changed = original.clone();
            changed[at] = replacement;
            std::fs::write(&file, &changed).unwrap();
            let (code, out) = verify(&logs, &[&key_a, &key_b]);
            assert_eq!(
                code, 1,
                "byte {at} set to {replacement:#04x} went unnoticed: {out}"
            );
            checked += 1;
        }
    }
    std::fs::write(&file, &original).unwrap();
    assert_eq!(verify(&logs, &[&key_a, &key_b]).0, 0);
    eprintln!(
        "{checked} single-byte changes of {} bytes, all detected",
        original.len()
    );
}

/// A replica killed with SIGKILL whose last file is then cut mid-record (as a crash mid-write
/// leaves it), twice: until it starts again verify reports the cut tail; once it has, the
/// restart's chain note names the torn tail and verify accepts the log. The three files the
/// crashes left then serve to show a file missing from the middle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_tail_is_recorded_at_restart_and_a_missing_file_is_not() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let mut a = replica(&logs, work.path(), "a").await;
    let key = served_key(&mut a).await;
    for round in 0..2 {
        decide(&a, 4).await;
        a.kill_9();
        let last = log_files(&logs, "a").pop().unwrap();
        let mut bytes = std::fs::read(&last).unwrap();
        bytes.extend_from_slice(br#"{"v":1,"kind":"decision","id":"cut"#);
        std::fs::write(&last, &bytes).unwrap();
        let (code, out) = verify(&logs, &[&key]);
        assert_eq!(code, 1, "{round}: {out}");
        assert!(out.contains("TAMPERED truncated-tail"), "{round}: {out}");
        a = replica(&logs, work.path(), "a").await;
    }
    decide(&a, 2).await;
    assert_eq!(a.signal_and_wait("TERM", Duration::from_secs(10)), Some(0));
    let (code, out) = verify(&logs, &[&key]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("note torn-tail-recorded").count(), 2, "{out}");

    let files = log_files(&logs, "a");
    assert_eq!(files.len(), 3, "{files:?}");
    std::fs::remove_file(&files[1]).unwrap();
    let (code, out) = verify(&logs, &[&key]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("TAMPERED missing-file: {}", files[2].display())),
        "{out}"
    );
}
