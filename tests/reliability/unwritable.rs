//! An unwritable decision log at the service level: a full disk (the current file is
//! `/dev/full`, ENOSPC even for root) and then a log directory that is no longer a directory.
//! Calls are refused with 503 naming the decision log, `/healthz` keeps answering but says
//! `degraded` with the log `failing` (the cause, and since when), and the next call after the
//! directory is restored (and the retry delay has passed) succeeds, is logged and turns
//! `/healthz` back to `ok`.
//!
//! A healthy open log file cannot be made to fail for root while the service runs (the writer
//! keeps its descriptor until an error or a 64 MiB rotation), so the disk is "full" from the
//! first write on; the write path and the recovery are the same as a disk filling mid-run.

use std::path::Path;

use askgate::audit::writer::MAX_RETRY;
use askgate::audit::{read_log, LogLine, Record};
use serde_json::json;

use super::harness::{delete_notes, Reply, Service, Setup};

pub(super) fn assert_refused_naming_the_log(reply: &Reply) {
    assert_eq!(reply.status, 503, "{}", reply.body);
    let message = reply.body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("decision log"), "{message}");
    assert!(message.contains("refused"), "{message}");
}

/// `/healthz` says degraded because the log is failing; returns the log's `since`.
pub(super) fn assert_degraded_by_the_log(health: &Reply, cause: &str) -> String {
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(health.text("status"), "degraded", "{}", health.body);
    let log = &health.body["log"];
    assert_eq!(log["state"], "failing", "{}", health.body);
    let error = log["error"].as_str().unwrap_or("");
    assert!(error.contains(cause), "{error}");
    let since = log["since"].as_str().unwrap_or("");
    assert!(since.ends_with('Z'), "{}", health.body);
    since.to_string()
}

pub(super) fn assert_healthy(health: &Reply) {
    assert_eq!(health.status, 200, "{}", health.body);
    assert_eq!(health.text("status"), "ok", "{}", health.body);
    assert_eq!(
        health.body["log"],
        json!({"state": "ok", "error": null, "since": null}),
        "{}",
        health.body
    );
}

pub(super) fn logged_decisions(logs: &Path) -> Vec<String> {
    read_log(&[logs.to_path_buf()])
        .unwrap()
        .filter_map(|line| match line {
            LogLine::Record(Record::Decision(record)) => Some(record.id.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_log_refuses_calls_keeps_serving_and_recovers() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let full = logs.join("decisions-000001.jsonl");
    std::os::unix::fs::symlink("/dev/full", &full).unwrap();
    let service = Service::start(Setup {
        log_dir: Some(logs.clone()),
        ..Setup::default()
    })
    .await;
    assert_healthy(&service.healthz().await);

    // Disk full: the write fails with ENOSPC.
    let refused = service.authorize(&delete_notes("full")).await;
    assert_refused_naming_the_log(&refused);
    let message = refused.body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("decisions-000001.jsonl"), "{message}");
    let since = assert_degraded_by_the_log(&service.healthz().await, "decisions-000001.jsonl");

    // Still unwritable: the directory is now a regular file, so no new file can be opened.
    // Past the retry delay, so the next call tries the disk again (calls in between fail at
    // once with the cause already known).
    tokio::time::sleep(MAX_RETRY).await;
    let aside = work.path().join("aside");
    std::fs::rename(&logs, &aside).unwrap();
    std::fs::write(&logs, "").unwrap();
    let directory = logs.display().to_string();
    for _ in 0..3 {
        assert_refused_naming_the_log(&service.authorize(&delete_notes("blocked")).await);
        let health = service.healthz().await;
        // The latest cause is shown; the failure still dates from the full disk.
        assert_eq!(assert_degraded_by_the_log(&health, &directory), since);
        let error = health.body["log"]["error"].as_str().unwrap_or("");
        assert!(!error.contains("decisions-000001.jsonl"), "{error}");
    }

    // Space returns: the directory is back (without the full device).
    std::fs::remove_file(&logs).unwrap();
    std::fs::rename(&aside, &logs).unwrap();
    std::fs::remove_file(&full).unwrap();
    // Nothing was written since, so the log still counts as failing until a write succeeds.
    assert_degraded_by_the_log(&service.healthz().await, &directory);
    tokio::time::sleep(MAX_RETRY).await;
    let recovered = service.authorize(&delete_notes("recovered")).await;
    assert_eq!(recovered.status, 200, "{}", recovered.body);
    assert_healthy(&service.healthz().await);
    let id = recovered.body["decision_id"].as_str().unwrap().to_string();
    let again = service.authorize(&delete_notes("recovered")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    let second = again.body["decision_id"].as_str().unwrap().to_string();
    assert_eq!(logged_decisions(&logs), vec![id, second]);
}

/// The value of the `/metrics` line that starts with `name` (labels included).
pub(super) fn metric(text: &str, name: &str) -> f64 {
    let line = text
        .lines()
        .find(|line| line.split(' ').next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Boundaries 2026-12-01: "with `log_failure: allow`, unlogged decisions are not counted".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boundaries_log_failure_allow_counts_unlogged_decisions() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    std::os::unix::fs::symlink("/dev/full", logs.join("decisions-000001.jsonl")).unwrap();
    let service = Service::start(Setup {
        log_dir: Some(logs.clone()),
        log_failure: Some("allow".to_string()),
        ..Setup::default()
    })
    .await;
    let before = service.metrics().await;
    assert_eq!(
        metric(&before, "askgate_log_unlogged_total{kind=\"decision\"}"),
        0.0
    );

    for session in ["allow-1", "allow-2", "allow-3"] {
        let reply = service.authorize(&delete_notes(session)).await;
        assert_eq!(
            reply.status, 200,
            "the call goes on unlogged: {}",
            reply.body
        );
    }
    let after = service.metrics().await;
    assert_eq!(
        metric(&after, "askgate_log_unlogged_total{kind=\"decision\"}"),
        3.0
    );
    assert!(
        metric(&after, "askgate_log_failed_batches_total") >= 1.0,
        "{after}"
    );
}
