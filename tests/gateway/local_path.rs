//! `project_write` with a `local_path` through `serve` (issue 3, client-facts §10.3): a file
//! swapped for a symlink to a secret between the path check and the read is refused and the
//! secret's bytes never reach the upstream. The swap is made at an exact moment through the
//! reader's test seam (`executor::projects::test_seam`), which the test arms for its own path.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use askgate::executor::projects::test_seam::{arm_for_tests, LocalPathStage};
use serde_json::{json, Value};

use super::harness::{main_session, Gateway, Reply};
use super::upstream::{RecordedUpstream, Route};

/// A working directory for the service and, beside it (outside), a secret file.
struct Workspace {
    _root: tempfile::TempDir,
    work: PathBuf,
    secret: PathBuf,
    marker: String,
}

fn workspace() -> Workspace {
    let root = tempfile::tempdir().expect("root");
    let work = root.path().join("work");
    std::fs::create_dir(&work).expect("work dir");
    let secret = root.path().join("secret.txt");
    let marker = format!("askgate-secret-{}", uuid::Uuid::new_v4().simple());
    std::fs::write(&secret, &marker).expect("secret");
    Workspace {
        _root: root,
        work,
        secret,
        marker,
    }
}

async fn serve_in(workspace: &Workspace) -> (RecordedUpstream, Gateway) {
    let upstream = RecordedUpstream::start().await;
    let gateway = Gateway::start_with(|raw| {
        upstream.configure(raw, Route::Org);
        raw.working_dir = Some(workspace.work.clone());
    })
    .await;
    (upstream, gateway)
}

async fn write_from(gateway: &Gateway, path: &str, local_path: &str) -> Reply {
    let input = json!({"method": "project_write", "path": path, "local_path": local_path});
    gateway.projects(&main_session("s-local"), input).await
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

fn success(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["result"]["isError"], false, "{}", reply.body);
    reply.body["result"]["result"].clone()
}

/// Arms the seam to replace `name` by a symlink to the secret when the reader reaches
/// `stage`; the flag says the swap ran.
fn swap_for_secret_at(stage: LocalPathStage, workspace: &Workspace, name: &str) -> Arc<AtomicBool> {
    let target = workspace.work.join(name);
    std::fs::write(&target, "innocent draft").expect("draft");
    let swapped = Arc::new(AtomicBool::new(false));
    let (flag, secret, path) = (swapped.clone(), workspace.secret.clone(), target.clone());
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

async fn project_read(gateway: &Gateway, path: &str) -> Reply {
    let input = json!({"method": "project_read", "path": path});
    gateway.projects(&main_session("s-local"), input).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_swapped_for_a_symlink_after_the_check_is_refused() {
    let workspace = workspace();
    let (upstream, gateway) = serve_in(&workspace).await;
    let swapped = swap_for_secret_at(LocalPathStage::Checked, &workspace, "swap.md");

    let mark = upstream.mark();
    let reply = write_from(&gateway, "team/swap.md", "swap.md").await;
    assert!(
        swapped.load(Ordering::SeqCst),
        "the swap ran between check and open"
    );
    assert!(is_symlink_to(
        &workspace.work.join("swap.md"),
        &workspace.secret
    ));
    assert_eq!(
        refusal(&reply),
        "local_path `swap.md` was replaced during the upload"
    );
    assert!(upstream.projects_effects_since(mark).is_empty(), "no write");
    assert!(!upstream.ever_received(&workspace.marker));

    let read = project_read(&gateway, "team/swap.md").await;
    assert!(refusal(&read).starts_with("No doc or file at \"team/swap.md\""));
    assert!(!upstream.ever_received(&workspace.marker));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swap_after_verification_still_uploads_only_the_checked_bytes() {
    let workspace = workspace();
    let (upstream, gateway) = serve_in(&workspace).await;
    let swapped = swap_for_secret_at(LocalPathStage::Verified, &workspace, "late.md");

    let mark = upstream.mark();
    let written = success(&write_from(&gateway, "team/late.md", "late.md").await);
    assert!(
        swapped.load(Ordering::SeqCst),
        "the swap ran before the read"
    );
    let absolute = workspace.work.join("late.md").display().to_string();
    assert_eq!(written["local_path"], absolute.as_str());
    assert_eq!(upstream.projects_effects_since(mark), ["org POST docs"]);
    let read = success(&project_read(&gateway, "team/late.md").await);
    assert_eq!(
        read["content"], "innocent draft",
        "read from the descriptor"
    );
    assert!(!upstream.ever_received(&workspace.marker));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regular_file_is_uploaded_and_symlinks_at_check_time_are_refused() {
    let workspace = workspace();
    let (upstream, gateway) = serve_in(&workspace).await;
    std::fs::write(workspace.work.join("draft.md"), "drafted").expect("draft");
    let written = success(&write_from(&gateway, "team/draft.md", "draft.md").await);
    assert_eq!(written["path"], "team/draft.md");
    let read = success(&project_read(&gateway, "team/draft.md").await);
    assert_eq!(read["content"], "drafted");

    let mark = upstream.mark();
    let outside = workspace.work.join("outside.md");
    std::os::unix::fs::symlink(&workspace.secret, &outside).expect("symlink");
    let text = refusal(&write_from(&gateway, "team/a.md", "outside.md").await);
    assert_eq!(
        text,
        "local_path `outside.md` resolves outside the working directory"
    );
    std::os::unix::fs::symlink(
        workspace.work.join("draft.md"),
        workspace.work.join("alias.md"),
    )
    .expect("symlink");
    let text = refusal(&write_from(&gateway, "team/b.md", "alias.md").await);
    assert_eq!(text, "local_path `alias.md` was replaced during the upload");
    let text = refusal(&write_from(&gateway, "team/c.md", "../secret.txt").await);
    assert_eq!(
        text,
        "local_path `../secret.txt` must be inside the working directory"
    );
    assert!(upstream.projects_effects_since(mark).is_empty(), "no write");
    assert!(!upstream.ever_received(&workspace.marker));
}
