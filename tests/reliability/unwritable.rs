//! An unwritable decision log at the service level: a full disk (the current file is
//! `/dev/full`, ENOSPC even for root) and then a log directory that is no longer a directory.
//! Calls are refused with 503 naming the decision log, `/healthz` keeps answering, and the
//! next call after the directory is restored succeeds and is logged.
//!
//! A healthy open log file cannot be made to fail for root while the service runs (the writer
//! keeps its descriptor until an error or a 64 MiB rotation), so the disk is "full" from the
//! first write on; the write path and the recovery are the same as a disk filling mid-run.

use std::path::Path;

use askgate::audit::{read_log, LogLine, Record};

use super::harness::{delete_notes, Reply, Service, Setup};

fn assert_refused_naming_the_log(reply: &Reply) {
    assert_eq!(reply.status, 503, "{}", reply.body);
    let message = reply.body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("decision log"), "{message}");
    assert!(message.contains("refused"), "{message}");
}

fn logged_decisions(logs: &Path) -> Vec<String> {
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

    // Disk full: the write fails with ENOSPC.
    let refused = service.authorize(&delete_notes("full")).await;
    assert_refused_naming_the_log(&refused);
    let message = refused.body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("decisions-000001.jsonl"), "{message}");
    assert_eq!(service.healthz().await.status, 200);

    // Still unwritable: the directory is now a regular file, so no new file can be opened.
    let aside = work.path().join("aside");
    std::fs::rename(&logs, &aside).unwrap();
    std::fs::write(&logs, "").unwrap();
    for _ in 0..3 {
        assert_refused_naming_the_log(&service.authorize(&delete_notes("blocked")).await);
        assert_eq!(service.healthz().await.status, 200);
    }

    // Space returns: the directory is back (without the full device).
    std::fs::remove_file(&logs).unwrap();
    std::fs::rename(&aside, &logs).unwrap();
    std::fs::remove_file(&full).unwrap();
    let recovered = service.authorize(&delete_notes("recovered")).await;
    assert_eq!(recovered.status, 200, "{}", recovered.body);
    let id = recovered.body["decision_id"].as_str().unwrap().to_string();
    let again = service.authorize(&delete_notes("recovered")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    let second = again.body["decision_id"].as_str().unwrap().to_string();
    assert_eq!(logged_decisions(&logs), vec![id, second]);
}
