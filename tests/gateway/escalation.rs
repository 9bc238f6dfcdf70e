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

const AGENT_TOKEN: &str = "escalation-agent-token-0123456789abcdef";
const OWNER_TOKEN: &str = "escalation-owner-token-0123456789abcdef";
const ONCALL_TOKEN: &str = "escalation-oncall-token-0123456789abcdef";

/// Escalation widens who may approve, by policy: an admin's approving rule lets on-call
/// approve a destructive delete only once it is escalated (`resource.escalated`). Before, on-call's
/// approve is refused with the rule's reason and changes nothing; once the ask went unanswered
/// past its time and was escalated, the same approve runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_escalation_widens_who_may_approve_by_policy() {
    let owners = receiver(0).await;
    let url = owners.url.clone();
    let managed = tempfile::tempdir().unwrap();
    let approving = managed.path().join("approving");
    std::fs::create_dir(&approving).unwrap();
    std::fs::write(
        approving.join("oncall.cedar"),
        r#"@id("org.deletes-by-owners-or-oncall-once-escalated")
@reason("destructive deletes are approved by owners, and by on-call once escalated")
forbid (principal, action == Action::"approve", resource)
when { resource.operation == "delete_files" && !principal.groups.contains("owners")
       && !(resource.escalated && principal.groups.contains("oncall")) };
"#,
    )
    .unwrap();
    let callers = json!([
        {"token": AGENT_TOKEN, "role": "agent", "principal": "ada"},
        {"token": OWNER_TOKEN, "role": "approver", "principal": "owen", "groups": ["owners"]},
        {"token": ONCALL_TOKEN, "role": "approver", "principal": "olivia", "groups": ["oncall"]},
    ]);
    let gateway = Gateway::start_with(|raw| {
        raw.callers = Some(serde_json::from_value(callers).unwrap());
        raw.policies = Some(vec![managed.path().to_path_buf()]);
        raw.escalation = Some(askgate::server::config::RawEscalation {
            after_seconds: Some(60),
            webhook_url: Some(url),
        });
        raw.approvals = Some(serde_json::from_value(json!({"sweep_interval_ms": 20})).unwrap());
    })
    .await;
    let consent = gateway
        .post("/v1/design/consent", Some(OWNER_TOKEN), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    let body = json!({"session": main_session("s-oncall"),
                      "input": {"operation": "delete_files",
                                "arguments": {"project_id": "p1", "paths": ["old.html"]}}});
    let asked = gateway
        .post("/v1/design/call", Some(AGENT_TOKEN), Some(body))
        .await;
    let id = asked.approval_id();
    let approve = format!("/v1/approvals/{id}/approve");

    let early = gateway.post(&approve, Some(ONCALL_TOKEN), None).await;
    assert_eq!(early.status, 403, "{}", early.body);
    assert!(
        early
            .body
            .to_string()
            .contains("approved by owners, and by on-call once escalated"),
        "{}",
        early.body
    );
    let shown = gateway
        .get(&format!("/v1/approvals/{id}"), Some(OWNER_TOKEN))
        .await;
    assert_eq!(shown.body["status"], "pending", "{}", shown.body);
    assert_eq!(shown.body["escalated"], false, "{}", shown.body);

    gateway.clock.advance(time::Duration::seconds(61));
    assert_eq!(received(&owners.bodies, 1).await.len(), 1, "escalated");
    let shown = gateway
        .get(&format!("/v1/approvals/{id}"), Some(OWNER_TOKEN))
        .await;
    assert_eq!(shown.body["escalated"], true, "{}", shown.body);
    let late = gateway.post(&approve, Some(ONCALL_TOKEN), None).await;
    assert_eq!(late.status, 200, "{}", late.body);
    assert_eq!(late.body["approved_by"], "olivia", "{}", late.body);
}
