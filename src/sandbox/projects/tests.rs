//! Tests of the Projects sandbox over real HTTP on loopback.
use base64::Engine;
use serde_json::{json, Value};

use super::seed::*;
use super::{ProjectsFault, ProjectsSandbox};

async fn serve(sandbox: &ProjectsSandbox) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = sandbox.router();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{address}")
}

fn org_url(base: &str, rest: &str) -> String {
    format!("{base}/api/organizations/{ORG_UUID}/projects/{PROJECT_UUID}{rest}")
}

async fn get(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

async fn chat(base: &str, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/v2/ccr-sessions/-/chat-project"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn detail_lists_the_seed_project() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let (status, body) = get(&org_url(&base, "/detail")).await;
    assert_eq!(status, 200);
    assert_eq!(body["name"], "Handbook");
    assert_eq!(body["documents"][0]["file_name"], "notes.md");
    assert_eq!(body["documents"][1]["uuid"], BIG_DOC_UUID);
    assert_eq!(body["files"][0]["file_kind"], "document");
    assert_eq!(body["files"][1]["file_name"], "logo.png");
    assert_eq!(body["knowledge_stats"]["knowledge_size"], 1000);
    assert_eq!(body["knowledge_stats"]["max_knowledge_size"], 500_000);
    assert_eq!(sandbox.requests(), 1);
}

#[tokio::test]
async fn unknown_org_or_project_is_not_found() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let other_org = format!("{base}/api/organizations/org-9/projects/{PROJECT_UUID}/detail");
    assert_eq!(get(&other_org).await.0, 404);
    let other_project = format!("{base}/api/organizations/{ORG_UUID}/projects/nope/detail");
    let (status, body) = get(&other_project).await;
    assert_eq!((status, body), (404, json!({"error": "not_found"})));
}

#[tokio::test]
async fn big_doc_and_raw_logo_have_their_sizes() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let (_, doc) = get(&org_url(&base, &format!("/docs/{BIG_DOC_UUID}"))).await;
    assert_eq!(doc["content"].as_str().unwrap().len(), BIG_DOC_BYTES);
    let (_, raw) = get(&org_url(&base, &format!("/files/{LOGO_FILE_UUID}/raw"))).await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(raw["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes.len(), LOGO_BYTES);
    assert_eq!(raw["file_size_bytes"], LOGO_BYTES);
    assert_eq!(&bytes[..4], b"\x89PNG");
}

#[tokio::test]
async fn raw_size_mismatch_drops_one_byte_once() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    sandbox.inject(ProjectsFault::RawSizeMismatch, 1);
    let url = org_url(&base, &format!("/files/{LOGO_FILE_UUID}/raw"));
    let decoded = |body: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(body["content_base64"].as_str().unwrap())
            .unwrap()
            .len()
    };
    let (_, first) = get(&url).await;
    assert_eq!(decoded(&first), LOGO_BYTES - 1);
    assert_eq!(first["file_size_bytes"], LOGO_BYTES);
    let (_, second) = get(&url).await;
    assert_eq!(decoded(&second), LOGO_BYTES);
}

