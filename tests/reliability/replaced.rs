//! F6: a log file or directory deleted or replaced under the running service. The writer checks,
//! before and after each group commit, that the log path still names the file it writes; a
//! deleted file is followed by a new one, a directory that is gone or no longer a directory
//! refuses calls with 503 and `/healthz` names it, and no call is ever acknowledged with a
//! decision that went only into a deleted inode. Every acknowledged decision id is looked up in
//! the log files on disk.

use std::path::Path;

use askgate::audit::writer::MAX_RETRY;

use super::harness::{read_notes, Service, Setup};
use super::unwritable::{
    assert_degraded_by_the_log, assert_healthy, assert_refused_naming_the_log, logged_decisions,
};

async fn start(logs: &Path) -> Service {
    Service::start(Setup {
        log_dir: Some(logs.to_path_buf()),
        ..Setup::default()
    })
    .await
}

/// Sends `count` reads and returns the acknowledged decision ids (each must be a 200).
async fn acknowledged(service: &Service, count: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for _ in 0..count {
        let reply = service.authorize(&read_notes("f6")).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        ids.push(reply.text("decision_id").to_string());
    }
    ids
}

/// No descriptor of this process (the in-process service) points at a deleted file in `logs`.
fn assert_no_deleted_log_open(logs: &Path) {
    let prefix = logs.display().to_string();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        let target = target.display().to_string();
        assert!(
            !(target.starts_with(&prefix) && target.ends_with("(deleted)")),
            "a deleted log file is still open: {target}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f6_deleted_log_file_is_replaced_by_a_new_one() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let service = start(&logs).await;
    let before = acknowledged(&service, 2).await;
    assert_eq!(logged_decisions(&logs), before);

    // A careless cleanup job.
    std::fs::remove_file(logs.join("decisions-000001.jsonl")).unwrap();
    let after = acknowledged(&service, 20).await;
    assert_healthy(&service.healthz().await);
    assert_eq!(
        logged_decisions(&logs),
        after,
        "every acknowledged decision is on disk"
    );
    assert!(logs.join("decisions-000002.jsonl").exists());
    assert_no_deleted_log_open(&logs);

    // Moved away and replaced by another file of the same name (a naive rotation): the writer
    // never writes to the moved file again and goes on in the next file.
    let current = logs.join("decisions-000002.jsonl");
    let moved = work.path().join("moved.jsonl");
    std::fs::rename(&current, &moved).unwrap();
    std::fs::write(&current, "").unwrap();
    let moved_bytes = std::fs::read(&moved).unwrap();
    let replaced = acknowledged(&service, 3).await;
    assert_eq!(logged_decisions(&logs), replaced);
    assert!(logs.join("decisions-000003.jsonl").exists());
    assert_eq!(
        std::fs::read(&moved).unwrap(),
        moved_bytes,
        "the moved file is left alone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f6_deleted_and_replaced_directory_refuses_calls_until_it_is_back() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let service = start(&logs).await;
    acknowledged(&service, 1).await;

    // `rm -rf D && touch D`: no file can be opened, so calls are refused and `/healthz` says why.
    std::fs::remove_dir_all(&logs).unwrap();
    std::fs::write(&logs, "").unwrap();
    let directory = logs.display().to_string();
    for _ in 0..3 {
        assert_refused_naming_the_log(&service.authorize(&read_notes("f6")).await);
        assert_degraded_by_the_log(&service.healthz().await, &directory);
    }
    assert_no_deleted_log_open(&logs);

    // The directory comes back (empty): after the retry delay the next call is logged there.
    std::fs::remove_file(&logs).unwrap();
    std::fs::create_dir(&logs).unwrap();
    tokio::time::sleep(MAX_RETRY).await;
    let recovered = acknowledged(&service, 2).await;
    assert_healthy(&service.healthz().await);
    assert_eq!(logged_decisions(&logs), recovered);

    // `rm -rf D && mkdir D` between two calls: the new directory gets a new file at once.
    std::fs::remove_dir_all(&logs).unwrap();
    std::fs::create_dir(&logs).unwrap();
    let fresh = acknowledged(&service, 2).await;
    assert_eq!(logged_decisions(&logs), fresh);
    assert_no_deleted_log_open(&logs);
}

/// The log file with the highest sequence in `logs` (the one being written).
fn current_file(logs: &Path) -> Option<std::path::PathBuf> {
    let mut files = askgate::audit::log_files(&[logs.to_path_buf()]).ok()?;
    files.pop()
}

/// Boundaries 2026-12-01: "a logrotate-style rename of the current log file refused ~90 calls
/// in 0.8 s (nothing lost)". The current file is renamed away ten times while eight clients
/// send reads: no call is refused, every acknowledged decision is in exactly one file (the
/// renamed ones keep what was acknowledged in them, nothing more), and the log stays healthy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boundaries_logrotate_rename_of_the_current_file_refuses_no_call() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let service = std::sync::Arc::new(start(&logs).await);
    acknowledged(&service, 1).await;
    let clients: Vec<_> = (0..8)
        .map(|client| {
            let service = std::sync::Arc::clone(&service);
            tokio::spawn(async move {
                let mut replies = Vec::new();
                for _ in 0..60 {
                    let reply = service
                        .authorize(&read_notes(&format!("rotate-{client}")))
                        .await;
                    replies.push((reply.status, reply.body));
                }
                replies
            })
        })
        .collect();
    let mut rotated = Vec::new();
    for round in 0..10 {
        tokio::time::sleep(std::time::Duration::from_millis(15)).await;
        let Some(current) = current_file(&logs) else {
            continue;
        };
        let aside = work.path().join(format!("rotated-{round}.jsonl"));
        if std::fs::rename(&current, &aside).is_ok() {
            rotated.push(aside);
        }
    }
    let mut ids = Vec::new();
    for client in clients {
        for (status, body) in client.await.unwrap() {
            assert_eq!(status, 200, "a call refused during the rotation: {body}");
            ids.push(body["decision_id"].as_str().unwrap().to_string());
        }
    }
    assert_healthy(&service.healthz().await);
    assert!(!rotated.is_empty(), "no file was rotated");

    let mut on_disk = Vec::new();
    for file in rotated.iter().chain(std::iter::once(&logs)) {
        on_disk.extend(logged_decisions(file));
    }
    let unique: std::collections::BTreeSet<_> = on_disk.iter().cloned().collect();
    assert_eq!(unique.len(), on_disk.len(), "a decision is in two files");
    for id in &ids {
        assert!(
            unique.contains(id),
            "acknowledged decision {id} is in no file"
        );
    }
    eprintln!(
        "followed while written: {}",
        super::unwritable::metric(&service.metrics().await, "askgate_log_followed_total")
    );
}
