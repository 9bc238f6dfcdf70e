//! Hot reload: `POST /v1/admin/reload` in a loop under concurrent `/v1/authorize` load (no
//! failed request, every decision names a known snapshot and agrees with it), an invalid
//! change refused and reported in `/healthz`, and the directory watcher.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use askgate::server::admin::spawn_watcher;

use super::harness::{
    ask_delete_text, authorize, delete_notes, KnownSets, Reply, Service, Setup, AGENT,
    ASK_DELETE_FILE, ASK_DELETE_POLICY,
};

const LOADERS: usize = 8;
const LOAD_FOR: Duration = Duration::from_secs(3);
/// Good reloads at least, however slow a debug build under load makes each one (~0.3 s idle).
const MIN_RELOADS: usize = 6;

/// References an action the schema does not declare: parses, fails strict validation.
const INVALID_POLICY: &str = r#"@id("broken.unknown-action")
forbid (principal, action == Action::"no_such_action", resource);
"#;

/// One decision as a loader saw it.
#[derive(Debug, Clone)]
struct Seen {
    status: u16,
    decision: String,
    snapshot: String,
    policies: Vec<String>,
}

impl Seen {
    fn of(reply: &Reply) -> Seen {
        let policies = reply.body["policies"]
            .as_array()
            .map(|ids| {
                ids.iter()
                    .filter_map(|id| id.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Seen {
            status: reply.status,
            decision: reply.text("decision").to_string(),
            snapshot: reply.text("snapshot").to_string(),
            policies,
        }
    }
}

/// Asserts the decision is the one its snapshot makes: allow under A, ask under B.
fn assert_consistent(seen: &Seen, sets: &KnownSets) {
    assert_eq!(seen.status, 200, "{seen:?}");
    if seen.snapshot == sets.baseline_only {
        assert_eq!(seen.decision, "allow", "{seen:?}");
        assert!(
            !seen.policies.iter().any(|id| id == ASK_DELETE_POLICY),
            "{seen:?}"
        );
    } else if seen.snapshot == sets.with_ask_delete {
        assert_eq!(seen.decision, "ask", "{seen:?}");
        assert!(
            seen.policies.iter().any(|id| id == ASK_DELETE_POLICY),
            "{seen:?}"
        );
    } else {
        panic!("a decision named an unknown snapshot: {seen:?}");
    }
}

fn spawn_loaders(
    service: &Service,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Vec<Seen>>> {
    (0..LOADERS)
        .map(|loader| {
            let http = service.http.clone();
            let url = service.url.clone();
            let stop = Arc::clone(stop);
            tokio::spawn(async move {
                let body = delete_notes(&format!("load-{loader}"));
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    seen.push(Seen::of(&authorize(&http, &url, &body).await));
                }
                seen
            })
        })
        .collect()
}

/// Writes or removes the example so the managed directory holds set B or set A.
fn switch_to(managed: &Path, with_ask_delete: bool) {
    let path = managed.join(ASK_DELETE_FILE);
    if with_ask_delete {
        std::fs::write(path, ask_delete_text()).unwrap();
    } else {
        std::fs::remove_file(path).unwrap();
    }
}

/// An invalid file is refused, reported in `/healthz`, and decisions stay on `current`.
async fn refuse_an_invalid_change(service: &Service, managed: &Path, current: &str) {
    let broken = managed.join("broken.cedar");
    std::fs::write(&broken, INVALID_POLICY).unwrap();
    let report = service.reload().await;
    assert_eq!(report.status, 200, "{}", report.body);
    assert_eq!(report.body["reloaded"], false, "{}", report.body);
    assert_eq!(report.text("snapshot"), current, "{}", report.body);
    assert!(
        report.body["problems"].to_string().contains("broken.cedar"),
        "{}",
        report.body
    );
    let health = service.healthz().await;
    assert_eq!(health.status, 200);
    assert_eq!(health.text("status"), "degraded", "{}", health.body);
    assert_eq!(health.text("snapshot"), current, "{}", health.body);
    assert!(
        health.body["reload"]["last_error"]
            .to_string()
            .contains("broken.cedar"),
        "{}",
        health.body
    );
    let decided = service.authorize(&delete_notes("invalid-phase")).await;
    assert_eq!(decided.text("snapshot"), current, "{}", decided.body);
    std::fs::remove_file(broken).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_in_a_loop_under_load_fails_no_request_and_mixes_no_sets() {
    let managed = tempfile::tempdir().unwrap();
    let sets = KnownSets::for_managed_dir(managed.path());
    let service = Service::start(Setup {
        policies: vec![managed.path().to_path_buf()],
        ..Setup::default()
    })
    .await;
    assert_eq!(service.healthz().await.text("snapshot"), sets.baseline_only);
    // Reload is for approvers only.
    let agent = super::harness::reload(&service.http, &service.url, AGENT).await;
    assert_eq!(agent.status, 403, "{}", agent.body);

    let stop = Arc::new(AtomicBool::new(false));
    let loaders = spawn_loaders(&service, &stop);
    let started = Instant::now();
    let (mut with_ask_delete, mut reloads) = (false, 0usize);
    while started.elapsed() < LOAD_FOR || reloads < MIN_RELOADS {
        with_ask_delete = !with_ask_delete;
        switch_to(managed.path(), with_ask_delete);
        let report = service.reload().await;
        let expected = if with_ask_delete {
            &sets.with_ask_delete
        } else {
            &sets.baseline_only
        };
        assert_eq!(report.status, 200, "{}", report.body);
        assert_eq!(report.body["reloaded"], true, "{}", report.body);
        assert_eq!(
            report.text("snapshot"),
            expected.as_str(),
            "{}",
            report.body
        );
        reloads += 1;
        if reloads == MIN_RELOADS / 2 {
            refuse_an_invalid_change(&service, managed.path(), expected).await;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut seen = Vec::new();
    for loader in loaders {
        seen.extend(loader.await.unwrap());
    }

    assert!(seen.len() >= 100, "only {} requests", seen.len());
    for one in &seen {
        assert_consistent(one, &sets);
    }
    for hash in [&sets.baseline_only, &sets.with_ask_delete] {
        assert!(
            seen.iter().any(|one| &one.snapshot == hash),
            "no decision under {hash}"
        );
    }
    // The next good reload cleared the reported problem.
    let health = service.healthz().await;
    assert_eq!(health.text("status"), "ok", "{}", health.body);
    eprintln!(
        "reload under load: {} requests, {reloads} reloads in {:?}",
        seen.len(),
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_applies_a_changed_directory_without_a_reload_call() {
    let managed = tempfile::tempdir().unwrap();
    let sets = KnownSets::for_managed_dir(managed.path());
    let service = Service::start(Setup {
        policies: vec![managed.path().to_path_buf()],
        ..Setup::default()
    })
    .await;
    let watcher = spawn_watcher(service.state.admin.clone(), Duration::from_millis(100));
    // Let the watcher take its first look at the directory.
    tokio::time::sleep(Duration::from_millis(300)).await;

    switch_to(managed.path(), true);
    assert!(
        service
            .wait_for_snapshot(&sets.with_ask_delete, Duration::from_secs(10))
            .await,
        "the watcher did not apply the new file: {}",
        service.healthz().await.body
    );
    let asked = service.authorize(&delete_notes("watched")).await;
    assert_eq!(asked.text("decision"), "ask", "{}", asked.body);

    switch_to(managed.path(), false);
    assert!(
        service
            .wait_for_snapshot(&sets.baseline_only, Duration::from_secs(10))
            .await,
        "the watcher did not apply the removal: {}",
        service.healthz().await.body
    );
    let allowed = service.authorize(&delete_notes("watched")).await;
    assert_eq!(allowed.text("decision"), "allow", "{}", allowed.body);
    watcher.abort();
}

/// The watcher takes its first fingerprint when its task first runs, not when the running
/// snapshot was loaded: a change made in between is never applied (until another change).
#[tokio::test]
async fn a_change_right_after_the_watcher_starts_is_applied() {
    let managed = tempfile::tempdir().unwrap();
    let sets = KnownSets::for_managed_dir(managed.path());
    let service = Service::start(Setup {
        policies: vec![managed.path().to_path_buf()],
        ..Setup::default()
    })
    .await;
    let watcher = spawn_watcher(service.state.admin.clone(), Duration::from_millis(100));
    // No await between the spawn and the change: on this single-threaded runtime the task has
    // not run yet, exactly like `serve` between `boot` and the watcher's first poll.
    switch_to(managed.path(), true);
    let applied = service
        .wait_for_snapshot(&sets.with_ask_delete, Duration::from_secs(10))
        .await;
    watcher.abort();
    assert!(
        applied,
        "the change was never applied: {}",
        service.healthz().await.body
    );
}

/// An invalid shadow change must be reported like an invalid live one; today the failed
/// shadow load is dropped silently and `/healthz` says `ok`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_shadow_change_is_reported_in_healthz() {
    let managed = tempfile::tempdir().unwrap();
    let shadow = tempfile::tempdir().unwrap();
    let service = Service::start(Setup {
        policies: vec![managed.path().to_path_buf()],
        shadow_policies: vec![shadow.path().to_path_buf()],
        ..Setup::default()
    })
    .await;
    let before = service.healthz().await;
    assert_eq!(before.text("status"), "ok", "{}", before.body);
    std::fs::write(shadow.path().join("broken.cedar"), INVALID_POLICY).unwrap();
    let report = service.reload().await;
    let health = service.healthz().await;
    assert_eq!(
        health.text("shadow"),
        before.text("shadow"),
        "{}",
        health.body
    );
    assert_eq!(health.text("status"), "degraded", "{}", health.body);
    assert!(
        format!("{}{}", report.body, health.body).contains("broken.cedar"),
        "report {} health {}",
        report.body,
        health.body
    );
}

/// One generation (issue 39 §1): a change whose live set loads but whose approving set does
/// not is refused as a whole — the live set is not swapped either, so no call is decided on a
/// new live set beside the old approving set — and reported naming the approving set. Fixed,
/// the next reload takes both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i39_a_change_whose_approving_set_does_not_load_keeps_the_whole_generation() {
    let managed = tempfile::tempdir().unwrap();
    let service = Service::start(Setup {
        policies: vec![managed.path().to_path_buf()],
        ..Setup::default()
    })
    .await;
    let before = service.healthz().await.text("snapshot").to_string();
    let approving = managed.path().join("approving");
    std::fs::create_dir(&approving).unwrap();
    std::fs::write(approving.join("broken.cedar"), INVALID_POLICY).unwrap();
    switch_to(managed.path(), true);
    let report = service.reload().await;
    assert_eq!(report.body["reloaded"], false, "{}", report.body);
    assert_eq!(report.text("snapshot"), before, "{}", report.body);
    assert!(
        report.body["problems"].to_string().contains("approving: "),
        "{}",
        report.body
    );
    let health = service.healthz().await;
    assert_eq!(health.text("snapshot"), before, "{}", health.body);
    assert_eq!(health.text("status"), "degraded", "{}", health.body);
    let decided = service.authorize(&delete_notes("one-generation")).await;
    assert_eq!(decided.text("snapshot"), before, "{}", decided.body);

    std::fs::remove_file(approving.join("broken.cedar")).unwrap();
    let report = service.reload().await;
    assert_eq!(report.body["reloaded"], true, "{}", report.body);
    assert_ne!(report.text("snapshot"), before, "{}", report.body);
    assert_eq!(service.healthz().await.text("status"), "ok");
}
