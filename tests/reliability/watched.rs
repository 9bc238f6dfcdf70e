//! F7 and C14: the policy watcher of the real `askgate serve --watch-seconds 1` on real files.
//! A Kubernetes ConfigMap volume (every `*.cedar` a symlink into `..data`, updated by swapping
//! `..data` atomically) is reloaded without SIGHUP; a policy symlink whose target disappears, a
//! directory named `*.cedar` and a symlink loop are reported as reload problems in `/healthz`
//! and by `askgate validate`, and the running set keeps deciding until the directory is fixed;
//! an edit in place that keeps the size and the modification time is seen by its content
//! (issue 18 §8).

use std::ffi::OsStr;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::Path;
use std::time::{Duration, Instant};

use super::harness::{
    ask_delete_text, askgate, authorize, delete_notes, healthz, Binary, Reply, ASK_DELETE_POLICY,
};

/// How long a test waits for the watcher (it looks every second; a debug build under load
/// takes a while to reload).
const WITHIN: Duration = Duration::from_secs(15);

async fn serve_watching(policies: &Path, work: &Path) -> Binary {
    let args: [&OsStr; 4] = [
        "--policies".as_ref(),
        policies.as_os_str(),
        "--watch-seconds".as_ref(),
        "1".as_ref(),
    ];
    Binary::start_with(&args, work).await
}