#[tokio::test]
async fn extracted_text_only_for_documents() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let (status, body) = get(&org_url(
        &base,
        &format!("/files/{SPEC_FILE_UUID}/extracted"),
    ))
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["file_kind"], "document");
    let (status, _) = get(&org_url(
        &base,
        &format!("/files/{LOGO_FILE_UUID}/extracted"),
    ))
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn org_writes_update_knowledge_size() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let client = reqwest::Client::new();
    let created: Value = client
        .post(org_url(&base, "/docs"))
        .json(&json!({"file_name": "claude/a.md", "content": "12345"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(sandbox.knowledge_size(), 1002, "ceil(5 / 4) = 2 tokens");
    let uuid = created["uuid"].as_str().unwrap().to_owned();
    let patched: Value = client
        .patch(org_url(&base, &format!("/docs/{uuid}")))
        .json(&json!({"content": "123456789"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(patched["uuid"], uuid.as_str());
    assert_eq!(sandbox.knowledge_size(), 1003);
    let deleted = client
        .delete(org_url(&base, &format!("/docs/{uuid}")))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 200);
    assert_eq!(sandbox.knowledge_size(), 1000);
}

#[tokio::test]
async fn session_route_runs_every_op() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let (_, detail) = chat(&base, json!({"op": "detail"})).await;
    assert_eq!(detail["name"], "Handbook");
    let (_, doc) = chat(&base, json!({"op": "read-doc", "doc_uuid": NOTES_DOC_UUID})).await;
    assert!(doc["content"].as_str().unwrap().starts_with("# Notes"));
    let (_, text) = chat(
        &base,
        json!({"op": "read-file", "file_uuid": SPEC_FILE_UUID}),
    )
    .await;
    assert_eq!(text["file_kind"], "document");
    let (_, raw) = chat(
        &base,
        json!({"op": "read-file-raw", "file_uuid": LOGO_FILE_UUID}),
    )
    .await;
    assert_eq!(raw["uuid"], LOGO_FILE_UUID);
    let body = json!({"op": "write-doc", "file_name": "x.md", "content": "hello"});
    let (_, written) = chat(&base, body).await;
    let uuid = written["uuid"].as_str().unwrap();
    let (status, _) = chat(&base, json!({"op": "delete-doc", "doc_uuid": uuid})).await;
    assert_eq!(status, 200);
    let (status, body) = chat(&base, json!({"op": "update-doc", "doc_uuid": uuid})).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("unknown_op")));
    assert_eq!(sandbox.requests(), 7);
}

#[tokio::test]
async fn search_finds_substrings_and_honours_n() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let (_, body) = get(&org_url(&base, "/kb/search?query=LAUNCH%20checklist&n=5")).await;
    let hits = body["text_results"].as_array().unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["name"], "notes.md");
    assert_eq!(hits[0]["doc_uuid"], NOTES_DOC_UUID);
    assert!(hits[0]["chunk"]["text"]
        .as_str()
        .unwrap()
        .contains("launch checklist"));
    let (_, body) = chat(
        &base,
        json!({"op": "kb-search", "query": "decided", "n": 3}),
    )
    .await;
    assert_eq!(body["rich_content_results"][0]["name"], "spec.pdf");
    let (_, body) = get(&org_url(&base, "/kb/search?query=e&n=1")).await;
    let total = body["text_results"].as_array().unwrap().len()
        + body["rich_content_results"].as_array().unwrap().len();
    assert_eq!(total, 1);
}

#[tokio::test]
async fn search_forbidden_applies_to_either_route_then_clears() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    sandbox.inject(ProjectsFault::SearchForbidden, 2);
    assert_eq!(get(&org_url(&base, "/kb/search?query=a")).await.0, 403);
    assert_eq!(
        chat(&base, json!({"op": "kb-search", "query": "a"}))
            .await
            .0,
        403
    );
    assert_eq!(get(&org_url(&base, "/kb/search?query=a")).await.0, 200);
    sandbox.inject(ProjectsFault::SearchForbidden, 1);
    sandbox.clear_faults();
    assert_eq!(get(&org_url(&base, "/kb/search?query=a")).await.0, 200);
}

#[tokio::test]
async fn reset_restores_the_seed() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    let body = json!({"op": "delete-doc", "doc_uuid": NOTES_DOC_UUID});
    assert_eq!(chat(&base, body).await.0, 200);
    assert_eq!(sandbox.knowledge_size(), 1000 - 25, "notes.md is 100 bytes");
    sandbox.reset();
    assert_eq!(sandbox.requests(), 0);
    assert_eq!(sandbox.knowledge_size(), 1000);
    let (status, _) = get(&org_url(&base, &format!("/docs/{NOTES_DOC_UUID}"))).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn malformed_bodies_are_bad_requests() {
    let sandbox = ProjectsSandbox::seeded();
    let base = serve(&sandbox).await;
    assert_eq!(
        chat(&base, json!({"op": "detail", "extra": 1})).await.0,
        400
    );
    assert_eq!(chat(&base, json!({"op": "read-doc"})).await.0, 400);
    let response = reqwest::Client::new()
        .post(org_url(&base, "/docs"))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
}
