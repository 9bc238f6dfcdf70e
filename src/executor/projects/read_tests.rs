//! End-to-end tests of project_info, project_read and project_search against the sandbox.
use serde_json::json;

use super::harness::{mode_of, Harness};
use super::*;
use crate::sandbox::projects::seed::*;
use crate::sandbox::projects::ProjectsFault;

#[tokio::test]
async fn info_maps_the_detail() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let info = harness
        .run(json!({"method": "project_info"}))
        .await
        .unwrap();
    assert_eq!(info["name"], "Handbook");
    assert_eq!(
        info["instructions"],
        "Answer from the handbook and cite the doc."
    );
    assert_eq!(info["docs"][0]["path"], "notes.md");
    assert_eq!(
        info["files"][1],
        json!({"path": "logo.png", "file_kind": "image",
        "created_at": "2026-01-06T09:30:00Z"})
    );
    assert_eq!(info["sync_sources"][0]["type"], "github");
    assert_eq!(
        info["knowledge"],
        json!({"knowledge_size": 1000, "max_knowledge_size": 500_000})
    );
}

#[tokio::test]
async fn read_small_doc_inline() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let result = harness
        .run(json!({"method": "project_read", "path": "notes.md"}))
        .await
        .unwrap();
    assert!(result["content"].as_str().unwrap().starts_with("# Notes"));
    assert_eq!(result["created_at"], "2026-01-05T10:00:00Z");
    assert!(result.get("local_file").is_none());
}

#[tokio::test]
async fn read_big_doc_spills_to_a_private_file() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let result = harness
        .run(json!({"method": "project_read", "path": "big.md"}))
        .await
        .unwrap();
    assert!(result.get("content").is_none());
    let local = result["local_file"].as_str().unwrap();
    assert!(local.ends_with(&format!("project-doc-{BIG_DOC_UUID}.txt")));
    assert!(local.starts_with(harness.spill.path().to_str().unwrap()));
    assert_eq!(std::fs::read(local).unwrap().len(), BIG_DOC_BYTES);
    assert_eq!(mode_of(local), 0o600);
}

#[tokio::test]
async fn read_upload_document_returns_extracted_text() {
    let harness = Harness::start(ProjectsRoute::Session).await;
    let result = harness
        .run(json!({"method": "project_read", "path": "spec.pdf"}))
        .await
        .unwrap();
    assert_eq!(result["file_kind"], "document");
    assert!(result["content"]
        .as_str()
        .unwrap()
        .starts_with("Gateway specification"));
}

#[tokio::test]
async fn read_image_downloads_raw_bytes() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let result = harness
        .run(json!({"method": "project_read", "path": "logo.png"}))
        .await
        .unwrap();
    assert_eq!(result["file_kind"], "image");
    let local = result["local_file"].as_str().unwrap();
    assert!(local.ends_with(&format!("project-file-{LOGO_FILE_UUID}-logo.png")));
    let bytes = std::fs::read(local).unwrap();
    assert_eq!(bytes.len(), LOGO_BYTES);
    assert_eq!(&bytes[..4], b"\x89PNG");
    assert_eq!(mode_of(local), 0o600);
    assert!(result["notice"]
        .as_str()
        .unwrap()
        .contains("original bytes"));
}

#[tokio::test]
async fn raw_size_mismatch_is_fetched_once_more() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    harness.sandbox.inject(ProjectsFault::RawSizeMismatch, 1);
    let result = harness
        .run(json!({"method": "project_read", "path": "logo.png"}))
        .await
        .unwrap();
    let bytes = std::fs::read(result["local_file"].as_str().unwrap()).unwrap();
    assert_eq!(bytes.len(), LOGO_BYTES);
    assert_eq!(harness.sandbox.requests(), 3, "detail + two downloads");
}

#[tokio::test]
async fn raw_size_mismatch_twice_is_an_error() {
    let harness = Harness::start(ProjectsRoute::Session).await;
    harness.sandbox.inject(ProjectsFault::RawSizeMismatch, 2);
    let error = harness
        .run(json!({"method": "project_read", "path": "logo.png"}))
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        ProjectsError::SizeMismatch {
            received: 2047,
            reported: 2048,
            ..
        }
    ));
    assert!(error
        .to_string()
        .starts_with("downloaded bytes do not match the reported file size"));
}

#[tokio::test]
async fn read_unknown_path_lists_the_names() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let error = harness
        .run(json!({"method": "project_read", "path": "missing.md"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "No doc or file at \"missing.md\". Available: notes.md, big.md, spec.pdf, logo.png"
    );
}

#[tokio::test]
async fn search_returns_hits_then_falls_back_on_403() {
    let harness = Harness::start(ProjectsRoute::Org).await;
    let result = harness
        .run(json!({"method": "project_search", "query": "launch checklist", "n": 2}))
        .await
        .unwrap();
    assert_eq!(result["rag"], true);
    assert_eq!(result["hits"][0]["name"], "notes.md");
    assert_eq!(result["hits"][0]["doc_uuid"], NOTES_DOC_UUID);
    assert!(result["hits"][0]["text"]
        .as_str()
        .unwrap()
        .contains("launch checklist"));
    harness.sandbox.inject(ProjectsFault::SearchForbidden, 1);
    let result = harness
        .run(json!({"method": "project_search", "query": "x"}))
        .await
        .unwrap();
    assert_eq!(
        result,
        json!({"method": "project_search", "rag": false, "docs": ["notes.md", "big.md"]})
    );
}

#[tokio::test]
async fn search_403_falls_back_on_the_session_route_too() {
    let harness = Harness::start(ProjectsRoute::Session).await;
    harness.sandbox.inject(ProjectsFault::SearchForbidden, 1);
    let result = harness
        .run(json!({"method": "project_search", "query": "x"}))
        .await
        .unwrap();
    assert_eq!(result["rag"], false);
}
