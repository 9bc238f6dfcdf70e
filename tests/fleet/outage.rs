//! PostgreSQL goes away under a replica (a TCP proxy between them is cut): the replica says
//! `degraded` naming the store, refuses what needs shared state with 503 naming it (an
//! approval to hold, a Design call deciding on the account's state), still answers decisions
//! that need no shared state, and recovers by itself when the store is back.

use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::{ask_delete_policies, session, Database, Proxy, Replica, AGENT};

pub(super) async fn until(what: &str, within: Duration, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check().await {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_the_store_is_gone_shared_state_is_refused_naming_it_and_it_recovers_by_itself() {
    let database = Database::fresh("store_outage").await;
    let (proxy, through) = Proxy::in_front_of(&database.url).await;
    let root = tempfile::tempdir().unwrap();
    let policies = ask_delete_policies(root.path());
    let a = Replica::start("a", root.path(), &through, &policies).await;
    let design_read = json!({"session": session("fleet-outage"), "input": {"operation": "read_file",
        "arguments": {"project_id": "p1", "path": "index.html"}}});
    let projects_read = json!({"session": session("fleet-outage"),
        "input": {"method": "project_read", "path": "notes.md"}});

    proxy.cut();
    until("degraded", Duration::from_secs(20), async || {
        a.healthz().await.body["status"] == "degraded"
    })
    .await;
    let health = a.healthz().await;
    let cause = health.body["store"]["cause"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        cause.contains(&format!("127.0.0.1:{}", proxy.port)),
        "{}",
        health.body
    );
    let body = json!({"session": session("fleet-outage"),
                      "input": {"method": "project_delete", "path": "notes.md"}});
    let ask = a
        .send(
            reqwest::Method::POST,
            "/v1/projects/call",
            Some(AGENT),
            Some(&body),
        )
        .await;
    assert_eq!(ask.status, 503, "{}", ask.body);
    assert!(
        ask.body.to_string().contains("shared store"),
        "{}",
        ask.body
    );
    let design = a
        .send(
            reqwest::Method::POST,
            "/v1/design/call",
            Some(AGENT),
            Some(&design_read),
        )
        .await;
    assert_eq!(design.status, 503, "{}", design.body);
    // A read that needs no shared state is still decided (and runs).
    let read = a
        .send(
            reqwest::Method::POST,
            "/v1/projects/call",
            Some(AGENT),
            Some(&projects_read),
        )
        .await;
    assert_eq!(read.status, 200, "{}", read.body);

    proxy.restore();
    until("ready again", Duration::from_secs(20), async || {
        a.healthz().await.body["status"] == "ok"
    })
    .await;
    let asked = a.ask_delete("fleet-outage", "notes.md").await;
    assert!(asked.starts_with("ap_"), "{asked}");
}
