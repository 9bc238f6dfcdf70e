//! `project_write` with a `local_path` through `serve` (issue 3, N1, client-facts §10.3), each
//! service started from a real configuration file with its own decision log, policy and spill
//! directories. A `local_path` is a path on askgate's machine: it is read only under
//! `projects.local_path_root` and never from askgate's own files, and both are decided — and
//! logged — as denies before anything is sent upstream. A file swapped for a symlink to a
//! secret between the path check and the read is refused and the secret's bytes never reach
//! the upstream; the swap is made at an exact moment through the reader's test seam
//! (`executor::projects::test_seam`), which the test arms for its own path.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use askgate::executor::projects::test_seam::{arm_for_tests, LocalPathStage};
use askgate::server::config::RawConfig;
use serde_json::{json, Value};

use super::harness::{main_session, Gateway, Reply};
use super::hook_log::records;
use super::upstream::{RecordedUpstream, Route};

const AGENT_ONE: &str = "agent-one-token-0123456789abcdef0123456789";
const ALICE: &str = "alice-approver-token-0123456789abcdef012345";

/// askgate's home as an operator lays it out, the directory `serve` starts in: `askgate.json`
/// (the callers, the log, policy and spill directories and, when given, the root), `logs/`,
/// `policies/`, `spill/`, and `docs/draft.md`. Beside it, outside everything, `docs/draft.md`
/// of a separate root and a secret.
struct Home {
    dir: tempfile::TempDir,
    home: PathBuf,
    config: PathBuf,
    logs: PathBuf,
    separate_root: PathBuf,
    secret: PathBuf,
    marker: String,
}

fn home() -> Home {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("cfgdir");
    let separate_root = dir.path().join("root");
    for sub in ["policies", "spill", "docs"] {
        std::fs::create_dir_all(home.join(sub)).expect("home dirs");
    }
    std::fs::create_dir_all(separate_root.join("docs")).expect("root dirs");
    std::fs::write(home.join("policies/extra.cedar"), "// nothing extra\n").expect("policy");
    std::fs::write(home.join("spill/project-doc-1.txt"), "spilled").expect("spill");
    std::fs::write(home.join("docs/draft.md"), "drafted at home").expect("draft");
    std::fs::write(separate_root.join("docs/draft.md"), "drafted").expect("draft");
    let marker = format!("askgate-secret-{}", uuid::Uuid::new_v4().simple());
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, &marker).expect("secret");
    Home {
        config: home.join("askgate.json"),
        logs: home.join("logs"),
        home,
        separate_root,
        secret,
        marker,
        dir,
    }
}

impl Home {
    /// Writes `askgate.json` (with `root` as `projects.local_path_root`, if any) and serves
    /// from it against a recorded upstream.
    async fn serve(&self, root: Option<&Path>) -> (RecordedUpstream, Gateway) {
        let mut config = json!({
            "callers": [
                {"token": AGENT_ONE, "role": "agent", "principal": "agent-one"},
                {"token": ALICE, "role": "approver", "principal": "alice"},
            ],
            "log_dir": self.logs,
            "policies": [self.home.join("policies")],
            "spill_dir": self.home.join("spill"),
        });
        if let Some(root) = root {
            config["projects"] = json!({"local_path_root": root});
        }
        std::fs::write(&self.config, config.to_string()).expect("config file");
        let upstream = RecordedUpstream::start().await;
        let file = RawConfig::from_file(&self.config).expect("config file reads");
        let gateway = Gateway::start_with(|raw| {
            *raw = raw.clone().overridden_by(file);
            upstream.configure(raw, Route::Org);
        })
        .await;
        (upstream, gateway)
    }

    /// The decision log's current file.
    fn log_file(&self) -> PathBuf {
        std::fs::read_dir(&self.logs)
            .expect("the log directory")
            .map(|entry| entry.expect("entry").path())
            .find(|path| path.to_string_lossy().ends_with(".jsonl"))
            .expect("a log file")
    }

    /// No answer names a path of this test's machine (askgate's absolute paths).
    fn assert_no_absolute_path(&self, reply: &Reply) {
        let body = reply.body.to_string();
        let temp = self.dir.path().display().to_string();
        assert!(!body.contains(&temp), "an absolute path in {body}");
    }
}

async fn write_from(gateway: &Gateway, path: &str, local_path: &str) -> Reply {
    let input = json!({"method": "project_write", "path": path, "local_path": local_path});
    let body = json!({"session": main_session("s-local"), "input": input});
    gateway
        .post("/v1/projects/call", Some(AGENT_ONE), Some(body))
        .await
}

async fn project_read(gateway: &Gateway, path: &str) -> Reply {
    let input = json!({"method": "project_read", "path": path});
    let body = json!({"session": main_session("s-local"), "input": input});
    gateway
        .post("/v1/projects/call", Some(AGENT_ONE), Some(body))
        .await
}

