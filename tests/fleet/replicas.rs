//! Several real `askgate serve --store postgres://…` processes on one PostgreSQL: an ask held
//! on one replica is answered through another, exactly one of two racing approvers runs the
//! call, a replica killed mid-run has its run ended by another's sweeper, a restarted replica
//! finds what was pending, and a store that cannot be used stops a replica from starting
//! with a reason that names it (never its password).

use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::{ask_delete_policies, Database, Replica};

/// Two replicas of a fresh fleet.
pub async fn fleet(test: &str, extra: &[&str]) -> (Database, tempfile::TempDir, Replica, Replica) {
    let database = Database::fresh(test).await;
    let root = tempfile::tempdir().expect("root");
    let policies = ask_delete_policies(root.path());
    let (a, b) = tokio::join!(
        Replica::start_with("a", root.path(), &database.url, &policies, extra),
        Replica::start_with("b", root.path(), &database.url, &policies, extra),
    );
    (database, root, a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_on_a_approve_on_b_the_waiting_call_on_a_gets_the_result() {
    let (_database, _root, a, b) = fleet("ask_on_a_approve_on_b", &[]).await;
    let health = a.healthz().await;
    assert_eq!(health.body["status"], "ok", "{}", health.body);
    assert_eq!(health.body["store"]["replica"], "a", "{}", health.body);
    let id = a.ask_delete("fleet-wait", "notes.md").await;
    // B sees the approval A holds.
    let listed = b
        .send(
            reqwest::Method::GET,
            "/v1/approvals",
            Some(super::harness::APPROVER),
            None,
        )
        .await;
    assert_eq!(
        listed.body["approvals"][0]["id"],
        json!(id),
        "{}",
        listed.body
    );
    let waiter = {
        let url = a.url.clone();
        let id = id.clone();
        tokio::spawn(async move {
            let reply = reqwest::Client::new()
                .get(format!("{url}/v1/approvals/{id}?wait=30s"))
                .bearer_auth(super::harness::AGENT)
                .send()
                .await
                .expect("the wait answers");
            let body: serde_json::Value = reply.json().await.expect("json");
            (body, Instant::now())
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = b.sandbox_projects_requests().await;
    let approved = b.approve(&id).await;
    let approved_at = Instant::now();
    assert_eq!(approved.status, 200, "{}", approved.body);
    let (body, woke_at) = waiter.await.expect("waiter");
    assert_eq!(body["status"], "completed", "{body}");
    assert_eq!(body["approved_by"], "demo-approver", "{body}");
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert!(
        b.sandbox_projects_requests().await > before,
        "B ran the call"
    );
    let after_approve = woke_at.saturating_duration_since(approved_at);
    eprintln!(
        "fleet: approve on B answered, the wait on A returned {} ms later",
        after_approve.as_millis()
    );
    // Ended: a wait answers at once on either replica.
    let again = a.approval(&id, "30s").await;
    assert_eq!(again.body["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_approvers_on_two_replicas_at_once_one_runs_the_other_gets_409() {
    let (_database, _root, a, b) = fleet("two_approvers", &[]).await;
    let id = a.ask_delete("fleet-race", "notes.md").await;
    let before = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    let (on_a, on_b) = tokio::join!(a.approve(&id), b.approve(&id));
    let mut statuses = [on_a.status, on_b.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "A: {} B: {}", on_a.body, on_b.body);
    let loser = if on_a.status == 409 { &on_a } else { &on_b };
    assert!(
        loser.body.to_string().contains("running") || loser.body.to_string().contains("completed"),
        "{}",
        loser.body
    );
    let view = b.approval(&id, "30s").await;
    assert_eq!(view.body["status"], "completed", "{}", view.body);
    // Each replica runs against its own sandbox: the loser's never saw the call.
    let after = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    let (winner, loser) = if on_a.status == 200 { (0, 1) } else { (1, 0) };
    assert_eq!(
        after[loser], before[loser],
        "the losing replica ran nothing"
    );
    assert!(
        after[winner] > before[winner],
        "the winning replica ran the call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_run_has_its_run_ended_once_by_another_replica() {
    let work = tempfile::tempdir().expect("config dir");
    let config = work.path().join("askgate.json");
    std::fs::write(
        &config,
        json!({"approvals": {"run_deadline_seconds": 3, "approve_wait_seconds": 1,
                             "sweep_interval_ms": 100}})
        .to_string(),
    )
    .expect("config written");
    let config = config.display().to_string();
    let (_database, root, mut a, b) = fleet("killed_mid_run", &["--config", &config]).await;
    let id = a.ask_delete("fleet-kill", "notes.md").await;
    // A's upstream holds the delete for a minute: the run is under way when A dies, before
    // its own 3 s run deadline (so only another replica's sweeper can end it).
    let fault = reqwest::Client::new()
        .post(format!("{}/_sandbox/faults", a.sandbox_url()))
        .json(&json!({"fault": "delay", "ms": 60_000, "count": 1}))
        .send()
        .await
        .expect("fault set");
    assert!(fault.status().is_success());
    let approved = a.approve(&id).await;
    assert_eq!(approved.status, 202, "still running: {}", approved.body);
    assert_eq!(approved.body["status"], "running", "{}", approved.body);
    a.kill_9();
    // B's sweeper ends it once A's lease and the run deadline have passed.
    let ended = b.approval(&id, "30s").await;
    assert_eq!(ended.body["status"], "failed", "{}", ended.body);
    let text = ended.body["result"].to_string();
    assert!(text.contains("deadline"), "{text}");
    assert!(
        text.contains("may or may not have reached the upstream"),
        "{text}"
    );
    // Logged once, by B (A is gone); B's sweeper writes the record just after the row ends.
    let logged = || -> usize {
        ["a", "b"]
            .iter()
            .flat_map(|name| {
                std::fs::read_dir(root.path().join(name).join("logs"))
                    .into_iter()
                    .flatten()
            })
            .flatten()
            .map(|file| std::fs::read_to_string(file.path()).unwrap_or_default())
            .map(|text| text.matches("\"error_kind\":\"deadline\"").count())
            .sum()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while logged() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Two more sweeps: nobody logs it again.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let logged = logged();
    assert_eq!(logged, 1, "the deadline outcome is logged once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_replica_finds_what_was_pending_and_can_approve_it() {
    let database = Database::fresh("restart_finds_pending").await;
    let root = tempfile::tempdir().expect("root");
    let policies = ask_delete_policies(root.path());
    let mut a = Replica::start("a", root.path(), &database.url, &policies).await;
    let id = a.ask_delete("fleet-restart", "notes.md").await;
    a.kill_9();
    let again = Replica::start("a2", root.path(), &database.url, &policies).await;
    let found = again.approval(&id, "0s").await;
    assert_eq!(found.body["status"], "pending", "{}", found.body);
    let approved = again.approve(&id).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(again.approval(&id, "30s").await.body["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_store_stops_serve_with_its_name_and_never_its_password() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store"])
        .arg("postgres://askgate:s3cret-pw@127.0.0.1:1/askgate")
        .output()
        .await
        .expect("serve runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("127.0.0.1:1"), "{stderr}");
    assert!(stderr.contains("could not join the fleet"), "{stderr}");
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_with_a_newer_schema_is_refused() {
    let database = Database::fresh("newer_schema").await;
    database
        .client()
        .await
        .batch_execute(
            "CREATE TABLE askgate_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
             INSERT INTO askgate_schema (version) VALUES (99);",
        )
        .await
        .expect("schema faked");
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store", &database.url])
        .output()
        .await
        .expect("serve runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let known = askgate::store::postgres::SCHEMA_VERSION;
    assert!(
        stderr.contains(&format!(
            "schema version 99, newer than this askgate knows ({known})"
        )),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_held_on_a_gets_the_result_of_an_approval_given_on_b() {
    let (_database, _root, a, b) = fleet("mcp_held_on_a", &[]).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "Projects",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "askgate-fleet-tests", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}},
        "arguments": {"method": "project_delete", "path": "notes.md"}}});
    let held = {
        let url = a.url.clone();
        tokio::spawn(async move {
            let reply = reqwest::Client::new()
                .post(format!("{url}/mcp"))
                .bearer_auth(super::harness::AGENT)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "Projects")
                .body(call.to_string())
                .send()
                .await
                .expect("the held call answers");
            (reply.text().await.expect("a body"), Instant::now())
        })
    };
    // B lists the approval A holds open.
    let mut id = None;
    for _ in 0..200 {
        let listed = b
            .send(
                reqwest::Method::GET,
                "/v1/approvals",
                Some(super::harness::APPROVER),
                None,
            )
            .await;
        if let Some(found) = listed.body["approvals"][0]["id"].as_str() {
            id = Some(found.to_string());
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let id = id.expect("the MCP call is held as an approval");
    let approved = b.approve(&id).await;
    let approved_at = Instant::now();
    assert_eq!(approved.status, 200, "{}", approved.body);
    let (text, answered_at) = held.await.expect("held call");
    assert!(text.contains("\"result\""), "{text}");
    assert!(text.contains("\"isError\":false"), "{text}");
    eprintln!(
        "fleet: MCP tools/call held on A answered {} ms after B's approve returned",
        answered_at
            .saturating_duration_since(approved_at)
            .as_millis()
    );
    assert_eq!(a.approval(&id, "0s").await.body["status"], "completed");
}

/// A measurement, not a test (`--ignored`): approve on B → the result on the call held on A
/// with `?wait=`, from sending the approve to A's answer, over sequential rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: run with --ignored --nocapture"]
async fn measure_the_approval_round_trip_across_replicas() {
    let (_database, _root, a, b) = fleet("measure_round_trip", &[]).await;
    let mut rounds = Vec::new();
    for round in 0..100 {
        let id = a.ask_delete(&format!("measure-{round}"), "notes.md").await;
        let waiter = {
            let url = a.url.clone();
            let id = id.clone();
            tokio::spawn(async move {
                let reply = reqwest::Client::new()
                    .get(format!("{url}/v1/approvals/{id}?wait=30s"))
                    .bearer_auth(super::harness::AGENT)
                    .send()
                    .await
                    .expect("the wait answers");
                let body: serde_json::Value = reply.json().await.expect("json");
                (body, Instant::now())
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let sent = Instant::now();
        let approved = b.approve(&id).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
        let (body, answered) = waiter.await.expect("waiter");
        // Ended (after the first round the file is gone, so the delete fails upstream).
        assert!(
            body["status"] == "completed" || body["status"] == "failed",
            "{body}"
        );
        rounds.push(answered.saturating_duration_since(sent));
    }
    rounds.sort_unstable();
    let at = |q: f64| rounds[((rounds.len() as f64 - 1.0) * q).round() as usize];
    eprintln!(
        "fleet round trip (approve on B -> result on A), {} rounds: p50 {:?}, p99 {:?}, max {:?}",
        rounds.len(),
        at(0.5),
        at(0.99),
        rounds[rounds.len() - 1]
    );
}
