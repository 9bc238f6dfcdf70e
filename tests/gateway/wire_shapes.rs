//! The approval as the HTTP API and the webhook send it, pinned (issue 39 §2): the committed
//! `tests/fixtures/api/approvals-v1.json` holds the body `GET /v1/approvals/{id}` gave for a
//! consent, a grant and two batch cards (Design and Projects); a fresh approval of each kind
//! must have exactly that shape — the same keys at every level, the same kinds of values —
//! and the webhook's `approval` the same. Renaming or dropping a card field, or changing a
//! value's type, fails here: such a change is a new version of the body (`…-v2.json`), said in
//! the API's docs, never a silent one.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::harness::{main_session, Gateway, APPROVER};

/// A value's shape: objects by key, arrays by their first element, scalars by kind.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, value)| (key.clone(), shape(value)))
                .collect(),
        ),
        Value::Array(items) => json!(items.first().map(shape).into_iter().collect::<Vec<_>>()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => json!("null"),
    }
}

/// The fixture's bodies by `tool/kind`.
fn fixture() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/api/approvals-v1.json"),
    )
    .unwrap();
    let bodies: Vec<Value> = serde_json::from_str(&text).unwrap();
    bodies.into_iter().map(|body| (key(&body), body)).collect()
}

fn key(body: &Value) -> String {
    format!(
        "{}/{}",
        body["summary"]["tool"].as_str().unwrap_or(""),
        body["card"]["kind"].as_str().unwrap_or("")
    )
}

fn ask_delete_policies() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("policies/examples/ask-project-delete.cedar");
    std::fs::copy(source, dir.path().join("ask-project-delete.cedar")).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i39_the_approval_body_and_the_webhook_keep_the_v1_shape_of_every_card_kind() {
    let bodies = Arc::new(Mutex::new(Vec::<Value>::new()));
    let received = bodies.clone();
    let router = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let received = received.clone();
            async move {
                received.lock().unwrap().push(body);
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let webhook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    let policies = ask_delete_policies();
    let dir = policies.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        raw.policies = Some(vec![dir]);
        raw.notify = Some(askgate::server::config::RawNotify {
            webhook_url: Some(webhook),
            console_url: Some("https://askgate.example".to_string()),
        });
    })
    .await;
    let session = main_session("wire-shapes");
    let mut ids = vec![gateway
        .design(
            &session,
            "read_file",
            json!({"project_id": "p1", "path": "index.html"}),
        )
        .await
        .approval_id()];
    gateway.record_consent().await;
    ids.push(
        gateway
            .design(
                &session,
                "write_files",
                json!({"project_id": "p1", "files": [{"path": "a.html", "data": "x"}]}),
            )
            .await
            .approval_id(),
    );
    ids.push(
        gateway
            .projects(
                &session,
                json!({"method": "project_delete", "path": "notes.md"}),
            )
            .await
            .approval_id(),
    );
    ids.push(
        gateway
            .design(
                &session,
                "delete_files",
                json!({"project_id": "p1", "paths": ["a.html", "b.html"]}),
            )
            .await
            .approval_id(),
    );

    let fixture = fixture();
    assert_eq!(fixture.len(), 4, "{:?}", fixture.keys());
    for id in &ids {
        let body = gateway
            .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
            .await
            .body;
        let pinned = fixture
            .get(&key(&body))
            .unwrap_or_else(|| panic!("no v1 body of {}", key(&body)));
        assert_eq!(shape(&body), shape(pinned), "{}: {body}", key(&body));
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while bodies.lock().unwrap().len() < ids.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "the webhook's messages"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for message in bodies.lock().unwrap().iter() {
        let approval = &message["approval"];
        assert_eq!(
            shape(approval),
            shape(&fixture[&key(approval)]),
            "the webhook's approval, {}",
            key(approval)
        );
    }
}
