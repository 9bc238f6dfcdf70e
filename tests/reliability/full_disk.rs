//! F5: the decision log's disk fills up while the service runs. It is a real full filesystem: a
//! 512 KiB tmpfs the test mounts itself (root only; the test fails, saying so, when it cannot
//! mount) and fills with a filler file. Refused calls then get 503 naming the log, create no file
//! and list no directory (the log directory keeps its one file however many calls are refused),
//! the refusals are answered quickly, and once space returns the service recovers by itself
//! within the retry delay: the next call is logged and `/healthz` says `ok`, with no torn or
//! partial line left in the file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use askgate::audit::writer::MAX_RETRY;
use askgate::audit::{read_log, LogLine};

use super::harness::{read_notes, Reply, Service, Setup};
use super::unwritable::{
    assert_degraded_by_the_log, assert_healthy, assert_refused_naming_the_log, logged_decisions,
};

/// How many calls are refused while the disk is full.
const REFUSED_CALLS: usize = 300;

/// A tmpfs mounted for the test; unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output();
        match output {
            Ok(output) if output.status.success() => Tmpfs { path, _dir: dir },
            Ok(output) => panic!(
                "f5 needs a real full filesystem: mounting a tmpfs needs root, and `mount` said: {}",
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => panic!("f5 needs a real full filesystem: cannot run `mount`: {error}"),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// Writes `path` until the filesystem has no room left.
fn fill(path: &Path) {
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![b'x'; 4096];
    loop {
        if file.write_all(&chunk).is_err() {
            return;
        }
    }
}

/// The log files in `dir` (the checkpoint key beside them is no log file).
fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            askgate::audit::files::parse_log_name(&name.to_string_lossy()).is_some()
        })
        .count()
}

async fn refused_concurrently(service: &Service, count: usize) -> Vec<Reply> {
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let http = service.http.clone();
            let url = service.url.clone();
            tokio::spawn(async move {
                let mut replies = Vec::new();
                for _ in 0..count / 8 {
                    replies.push(super::harness::authorize(&http, &url, &read_notes("f5")).await);
                }
                replies
            })
        })
        .collect();
    let mut replies = Vec::new();
    for task in tasks {
        replies.extend(task.await.unwrap());
    }
    replies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f5_full_disk_creates_no_file_per_refused_call_and_recovers() {
    full_disk(None).await;
}

/// P9 (findings/trust-2026-12-04.md): with `log_room_bytes` the file's room is used up, the
/// next batch's write ends part way, and that partial write was taken for another program's
/// change of the file's length, so every refused batch left its file for a new one (a file a
/// second). With room too, the log keeps its one file while the disk is full and recovers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p9_with_room_a_full_disk_keeps_one_file_and_recovers() {
    full_disk(Some(64 * 1024)).await;
}

/// Fills the log's disk under a running service with `room` (`log_room_bytes`), then frees it.
async fn full_disk(room: Option<u64>) {
    let disk = Tmpfs::mount("512k");
    let logs = disk.path.join("logs");
    let service = Service::start(Setup {
        log_dir: Some(logs.clone()),
        log_room_bytes: room,
        ..Setup::default()
    })
    .await;
    let first = service.authorize(&read_notes("f5")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let mut acknowledged = vec![first.text("decision_id").to_string()];

    fill(&disk.path.join("filler"));
    // The log file's last page may still hold a line or two; then the disk is full for it.
    let mut refused_once = false;
    for _ in 0..50 {
        let reply = service.authorize(&read_notes("f5")).await;
        if reply.status == 200 {
            acknowledged.push(reply.text("decision_id").to_string());
            continue;
        }
        assert_refused_naming_the_log(&reply);
        refused_once = true;
        break;
    }
    assert!(refused_once, "the full disk never refused a call");
    let started = Instant::now();
    let replies = refused_concurrently(&service, REFUSED_CALLS).await;
    let took = started.elapsed();
    for reply in &replies {
        assert_refused_naming_the_log(reply);
    }
    assert_degraded_by_the_log(&service.healthz().await, "No space left on device");
    assert_eq!(files_in(&logs), 1, "a refused call created a file");
    // Refusals do not wait for the disk (bounded far above what they take, on a busy machine).
    assert!(
        took < Duration::from_secs(30),
        "{REFUSED_CALLS} refusals took {took:?}"
    );

    // Space returns; the service finds out by itself on a call after the retry delay.
    std::fs::remove_file(disk.path.join("filler")).unwrap();
    tokio::time::sleep(MAX_RETRY).await;
    let recovered = service.authorize(&read_notes("f5")).await;
    assert_eq!(recovered.status, 200, "{}", recovered.body);
    acknowledged.push(recovered.text("decision_id").to_string());
    assert_healthy(&service.healthz().await);
    assert_eq!(files_in(&logs), 1);
    let problems: Vec<_> = read_log(std::slice::from_ref(&logs))
        .unwrap()
        .filter(|line| matches!(line, LogLine::Problem(_)))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(logged_decisions(&logs), acknowledged);
    drop(service);
}
