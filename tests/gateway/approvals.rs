//! Approvals, roles and the service surface end to end (issue 3): who may approve, that the
//! sandbox never sees an undecided call, racing approvers, waiting, metrics and bad input.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::{assert_policy, main_session, write_args, Gateway, AGENT, APPROVER};

fn read() -> serde_json::Value {
    json!({"project_id": "p1", "path": "index.html"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_tokens_cannot_approve_consent_or_revoke_and_unknown_tokens_are_rejected() {
    let gateway = Gateway::start().await;
    let asked = gateway
        .design(&main_session("s-roles"), "read_file", read())
        .await;
    let id = asked.approval_id();
    for path in [
        format!("/v1/approvals/{id}/approve"),
        format!("/v1/approvals/{id}/refuse"),
        "/v1/design/consent".to_string(),
        "/v1/design/revoke".to_string(),
    ] {
        let reply = gateway.post(&path, Some(AGENT), None).await;
        assert_eq!(reply.status, 403, "{path}: {}", reply.body);
    }
    let listed = gateway.get("/v1/approvals", Some(AGENT)).await;
    assert_eq!(listed.status, 403);
    for token in [Some("not-a-configured-token"), None] {
        let reply = gateway
            .post("/v1/design/call", token, Some(json!({})))
            .await;
        assert_eq!(reply.status, 401, "{}", reply.body);
        let approve = gateway
            .post(&format!("/v1/approvals/{id}/approve"), token, None)
            .await;
        assert_eq!(approve.status, 401);
    }
    let stats = gateway.stats().await;
    assert_eq!(stats["consent_posts"], 0);
    assert_eq!(stats["tools_call"].get("read_file"), None);
    let view = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(view.body["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_never_sees_a_call_the_decision_did_not_allow() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-never");
    let copy = gateway
        .design(
            &session,
            "copy_files",
            json!({"project_id": "p1", "files": [{"src": "index.html", "dest": "copy.html"}]}),
        )
        .await;
    assert_eq!(copy.status, 403, "{}", copy.body);
    assert_policy(&copy, "design.tokenless-copy");
    let project_scope = gateway
        .design(
            &session,
            "finalize_plan",
            json!({"project_id": "p1", "scope": "project"}),
        )
        .await;
    assert_eq!(project_scope.status, 403, "{}", project_scope.body);
    assert_policy(&project_scope, "design.finalize-project-scope");

    let asked = gateway
        .design(
            &session,
            "delete_files",
            json!({"project_id": "p1", "paths": ["styles.css"]}),
        )
        .await;
    let asked_id = asked.approval_id();
    let refused = gateway
        .design(
            &session,
            "update_sharing",
            json!({"project_id": "p1", "scope": "org"}),
        )
        .await;
    let refused_id = refused.approval_id();
    let stats = gateway.stats().await;
    assert_eq!(stats["tools_call"], json!({}), "nothing ran: {stats}");

    let refusal = gateway.refuse(&refused_id).await;
    assert_eq!(refusal.status, 200);
    assert_eq!(refusal.body["status"], "refused");
    let late = gateway.approve(&refused_id).await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert_eq!(gateway.stats().await["tools_call"], json!({}));

    let approved = gateway.approve(&asked_id).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    let stats = gateway.stats().await;
    assert_eq!(stats["tools_call"], json!({"delete_files": 1}), "{stats}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_racing_approvers_run_the_call_exactly_once() {
    let gateway = Arc::new(Gateway::start().await);
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("s-race"),
            "update_sharing",
            json!({"project_id": "p1", "scope": "org"}),
        )
        .await;
    let id = asked.approval_id();
    // Slow the call down so the second approver arrives while the first is running.
    gateway
        .fault(json!({"fault": "delay", "ms": 300, "tool": "update_sharing"}))
        .await;
    let approvers = (0..2).map(|_| {
        let gateway = Arc::clone(&gateway);
        let id = id.clone();
        tokio::spawn(async move { gateway.approve(&id).await })
    });
    let mut statuses: Vec<u16> = futures_util::future::join_all(approvers)
        .await
        .into_iter()
        .map(|reply| reply.expect("task").status)
        .collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409]);
    assert_eq!(gateway.tool_calls("update_sharing").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_on_an_approval_returns_as_soon_as_it_is_approved() {
    let gateway = Arc::new(Gateway::start().await);
    let asked = gateway
        .design(&main_session("s-wait"), "read_file", read())
        .await;
    let id = asked.approval_id();
    let waiter = {
        let gateway = Arc::clone(&gateway);
        let id = id.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let reply = gateway
                .get(&format!("/v1/approvals/{id}?wait=5s"), Some(AGENT))
                .await;
            (reply, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    gateway.approve(&id).await;
    let (reply, waited) = waiter.await.expect("waiter");
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["status"], "completed");
    assert_eq!(reply.body["result"]["isError"], false, "{}", reply.body);
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");

    let quick = gateway
        .get(&format!("/v1/approvals/{id}?wait=bogus"), Some(AGENT))
        .await;
    assert_eq!(quick.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_decisions_and_pending_approvals_and_healthz_is_ok() {
    let gateway = Gateway::start().await;
    gateway
        .design(&main_session("s-metrics"), "read_file", read())
        .await;
    gateway.record_consent().await;
    gateway
        .design(&main_session("s-metrics"), "read_file", read())
        .await;
    let metrics = gateway
        .http
        .get(format!("{}/metrics", gateway.url))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let has = |line: &str| metrics.lines().any(|l| l == line);
    assert!(
        has("askgate_decisions_total{tool=\"ClaudeDesign\",operation=\"read_file\",outcome=\"ask\"} 1"),
        "{metrics}"
    );
    assert!(
        has("askgate_decisions_total{tool=\"ClaudeDesign\",operation=\"read_file\",outcome=\"allow\"} 1"),
        "{metrics}"
    );
    assert!(has("askgate_pending_approvals 1"), "{metrics}");
    let health = gateway.get("/healthz", None).await;
    assert_eq!(health.status, 200);
    assert_eq!(health.body["status"], "ok", "{}", health.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_400_naming_the_field() {
    let gateway = Gateway::start().await;
    let malformed = gateway
        .send(
            reqwest::Method::POST,
            format!("{}/v1/design/call", gateway.url),
            Some(AGENT),
            Some(b"{\"session\": ".to_vec()),
        )
        .await;
    assert_eq!(malformed.status, 400, "{}", malformed.body);
    assert_eq!(malformed.body["error"]["field"], "body");

    let unknown = gateway
        .design(
            &main_session("s-bad"),
            "read_file",
            json!({"project_id": "p1", "path": "index.html", "colour": "red"}),
        )
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    let field = unknown.body["error"]["field"].as_str().unwrap_or("");
    assert!(field.contains("colour"), "{}", unknown.body);

    let no_mode = json!({"id": "s", "agent": "main", "interactive": true});
    let missing = gateway.design(&no_mode, "read_file", read()).await;
    assert_eq!(missing.status, 400, "{}", missing.body);
    assert!(
        missing.body["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("mode")),
        "{}",
        missing.body
    );

    let blank = gateway
        .design(&main_session("  "), "write_files", write_args("p1", &["a"]))
        .await;
    assert_eq!(blank.status, 400, "{}", blank.body);
    assert_eq!(
        gateway.stats().await["requests"],
        0,
        "nothing reached upstream"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_approval_cannot_be_approved_and_never_runs() {
    let gateway = Gateway::start().await;
    let asked = gateway
        .design(&main_session("s-expiry"), "read_file", read())
        .await;
    let id = asked.approval_id();
    // The default approval lifetime is 300 s.
    gateway.clock.advance(time::Duration::seconds(299));
    let pending = gateway
        .get(&format!("/v1/approvals/{id}"), Some(AGENT))
        .await;
    assert_eq!(pending.body["status"], "pending", "{}", pending.body);
    gateway.clock.advance(time::Duration::seconds(1));
    let listed = gateway.get("/v1/approvals", Some(APPROVER)).await;
    assert_eq!(listed.body["approvals"], json!([]), "{}", listed.body);
    let late = gateway.approve(&id).await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert!(late.body["error"]["message"]
        .as_str()
        .is_some_and(|message| message.contains("expired")));
    let waited = gateway
        .get(&format!("/v1/approvals/{id}?wait=5s"), Some(AGENT))
        .await;
    assert_eq!(waited.body["status"], "expired");
    let stats = gateway.stats().await;
    assert_eq!(stats["consent_posts"], 0);
    assert_eq!(stats["tools_call"], json!({}));
    let unknown = gateway.approve("ap_missing").await;
    assert_eq!(unknown.status, 404);
}