/// Denied at decision time by `policy`, with nothing sent upstream for it.
async fn assert_denied(
    home: &Home,
    upstream: &RecordedUpstream,
    gateway: &Gateway,
    local_path: &str,
    policy: &str,
) -> Reply {
    let mark = upstream.mark();
    let reply = write_from(gateway, "team/stolen.md", local_path).await;
    assert_eq!(reply.status, 403, "{local_path}: {}", reply.body);
    assert_eq!(reply.decision(), "deny", "{local_path}: {}", reply.body);
    assert_eq!(reply.policies(), [policy], "{local_path}: {}", reply.body);
    let reason = reply.body["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("`projects.local_path_root`"),
        "{local_path}: {reason}"
    );
    assert!(
        upstream.seen_since(mark).is_empty(),
        "{local_path}: decided before anything went upstream"
    );
    home.assert_no_absolute_path(&reply);
    reply
}

/// The logged decision records of denies by `policy`.
fn logged_denies(home: &Home, policy: &str) -> Vec<Value> {
    records(&home.logs)
        .into_iter()
        .filter(|record| record["kind"] == "decision" && record["decision"] == "deny")
        .filter(|record| record["policies"] == json!([policy]))
        .collect()
}

/// The executor's refusal text of an allowed call that failed.
fn refusal(reply: &Reply) -> String {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.decision(), "allow", "{}", reply.body);
    assert_eq!(reply.body["result"]["isError"], true, "{}", reply.body);
    reply.body["result"]["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_string()
}

/// `docs/draft.md` under the root is uploaded, and the answer names it relative to the root.
async fn upload_draft(gateway: &Gateway) {
    let reply = write_from(gateway, "team/draft.md", "docs/draft.md").await;
    assert_eq!(
        success(&reply)["local_path"],
        "docs/draft.md",
        "{}",
        reply.body
    );
}

