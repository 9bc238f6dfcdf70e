//! The approval webhook against a local receiver: one message per new pending approval (a
//! Slack-compatible `text` with the console link, and the card), retried after a 500, counted
//! in `/metrics`, never delaying the ask; nothing when no webhook is set.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use super::harness::{main_session, Gateway};

/// A receiver that answers 500 to its first `failures` requests, then 200, keeping every body.
pub(super) struct Receiver {
    pub(super) url: String,
    pub(super) bodies: Arc<Mutex<Vec<Value>>>,
}

pub(super) async fn receiver(failures: usize) -> Receiver {
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let kept = Arc::clone(&bodies);
    let router = Router::new().route(
        "/hook",
        post(move |Json(body): Json<Value>| {
            let kept = Arc::clone(&kept);
            async move {
                let mut bodies = kept.lock().unwrap();
                bodies.push(body);
                if bodies.len() <= failures {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    Receiver { url, bodies }
}

async fn ask(gateway: &Gateway) -> String {
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("hook-notify"),
            "delete_files",
            json!({"project_id": "p1", "paths": ["old.html"]}),
        )
        .await;
    asked.approval_id()
}

async fn settle(bodies: &Arc<Mutex<Vec<Value>>>, count: usize) -> Vec<Value> {
    for _ in 0..100 {
        if bodies.lock().unwrap().len() >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Anything more than expected would arrive within the backoff; give it the chance.
    tokio::time::sleep(Duration::from_millis(600)).await;
    bodies.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_new_approval_is_sent_once_and_retried_after_a_500() {
    let hook = receiver(1).await;
    let webhook = hook.url.clone();
    let gateway = Gateway::start_with(|raw| {
        raw.notify = Some(askgate::server::config::RawNotify {
            webhook_url: Some(webhook),
            console_url: Some("https://askgate.example".to_string()),
        });
    })
    .await;
    let id = ask(&gateway).await;
    let bodies = settle(&hook.bodies, 2).await;
    assert_eq!(
        bodies.len(),
        2,
        "one failed attempt, one delivery: {bodies:?}"
    );
    assert_eq!(bodies[0], bodies[1], "the retry sends the same message");
    let message = &bodies[1];
    let text = message["text"].as_str().unwrap();
    let link = format!("https://askgate.example/console/approvals/{id}");
    assert!(text.contains(&link), "{text}");
    assert!(text.contains("This call only"), "{text}");
    assert!(text.contains("delete_files on p1"), "{text}");
    assert_eq!(message["console_url"], json!(link));
    assert_eq!(message["approval"]["id"], json!(id));
    assert_eq!(message["approval"]["card"]["targets"], json!(["old.html"]));

    let metrics = gateway.get("/metrics", None).await.body;
    let metrics = metrics.as_str().unwrap_or("");
    assert!(
        metrics.contains("askgate_webhook_messages_total{result=\"delivered\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("askgate_webhook_attempt_failures_total 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusing_receiver_does_not_delay_the_ask() {
    let started = std::time::Instant::now();
    let gateway = Gateway::start_with(|raw| {
        raw.notify = Some(askgate::server::config::RawNotify {
            // A port nobody listens on: every attempt fails at once and is retried.
            webhook_url: Some("http://127.0.0.1:9/hook".to_string()),
            console_url: None,
        });
    })
    .await;
    let asked_at = std::time::Instant::now();
    let id = ask(&gateway).await;
    assert!(id.starts_with("ap_"));
    assert!(
        asked_at.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_sent_when_no_webhook_is_set() {
    let hook = receiver(0).await;
    let gateway = Gateway::start().await;
    ask(&gateway).await;
    assert!(settle(&hook.bodies, 1).await.is_empty());
}
