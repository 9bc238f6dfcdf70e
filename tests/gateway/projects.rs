//! Projects through `/v1/projects/call` end to end (issue 3, client-facts §10): inline, spilled
//! and raw reads, the size-mismatch re-fetch, the search fallback, and the pre-request refusals.

use std::os::unix::fs::PermissionsExt;

use serde_json::{json, Value};

use super::harness::{assert_policy, main_session, Gateway, Reply};

async fn call(gateway: &Gateway, input: Value) -> Reply {
    gateway.projects(&main_session("s-projects"), input).await
}

/// The `result` object of an allowed Projects call.
fn result(reply: &Reply) -> &Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.decision(), "allow");
    assert_eq!(reply.body["result"]["isError"], false, "{}", reply.body);
    &reply.body["result"]["result"]
}

fn saved_file(gateway: &Gateway, result: &Value) -> std::path::PathBuf {
    let path = std::path::PathBuf::from(result["local_file"].as_str().expect("local_file"));
    assert!(path.starts_with(gateway.spill.path()), "{}", path.display());
    let mode = std::fs::metadata(&path)
        .expect("saved")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{}", path.display());
    path
}

async fn projects_requests(gateway: &Gateway) -> u64 {
    gateway.stats().await["projects_requests"]
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_come_back_inline_spilled_or_raw() {
    let gateway = Gateway::start().await;
    let notes = call(
        &gateway,
        json!({"method": "project_read", "path": "notes.md"}),
    )
    .await;
    let notes = result(&notes);
    assert!(
        notes["content"]
            .as_str()
            .is_some_and(|text| text.starts_with("# Notes")),
        "{notes}"
    );
    assert!(notes.get("local_file").is_none());

    let big = call(
        &gateway,
        json!({"method": "project_read", "path": "big.md"}),
    )
    .await;
    let big = result(&big);
    assert!(big.get("content").is_none(), "{big}");
    let spilled = saved_file(&gateway, big);
    assert_eq!(
        std::fs::metadata(&spilled).expect("spilled").len(),
        300 * 1024
    );
    assert!(big["notice"]
        .as_str()
        .is_some_and(|notice| notice.contains("262144-byte inline limit")));

    let logo = call(
        &gateway,
        json!({"method": "project_read", "path": "logo.png"}),
    )
    .await;
    let logo = result(&logo);
    let raw = std::fs::read(saved_file(&gateway, logo)).expect("raw");
    assert_eq!(raw.len(), 2048);
    assert_eq!(raw.get(..4), Some(&[0x89, b'P', b'N', b'G'][..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raw_size_mismatch_is_fetched_once_more() {
    let gateway = Gateway::start().await;
    gateway
        .fault(json!({"fault": "raw_size_mismatch", "count": 1}))
        .await;
    let before = projects_requests(&gateway).await;
    let logo = call(
        &gateway,
        json!({"method": "project_read", "path": "logo.png"}),
    )
    .await;
    let raw = std::fs::read(saved_file(&gateway, result(&logo))).expect("raw");
    assert_eq!(raw.len(), 2048);
    // The detail, the short download, then the one re-fetch.
    assert_eq!(projects_requests(&gateway).await - before, 3);

    gateway
        .fault(json!({"fault": "raw_size_mismatch", "count": 2}))
        .await;
    let failed = call(
        &gateway,
        json!({"method": "project_read", "path": "logo.png"}),
    )
    .await;
    assert_eq!(failed.body["result"]["isError"], true, "{}", failed.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_search_falls_back_to_the_doc_names() {
    let gateway = Gateway::start().await;
    let hits = call(
        &gateway,
        json!({"method": "project_search", "query": "launch"}),
    )
    .await;
    assert_eq!(result(&hits)["rag"], true, "{}", hits.body);

    gateway.fault(json!({"fault": "search_forbidden"})).await;
    let fallback = call(
        &gateway,
        json!({"method": "project_search", "query": "launch"}),
    )
    .await;
    let fallback = result(&fallback);
    assert_eq!(fallback["rag"], false, "{fallback}");
    let docs = fallback["docs"].to_string();
    assert!(
        docs.contains("notes.md") && docs.contains("big.md"),
        "{docs}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_over_the_knowledge_budget_is_denied_before_the_request() {
    let gateway = Gateway::start().await;
    let small = call(
        &gateway,
        json!({"method": "project_write", "path": "ok.md", "content": "short"}),
    )
    .await;
    result(&small);

    let before = projects_requests(&gateway).await;
    // 1,998,000 bytes ≈ 499,500 tokens: over the 500,000 maximum with ~1,000 used.
    let content = "x".repeat(1_998_000);
    let denied = call(
        &gateway,
        json!({"method": "project_write", "path": "huge.md", "content": content}),
    )
    .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert_policy(&denied, "projects.knowledge-budget");
    assert!(denied.body["reason"]
        .as_str()
        .is_some_and(|reason| reason.starts_with("Write refused")));
    // Only the project detail was read to learn the budget; nothing was written.
    assert_eq!(projects_requests(&gateway).await - before, 1);
    let read = call(
        &gateway,
        json!({"method": "project_read", "path": "huge.md"}),
    )
    .await;
    assert_eq!(read.body["result"]["isError"], true, "{}", read.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_upload_is_denied_and_a_doc_delete_runs() {
    let gateway = Gateway::start().await;
    let denied = call(
        &gateway,
        json!({"method": "project_delete", "path": "spec.pdf"}),
    )
    .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert_policy(&denied, "projects.delete-upload");
    let info = call(&gateway, json!({"method": "project_info"})).await;
    assert!(result(&info).to_string().contains("spec.pdf"));

    let deleted = call(
        &gateway,
        json!({"method": "project_delete", "path": "notes.md"}),
    )
    .await;
    result(&deleted);
    let gone = call(
        &gateway,
        json!({"method": "project_read", "path": "notes.md"}),
    )
    .await;
    assert_eq!(gone.body["result"]["isError"], true, "{}", gone.body);
}