fn success(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["result"]["isError"], false, "{}", reply.body);
    reply.body["result"]["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_local_path_never_reads_the_config_file_and_is_denied_unless_a_root_is_set() {
    // The finding's reproduction: `serve --config askgate.json` from the directory holding it,
    // then `local_path: "askgate.json"` — with no root configured (the default).
    let home = home();
    let (upstream, gateway) = home.serve(None).await;
    let config = home.config.display().to_string();
    for local_path in ["askgate.json", config.as_str(), "docs/draft.md"] {
        let denied = assert_denied(
            &home,
            &upstream,
            &gateway,
            local_path,
            "projects.local-path-root-unset",
        )
        .await;
        assert!(
            denied.body["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("not set")),
            "{}",
            denied.body
        );
    }
    let read = project_read(&gateway, "team/stolen.md").await;
    assert!(refusal(&read).starts_with("No doc or file at \"team/stolen.md\""));
    assert!(
        !upstream.ever_received(ALICE),
        "the approver token stayed home"
    );
    assert!(!upstream.ever_received(AGENT_ONE));

    // The log says deny, with the reason and the fact it was decided on.
    let logged = logged_denies(&home, "projects.local-path-root-unset");
    assert_eq!(logged.len(), 3, "{logged:?}");
    for record in &logged {
        assert!(
            record["reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("`projects.local_path_root`")),
            "{record}"
        );
        let projects = &record["facts"]["context"]["projects"];
        assert_eq!(projects["local_path_place"], "root_unset", "{record}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_under_the_root_askgates_own_files_are_refused_by_name_symlink_and_hard_link() {
    // The careless operator: the root is the very directory that holds the configuration.
    let home = home();
    let (upstream, gateway) = home.serve(Some(&home.home)).await;
    upload_draft(&gateway).await;
    let log_file = home.log_file();
    let log_file = format!(
        "logs/{}",
        log_file.file_name().expect("name").to_string_lossy()
    );
    let docs = home.home.join("docs");
    std::os::unix::fs::symlink(&home.config, docs.join("config-link.json")).expect("symlink");
    std::fs::hard_link(&home.config, docs.join("config-copy.md")).expect("hard link");
    std::fs::hard_link(home.home.join(&log_file), docs.join("log.md")).expect("hard link");
    std::os::unix::fs::symlink(home.home.join("policies"), docs.join("rules")).expect("symlink");
    let owned = [
        "askgate.json",
        "./docs/../askgate.json",
        "docs/config-link.json",
        "docs/config-copy.md",
        log_file.as_str(),
        "docs/log.md",
        "policies/extra.cedar",
        "docs/rules/extra.cedar",
        "spill/project-doc-1.txt",
    ];
    for local_path in owned {
        assert_denied(
            &home,
            &upstream,
            &gateway,
            local_path,
            "projects.local-path-service-file",
        )
        .await;
    }
    assert!(
        !upstream.ever_received(ALICE),
        "the approver token stayed home"
    );
    let logged = logged_denies(&home, "projects.local-path-service-file");
    assert_eq!(logged.len(), owned.len(), "{logged:?}");
    assert!(logged.iter().all(|record| {
        record["facts"]["context"]["projects"]["local_path_place"] == "service_file"
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_a_separate_root_uploads_its_files_and_reaches_nothing_else() {
    let home = home();
    let (upstream, gateway) = home.serve(Some(&home.separate_root)).await;
    upload_draft(&gateway).await;
    let read = success(&project_read(&gateway, "team/draft.md").await);
    assert_eq!(read["content"], "drafted");

    // A hard link into askgate's files from under the root is still askgate's file.
    let root = &home.separate_root;
    let log_file = home.log_file();
    std::fs::hard_link(&home.config, root.join("config-copy.md")).expect("hard link");
    std::fs::hard_link(&log_file, root.join("log.md")).expect("hard link");
    for local_path in ["config-copy.md", "log.md"] {
        let place = "projects.local-path-service-file";
        assert_denied(&home, &upstream, &gateway, local_path, place).await;
    }
    // Outside the root, lexically or through a symlink.
    std::os::unix::fs::symlink(&home.config, root.join("config-link.json")).expect("symlink");
    std::os::unix::fs::symlink(&home.secret, root.join("secret-link.txt")).expect("symlink");
    let (config, secret) = (home.config.display(), home.secret.display());
    let outside = [
        "../cfgdir/askgate.json".to_string(),
        config.to_string(),
        secret.to_string(),
        "../secret.txt".to_string(),
        "config-link.json".to_string(),
        "secret-link.txt".to_string(),
    ];
    for local_path in &outside {
        let place = "projects.local-path-outside-root";
        assert_denied(&home, &upstream, &gateway, local_path, place).await;
    }
    let place = "projects.local-path-unresolved";
    assert_denied(&home, &upstream, &gateway, "docs/missing.md", place).await;
    assert!(!upstream.ever_received(&home.marker));
    assert!(!upstream.ever_received(ALICE));
    let logged = logged_denies(&home, "projects.local-path-outside-root");
    assert_eq!(logged.len(), outside.len(), "{logged:?}");
}

/// Arms the seam to replace `name` under the root by a symlink to the secret when the reader
/// reaches `stage`; the flag says the swap ran.
fn swap_for_secret_at(stage: LocalPathStage, home: &Home, name: &str) -> Arc<AtomicBool> {
    let target = home.separate_root.join(name);
    std::fs::write(&target, "innocent draft").expect("draft");
    let swapped = Arc::new(AtomicBool::new(false));
    let (flag, secret, path) = (swapped.clone(), home.secret.clone(), target.clone());
    arm_for_tests(stage, target, move || {
        std::fs::remove_file(&path).expect("remove the checked file");
        std::os::unix::fs::symlink(&secret, &path).expect("symlink to the secret");
        flag.store(true, Ordering::SeqCst);
    });
    swapped
}

fn is_symlink_to(path: &Path, target: &Path) -> bool {
    std::fs::read_link(path).is_ok_and(|link| link == target)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_swapped_for_a_symlink_after_the_check_is_refused() {
    let home = home();
    let (upstream, gateway) = home.serve(Some(&home.separate_root)).await;
    let swapped = swap_for_secret_at(LocalPathStage::Checked, &home, "swap.md");

    let mark = upstream.mark();
    let reply = write_from(&gateway, "team/swap.md", "swap.md").await;
    assert!(
        swapped.load(Ordering::SeqCst),
        "the swap ran between check and open"
    );
    assert!(is_symlink_to(
        &home.separate_root.join("swap.md"),
        &home.secret
    ));
    assert_eq!(
        refusal(&reply),
        "local_path `swap.md` was replaced during the upload"
    );
    home.assert_no_absolute_path(&reply);
    assert!(upstream.projects_effects_since(mark).is_empty(), "no write");
    assert!(!upstream.ever_received(&home.marker));

    let read = project_read(&gateway, "team/swap.md").await;
    assert!(refusal(&read).starts_with("No doc or file at \"team/swap.md\""));
    assert!(!upstream.ever_received(&home.marker));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swap_after_verification_still_uploads_only_the_checked_bytes() {
    let home = home();
    let (upstream, gateway) = home.serve(Some(&home.separate_root)).await;
    let swapped = swap_for_secret_at(LocalPathStage::Verified, &home, "late.md");

    let mark = upstream.mark();
    let reply = write_from(&gateway, "team/late.md", "late.md").await;
    let written = success(&reply);
    assert!(
        swapped.load(Ordering::SeqCst),
        "the swap ran before the read"
    );
    assert_eq!(written["local_path"], "late.md");
    home.assert_no_absolute_path(&reply);
    assert_eq!(upstream.projects_effects_since(mark), ["org POST docs"]);
    let read = success(&project_read(&gateway, "team/late.md").await);
    assert_eq!(
        read["content"], "innocent draft",
        "read from the descriptor"
    );
    assert!(!upstream.ever_received(&home.marker));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_symlink_under_the_root_is_refused_when_opened() {
    let home = home();
    let (upstream, gateway) = home.serve(Some(&home.separate_root)).await;
    let root = &home.separate_root;
    std::os::unix::fs::symlink(root.join("docs/draft.md"), root.join("alias.md")).expect("link");
    let mark = upstream.mark();
    let reply = write_from(&gateway, "team/b.md", "alias.md").await;
    assert_eq!(
        refusal(&reply),
        "local_path `alias.md` was replaced during the upload"
    );
    home.assert_no_absolute_path(&reply);
    assert!(upstream.projects_effects_since(mark).is_empty(), "no write");
}