async fn decision_of_delete(http: &reqwest::Client, service: &Binary) -> Reply {
    let reply = authorize(http, &service.url, &delete_notes("watched")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
}

/// Polls until `ready` holds for `/healthz`; the last body otherwise.
async fn wait_for_health(
    http: &reqwest::Client,
    service: &Binary,
    ready: impl Fn(&Reply) -> bool,
) -> Result<Reply, String> {
    let deadline = Instant::now() + WITHIN;
    loop {
        let health = healthz(http, &service.url).await;
        if ready(&health) {
            return Ok(health);
        }
        if Instant::now() > deadline {
            return Err(health.body.to_string());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `K/..v1/managed.cedar` (ask on delete), `K/..v2/managed.cedar` (a comment), `K/..data ->
/// ..v1` and `K/managed.cedar -> ..data/managed.cedar`, as the kubelet lays a ConfigMap out.
fn configmap(root: &Path) {
    std::fs::create_dir_all(root.join("..v1")).unwrap();
    std::fs::create_dir_all(root.join("..v2")).unwrap();
    std::fs::write(root.join("..v1/managed.cedar"), ask_delete_text()).unwrap();
    std::fs::write(root.join("..v2/managed.cedar"), "// placeholder\n").unwrap();
    symlink("..v1", root.join("..data")).unwrap();
    symlink("..data/managed.cedar", root.join("managed.cedar")).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f7_configmap_swap_is_reloaded() {
    let work = tempfile::tempdir().unwrap();
    let managed = work.path().join("managed");
    configmap(&managed);
    let service = serve_watching(&managed, work.path()).await;
    let http = reqwest::Client::new();
    let before = decision_of_delete(&http, &service).await;
    assert_eq!(before.text("decision"), "ask", "{}", before.body);

    // The kubelet's update: a new `..data` link renamed over the old one (`mv -T`).
    symlink("..v2", managed.join("..data.tmp")).unwrap();
    std::fs::rename(managed.join("..data.tmp"), managed.join("..data")).unwrap();
    let old = before.text("snapshot").to_string();
    let health = wait_for_health(&http, &service, |health| health.text("snapshot") != old)
        .await
        .expect("the watcher never reloaded after the ..data swap");
    assert_eq!(health.text("status"), "ok", "{}", health.body);
    assert_eq!(health.body["reload"]["reloads"], 1, "{}", health.body);
    let after = decision_of_delete(&http, &service).await;
    assert_eq!(after.text("decision"), "allow", "{}", after.body);
    assert_eq!(after.text("snapshot"), health.text("snapshot"));
}

fn reload_problems(health: &Reply) -> String {
    health.body["reload"]["last_error"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c14_dangling_looping_and_directory_entries_are_reported_not_skipped() {
    let work = tempfile::tempdir().unwrap();
    let managed = work.path().join("managed");
    let elsewhere = work.path().join("elsewhere.cedar");
    std::fs::create_dir(&managed).unwrap();
    std::fs::write(&elsewhere, ask_delete_text()).unwrap();
    symlink(&elsewhere, managed.join("linked.cedar")).unwrap();
    let service = serve_watching(&managed, work.path()).await;
    let http = reqwest::Client::new();
    let asked = decision_of_delete(&http, &service).await;
    assert_eq!(asked.text("decision"), "ask", "{}", asked.body);

    // The link's target disappears: reported, and the running set (with the rule) stays.
    std::fs::remove_file(&elsewhere).unwrap();
    let health = wait_for_health(&http, &service, |health| {
        reload_problems(health).contains("linked.cedar")
    })
    .await
    .expect("a dangling policy symlink was not reported");
    assert_eq!(health.text("status"), "degraded", "{}", health.body);
    assert!(
        reload_problems(&health).contains("symlink whose target does not exist"),
        "{}",
        health.body
    );
    let kept = decision_of_delete(&http, &service).await;
    assert_eq!(kept.text("decision"), "ask", "{}", kept.body);
    assert!(kept.body["policies"]
        .to_string()
        .contains(ASK_DELETE_POLICY));

    // A directory named `*.cedar` and a symlink loop are reported too, by reload and validate.
    std::fs::create_dir(managed.join("folder.cedar")).unwrap();
    symlink(managed.join("loop.cedar"), managed.join("loop.cedar")).unwrap();
    let health = wait_for_health(&http, &service, |health| {
        let problems = reload_problems(health);
        problems.contains("folder.cedar") && problems.contains("loop.cedar")
    })
    .await
    .expect("a directory or loop was not reported");
    let problems = reload_problems(&health);
    assert!(problems.contains("is a directory"), "{problems}");
    assert!(problems.contains("is a symlink loop"), "{problems}");
    let (code, stdout, stderr) = askgate(&[
        "validate".as_ref(),
        "--policies".as_ref(),
        managed.as_os_str(),
    ]);
    assert_ne!(code, 0, "{stdout}{stderr}");
    for expected in ["linked.cedar", "folder.cedar", "loop.cedar", "3 problem(s)"] {
        assert!(stderr.contains(expected), "{expected}: {stderr}");
    }

    // Fixed: the watcher reloads a good set and `/healthz` is ok again.
    std::fs::remove_dir(managed.join("folder.cedar")).unwrap();
    std::fs::remove_file(managed.join("loop.cedar")).unwrap();
    std::fs::remove_file(managed.join("linked.cedar")).unwrap();
    let health = wait_for_health(&http, &service, |health| health.text("status") == "ok")
        .await
        .expect("the fixed directory was not reloaded");
    assert!(
        health.body["reload"]["last_error"].is_null(),
        "{}",
        health.body
    );
    let allowed = decision_of_delete(&http, &service).await;
    assert_eq!(allowed.text("decision"), "allow", "{}", allowed.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i18_an_edit_that_keeps_size_and_mtime_is_reloaded() {
    // `cp -p` onto an existing file, or `rsync -t --inplace`: the same inode, size and
    // modification time, other bytes. Only the content hash tells.
    let work = tempfile::tempdir().unwrap();
    let managed = work.path().join("managed");
    std::fs::create_dir(&managed).unwrap();
    let policy = managed.join("managed.cedar");
    let asking = ask_delete_text();
    std::fs::write(&policy, &asking).unwrap();
    let before = std::fs::metadata(&policy).unwrap();
    let service = serve_watching(&managed, work.path()).await;
    let http = reqwest::Client::new();
    let asked = decision_of_delete(&http, &service).await;
    assert_eq!(asked.text("decision"), "ask", "{}", asked.body);

    let placeholder = format!("//{}\n", "x".repeat(asking.len() - 3));
    assert_eq!(placeholder.len(), asking.len());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&policy)
        .unwrap();
    std::io::Write::write_all(&mut file, placeholder.as_bytes()).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&policy).unwrap();
    assert_eq!(
        (after.len(), after.modified().unwrap(), after.ino()),
        (before.len(), before.modified().unwrap(), before.ino()),
        "size, time and inode are unchanged"
    );

    let old = asked.text("snapshot").to_string();
    let health = wait_for_health(&http, &service, |health| health.text("snapshot") != old)
        .await
        .expect("the watcher never noticed an edit that kept size and mtime");
    assert_eq!(health.body["reload"]["reloads"], 1, "{}", health.body);
    let allowed = decision_of_delete(&http, &service).await;
    assert_eq!(allowed.text("decision"), "allow", "{}", allowed.body);
}
