//! Bounded approvals (issue 9 §1, F2, C6, C8, C9): caps per caller, in all and on held bytes
//! with a logged 429; finished approvals forgotten after the retention; a paged list; a gauge
//! of pending approvals only; another agent's approval answered as an unknown one, at once.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::approval_work::{outcomes_of, records};
use super::harness::{main_session, write_args, Gateway, Reply, APPROVER};

const AGENT_ONE: &str = "agent-one-token-0123456789abcdefghij";
const AGENT_TWO: &str = "agent-two-token-0123456789abcdefghij";
const APPROVER_TOKEN: &str = "approver-token-0123456789abcdefghijk";

fn callers() -> Value {
    json!([
        {"token": AGENT_ONE, "role": "agent", "principal": "agent-one"},
        {"token": AGENT_TWO, "role": "agent", "principal": "agent-two"},
        {"token": APPROVER_TOKEN, "role": "approver", "principal": "approver"},
    ])
}

async fn ask(gateway: &Gateway, token: &str, path: &str) -> Reply {
    let body = json!({"session": main_session("s-bounds"),
        "input": {"operation": "delete_files", "arguments": {"project_id": "p1", "paths": [path]}}});
    gateway
        .post("/v1/design/call", Some(token), Some(body))
        .await
}

fn message(reply: &Reply) -> &str {
    reply.body["error"]["message"].as_str().unwrap_or("")
}

