//! End-to-end tests of project_write, project_delete, credentials and transport errors
//! against the sandbox.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::harness::{FakeTokens, Harness};
use super::*;
use crate::sandbox::projects::seed::*;

#[tokio::test]
async fn write_creates_under_claude_and_counts_knowledge() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let result = harness
        .run(
            json!({"method": "project_write", "path": "./todo.md", "content": "12345",
            "present_to_user": true}),
        )
        .await
        .unwrap();
    assert_eq!(result["path"], "claude/todo.md");
    assert_eq!(result["replaced"], false);
    assert_eq!(result["present_to_user"], true);
    assert!(result.get("local_path").is_none());
    assert_eq!(harness.sandbox.knowledge_size(), 1002);
    let read = harness
        .run(json!({"method": "project_read", "path": "claude/todo.md"}))
        .await
        .unwrap();
    assert_eq!(read["content"], "12345");
}

#[tokio::test]
async fn replace_on_the_org_route_keeps_the_uuid() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let result = harness
        .run(json!({"method": "project_write", "path": "notes.md", "content": "new"}))
        .await
        .unwrap();
    assert_eq!(result["replaced"], true);
    assert_eq!(result["doc_uuid"], NOTES_DOC_UUID);
    assert_eq!(result["present_to_user"], false);
}

#[tokio::test]
async fn replace_on_the_session_route_deletes_then_creates() {
    let harness = Harness::start(ProjectsRoute::Session).await;
    let result = harness
        .run(json!({"method": "project_write", "path": "notes.md", "content": "new"}))
        .await
        .unwrap();
    assert_eq!(result["replaced"], true);
    assert_ne!(result["doc_uuid"], NOTES_DOC_UUID);
    let info = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap();
    let names: Vec<&str> = info["docs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|doc| doc["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["big.md", "notes.md"]);
}

#[tokio::test]
async fn delete_removes_docs_and_refuses_uploads() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let result = harness
        .run(json!({"method": "project_delete", "path": "notes.md"}))
        .await
        .unwrap();
    assert_eq!(result, json!({"path": "notes.md", "deleted": true}));
    let error = harness
        .run(json!({"method": "project_delete", "path": "spec.pdf"}))
        .await
        .unwrap_err();
    assert!(error
        .to_string()
        .contains("is a file upload; project_delete only removes text docs"));
    let error = harness
        .run(json!({"method": "project_delete", "path": "notes.md"}))
        .await
        .unwrap_err();
    assert!(matches!(error, ProjectsError::NotFound { .. }));
}

#[tokio::test]
async fn write_from_local_path_reports_the_path_relative_to_the_root() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    std::fs::write(harness.working.path().join("draft.md"), "drafted").unwrap();
    let result = harness
        .run(json!({"method": "project_write", "path": "team/draft.md", "local_path": "draft.md"}))
        .await
        .unwrap();
    assert_eq!(result["path"], "team/draft.md");
    assert_eq!(
        result["local_path"], "draft.md",
        "never askgate's absolute path"
    );
    let read = harness
        .run(json!({"method": "project_read", "path": "team/draft.md"}))
        .await;
    assert_eq!(read.unwrap()["content"], "drafted");
}

#[tokio::test]
async fn local_path_outside_or_symlinked_is_refused_before_any_request() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let outside = harness.spill.path().join("secret.md");
    std::fs::write(&outside, "secret").unwrap();
    let error = harness
        .run(json!({"method": "project_write", "path": "a.md",
            "local_path": outside.display().to_string()}))
        .await
        .unwrap_err();
    assert!(error
        .to_string()
        .ends_with("must be inside `projects.local_path_root`"));
    std::os::unix::fs::symlink(&outside, harness.working.path().join("link.md")).unwrap();
    let error = harness
        .run(json!({"method": "project_write", "path": "a.md", "local_path": "link.md"}))
        .await
        .unwrap_err();
    assert!(error
        .to_string()
        .contains("resolves outside `projects.local_path_root`"));
    assert_eq!(harness.sandbox.requests(), 0);
}

#[tokio::test]
async fn unauthorized_refreshes_once_and_retries() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    *harness.valid.lock().unwrap() = "access-2".to_owned();
    let info = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap();
    assert_eq!(info["name"], "Handbook");
    assert_eq!(harness.tokens.refreshes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_second_unauthorized_is_an_error_with_tokens_redacted() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    *harness.valid.lock().unwrap() = "access-3".to_owned();
    let error = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert_eq!(
        text,
        "Projects API: detail failed (HTTP 401): invalid_token: Bearer [redacted-oauth-token]"
    );
    assert_eq!(
        harness.tokens.refreshes.load(Ordering::SeqCst),
        1,
        "one refresh only"
    );
}

#[tokio::test]
async fn session_route_does_not_refresh() {
    let harness = Harness::start(ProjectsRoute::Session).await;
    *harness.valid.lock().unwrap() = "other".to_owned();
    let error = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(401));
    assert!(!error.to_string().contains("access-1"));
    assert_eq!(harness.tokens.refreshes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn unknown_project_is_an_api_error() {
    let mut harness = Harness::start(ProjectsRoute::Org).await;
    harness.executor.config.project_uuid = "22222222-0000-4000-8000-000000000000".to_owned();
    let error = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Projects API: detail failed (HTTP 404): not_found"
    );
    harness.executor.config.project_uuid = String::new();
    let error = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap_err();
    assert!(matches!(error, ProjectsError::NoProject));
}

#[tokio::test]
async fn missing_session_token_is_refused() {
    let mut harness = Harness::start(ProjectsRoute::Session).await;
    harness.tokens = Arc::new(FakeTokens {
        access: Mutex::new("a".to_owned()),
        fresh: "b".to_owned(),
        session: None,
        refreshes: AtomicU32::new(0),
    });
    let source: Arc<dyn TokenSource> = harness.tokens.clone();
    harness.executor.tokens = source;
    let error = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap_err();
    assert!(matches!(error, ProjectsError::NoSessionToken));
}

#[tokio::test]
async fn unreachable_upstream_is_a_transport_error() {
    let mut harness = Harness::start(ProjectsRoute::Org).await;
    harness.executor.config.base_url = "http://127.0.0.1:9".to_owned();
    harness.executor.config.timeout = std::time::Duration::from_secs(2);
    let error = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("Projects API: detail failed: "),
        "{error}"
    );
}
