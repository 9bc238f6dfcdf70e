//! Escalation (issue 35 §4): an approval still unanswered `escalation.after_seconds` after it
//! was asked is sent, once, to a second webhook (a second group's channel), with the webhook's
//! card and `escalated: true`; an approval answered in time is never escalated.

use std::time::Duration;

use serde_json::{json, Value};

use super::harness::{main_session, Gateway};
use super::webhook::receiver;

async fn delete(gateway: &Gateway, path: &str) -> String {
    gateway
        .design(
            &main_session("escalation"),
            "delete_files",
            json!({"project_id": "p1", "paths": [path]}),
        )
        .await
        .approval_id()
}

/// What the receiver holds once `count` arrived (or 5 s passed), after a moment for extras.
async fn received(
    bodies: &std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    count: usize,
) -> Vec<Value> {
    for _ in 0..100 {
        if bodies.lock().unwrap().len() >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    bodies.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_an_approval_unanswered_past_its_time_is_escalated_once() {
    let owners = receiver(0).await;
    let url = owners.url.clone();
    let gateway = Gateway::start_with(|raw| {
        raw.escalation = Some(askgate::server::config::RawEscalation {
            after_seconds: Some(60),
            webhook_url: Some(url),
        });
        raw.approvals = Some(serde_json::from_value(json!({"sweep_interval_ms": 20})).unwrap());
    })
    .await;
    gateway.record_consent().await;
    let waiting = delete(&gateway, "old.html").await;
    let answered = delete(&gateway, "draft.html").await;
    let approved = gateway.approve(&answered).await;
    assert_eq!(approved.status, 200, "{}", approved.body);

    gateway.clock.advance(time::Duration::seconds(59));
    assert!(received(&owners.bodies, 1).await.is_empty(), "not yet");
    gateway.clock.advance(time::Duration::seconds(2));
    let sent = received(&owners.bodies, 1).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    let message = &sent[0];
    assert_eq!(message["approval"]["id"], json!(waiting), "{message}");
    assert_eq!(message["escalated"], true, "{message}");
    let text = message["text"].as_str().unwrap();
    assert!(
        text.starts_with("askgate: escalated, unanswered for 1 min — "),
        "{text}"
    );
    assert!(
        text.contains(&format!("/console/approvals/{waiting}")),
        "{text}"
    );

    // Later sweeps send nothing more.
    gateway.clock.advance(time::Duration::seconds(30));
    assert_eq!(received(&owners.bodies, 2).await.len(), 1, "escalated once");
}