async fn gauge(gateway: &Gateway) -> String {
    let text = gateway
        .http
        .get(format!("{}/metrics", gateway.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find(|line| line.starts_with("askgate_pending_approvals "))
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f2_open_approvals_are_capped_per_caller_and_in_all_with_a_logged_429() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let log_dir = logs.clone();
    let gateway = Gateway::start_with(move |raw| {
        raw.log_dir = Some(log_dir);
        raw.callers = Some(serde_json::from_value(callers()).unwrap());
        raw.approvals = Some(
            serde_json::from_value(json!({"max_pending_per_caller": 2, "max_pending": 3})).unwrap(),
        );
    })
    .await;
    let consent = gateway
        .post("/v1/design/consent", Some(APPROVER_TOKEN), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    assert_eq!(ask(&gateway, AGENT_ONE, "a").await.status, 202);
    assert_eq!(ask(&gateway, AGENT_ONE, "b").await.status, 202);
    let per_caller = ask(&gateway, AGENT_ONE, "c").await;
    assert_eq!(per_caller.status, 429, "{}", per_caller.body);
    assert!(
        message(&per_caller).contains(
            "`agent-one` already has 2 open approvals (`approvals.max_pending_per_caller`)"
        ),
        "{}",
        per_caller.body
    );
    assert_eq!(per_caller.body["error"]["field"], Value::Null);
    assert_eq!(ask(&gateway, AGENT_TWO, "d").await.status, 202);
    let total = ask(&gateway, AGENT_TWO, "e").await;
    assert_eq!(total.status, 429, "{}", total.body);
    assert!(
        message(&total).contains("`approvals.max_pending`"),
        "{}",
        total.body
    );
    assert_eq!(
        gateway.stats().await["tools_call"],
        json!({}),
        "nothing ran"
    );

    let records = records(&logs);
    let refused: Vec<_> = records
        .iter()
        .filter_map(|record| match record {
            askgate::audit::Record::Decision(decision) => Some(decision.id.clone()),
            _ => None,
        })
        .filter(|id| outcomes_of(&records, id) == [Some("approval_limit".to_string())])
        .collect();
    assert_eq!(
        refused.len(),
        2,
        "both refusals are logged as the asks' outcomes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c6_another_agents_approval_is_unknown_at_once() {
    let gateway = Gateway::start_with(|raw| {
        raw.callers = Some(serde_json::from_value(callers()).unwrap());
    })
    .await;
    let asked = ask(&gateway, AGENT_ONE, "a").await;
    let id = asked.approval_id();
    let started = Instant::now();
    let other = gateway
        .get(&format!("/v1/approvals/{id}?wait=5s"), Some(AGENT_TWO))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(other.status, 404, "{}", other.body);
    let unknown = gateway
        .get("/v1/approvals/ap_unknown?wait=5s", Some(AGENT_TWO))
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(
        message(&other).replace(&id, "ID"),
        message(&unknown).replace("ap_unknown", "ID"),
        "the same answer as for an unknown id"
    );
    let own = gateway
        .get(&format!("/v1/approvals/{id}"), Some(AGENT_ONE))
        .await;
    assert_eq!(own.body["status"], "pending", "{}", own.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f2_the_bytes_of_held_calls_are_capped() {
    let gateway = Gateway::start_with(|raw| {
        raw.approvals = Some(serde_json::from_value(json!({"max_held_bytes": 1_000_000})).unwrap());
    })
    .await;
    gateway.record_consent().await;
    let session = main_session("s-bytes");
    let mut big = write_args("p1", &["b.html"]);
    big["files"][0]["data"] = json!("y".repeat(600_000));
    let first = gateway.design(&session, "write_files", big.clone()).await;
    assert_eq!(first.status, 202, "{}", first.body);
    let second = gateway.design(&session, "write_files", big).await;
    assert_eq!(second.status, 429, "{}", second.body);
    assert!(
        message(&second).contains("`approvals.max_held_bytes`"),
        "{}",
        second.body
    );
    // Refusing the first frees its bytes.
    assert_eq!(gateway.refuse(&first.approval_id()).await.status, 200);
    let small = gateway
        .design(&session, "write_files", write_args("p1", &["c.html"]))
        .await;
    assert_eq!(small.status, 202, "{}", small.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c8_pending_approvals_are_listed_a_page_at_a_time() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let mut asked = Vec::new();
    for index in 0..5 {
        let reply = gateway
            .design(
                &main_session("s-page"),
                "delete_files",
                json!({"project_id": "p1", "paths": [format!("f{index}.css")]}),
            )
            .await;
        asked.push(reply.approval_id());
    }
    let mut listed = Vec::new();
    let mut path = "/v1/approvals?limit=2".to_string();
    loop {
        let page = gateway.get(&path, Some(APPROVER)).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let approvals = page.body["approvals"].as_array().unwrap();
        assert!(approvals.len() <= 2);
        listed.extend(
            approvals
                .iter()
                .map(|a| a["id"].as_str().unwrap().to_string()),
        );
        match page.body["next_cursor"].as_str() {
            Some(cursor) => path = format!("/v1/approvals?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(listed, asked, "every pending approval once, oldest first");
    for bad in ["limit=0", "limit=201", "limit=x", "cursor=abc"] {
        let reply = gateway
            .get(&format!("/v1/approvals?{bad}"), Some(APPROVER))
            .await;
        assert_eq!(reply.status, 400, "{bad}: {}", reply.body);
        let field = reply.body["error"]["field"].as_str().unwrap_or("");
        assert!(
            bad.starts_with(field.trim_start_matches("query.")),
            "{bad}: {}",
            reply.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c9_the_pending_gauge_counts_only_pending_approvals() {
    let gateway = Gateway::start_with(|raw| {
        raw.approvals = Some(
            serde_json::from_value(json!({"retention_seconds": 1, "sweep_interval_ms": 20}))
                .unwrap(),
        );
    })
    .await;
    gateway.record_consent().await;
    let mut ids = Vec::new();
    for path in ["a.css", "b.css", "c.css"] {
        let reply = gateway
            .design(
                &main_session("s-gauge"),
                "delete_files",
                json!({"project_id": "p1", "paths": [path]}),
            )
            .await;
        ids.push(reply.approval_id());
    }
    assert_eq!(gauge(&gateway).await, "askgate_pending_approvals 3");
    let approved = gateway.approve(&ids[0]).await;
    assert_ne!(approved.body["status"], "pending", "{}", approved.body);
    assert_eq!(gauge(&gateway).await, "askgate_pending_approvals 2");
    gateway.clock.advance(time::Duration::seconds(300));
    assert_eq!(
        gauge(&gateway).await,
        "askgate_pending_approvals 0",
        "expiry applied"
    );

    // Finished approvals are forgotten after the retention (here 1 s of the service clock).
    gateway.clock.advance(time::Duration::seconds(2));
    tokio::time::sleep(Duration::from_millis(200)).await;
    for id in &ids {
        let gone = gateway
            .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
            .await;
        assert_eq!(gone.status, 404, "{id}: {}", gone.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c8_the_approvals_command_lists_a_page_and_its_cursor() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    for path in ["a.css", "b.css"] {
        gateway
            .design(
                &main_session("s-cli"),
                "delete_files",
                json!({"project_id": "p1", "paths": [path]}),
            )
            .await;
    }
    let list = |extra: Vec<String>| {
        let url = gateway.url.clone();
        tokio::task::spawn_blocking(move || {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
                .args([
                    "approvals",
                    "list",
                    "--json",
                    "--server",
                    &url,
                    "--token",
                    APPROVER,
                ])
                .args(extra)
                .output()
                .unwrap();
            assert!(output.status.success(), "{output:?}");
            serde_json::from_slice::<Value>(&output.stdout).unwrap()
        })
    };
    let first = list(vec!["--limit".into(), "1".into()]).await.unwrap();
    assert_eq!(first["approvals"].as_array().unwrap().len(), 1, "{first}");
    let cursor = first["next_cursor"].as_str().unwrap().to_string();
    let second = list(vec![
        "--limit".into(),
        "1".into(),
        "--cursor".into(),
        cursor,
    ])
    .await
    .unwrap();
    assert_eq!(
        second["approvals"][0]["summary"]["targets"],
        json!(["b.css"]),
        "{second}"
    );
    assert_eq!(second["next_cursor"], Value::Null);
}
