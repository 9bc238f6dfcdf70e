//! The fleet's part of issue 32 (findings/trust-2026-12-04.md): a hostile approval id never
//! reaches PostgreSQL and no answer names the store (P4); two live replicas never share one
//! replica id (P8).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::harness::{ask_delete_policies, Database, Replica, AGENT, APPROVER};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p4_a_hostile_approval_id_is_unknown_and_no_answer_names_the_store() {
    let database = Database::fresh("p4_hostile_id").await;
    let root = tempfile::tempdir().unwrap();
    let policies = ask_delete_policies(root.path());
    let a = Replica::start("a", root.path(), &database.url, &policies).await;
    let long = format!("ap_{}", "x".repeat(8_000));
    for id in [
        "ap_%00x",
        "ap_%00",
        "ap_'%20OR%201=1%20--",
        "%E2%80%AE",
        long.as_str(),
    ] {
        for (method, path, token) in [
            (reqwest::Method::GET, format!("/v1/approvals/{id}"), AGENT),
            (
                reqwest::Method::GET,
                format!("/v1/approvals/{id}?wait=1s"),
                AGENT,
            ),
            (
                reqwest::Method::POST,
                format!("/v1/approvals/{id}/approve"),
                APPROVER,
            ),
            (
                reqwest::Method::POST,
                format!("/v1/approvals/{id}/refuse"),
                APPROVER,
            ),
        ] {
            let Ok(reply) = a.try_send(method, &path, Some(token), None).await else {
                // The HTTP layer may close a connection whose request line is too long.
                continue;
            };
            let text = reply.body.to_string();
            assert!(
                matches!(reply.status, 400 | 404 | 414 | 431),
                "{:.80}: {} {text:.300}",
                path,
                reply.status
            );
            for secret in ["postgres", "127.0.0.1", "5432", "askgate_", "invalid byte"] {
                assert!(
                    !text.contains(secret),
                    "{:.80} names `{secret}`: {text:.300}",
                    path
                );
            }
        }
    }
    assert_eq!(a.healthz().await.body["status"], "ok");
}

/// `askgate serve --store` for replica `id`, expected to exit: its code and stderr.
fn start_expecting_exit(store: &str, work: &std::path::Path, id: &str) -> (Option<i32>, String) {
    let err = work.join(format!("{id}-second.err"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store", store])
        .args(["--watch-seconds", "0"])
        .env("ASKGATE_REPLICA_ID", id)
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (code, std::fs::read_to_string(err).unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p8_a_second_live_replica_with_the_same_id_refuses_to_start_naming_it() {
    let database = Database::fresh("p8_same_id").await;
    let root = tempfile::tempdir().unwrap();
    let policies = ask_delete_policies(root.path());
    let mut first = Replica::start("same", root.path(), &database.url, &policies).await;
    let url = database.url.clone();
    let work = root.path().to_path_buf();
    let (code, errors) =
        tokio::task::spawn_blocking(move || start_expecting_exit(&url, &work, "same"))
            .await
            .unwrap();
    assert!(code.is_some_and(|code| code != 0), "{code:?}: {errors}");
    assert!(errors.contains("replica id `same`"), "{errors}");
    assert!(!errors.contains("s3cret"), "{errors}");
    // The first replica keeps deciding.
    assert_eq!(first.healthz().await.body["status"], "ok");
    // A replica that crashed: its successor with the same id starts once the lease lapses.
    first.kill_9();
    let again = Replica::start("same", root.path(), &database.url, &policies).await;
    assert_eq!(again.healthz().await.body["store"]["replica"], "same");
}

/// A 2026-07-28 `tools/call` as Claude Code sends it, with its tool-use id.
fn mcp_call(id: u64, tool_use_id: &str, arguments: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "ClaudeDesign", "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "askgate-tests", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "claudecode/toolUseId": tool_use_id}}})
}

async fn post_mcp(replica: &Replica, body: &serde_json::Value) -> serde_json::Value {
    let response = replica
        .http
        .post(format!("{}/mcp", replica.url))
        .bearer_auth(AGENT)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ClaudeDesign")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .or_else(|| {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<serde_json::Value>(data.trim()).ok())
                .find(|message| message.get("result").is_some())
        })
        .unwrap_or_else(|| panic!("no result: {text}"))
}

/// The decision records of `replica`'s log.
fn logged(replica: &Replica) -> Vec<serde_json::Value> {
    let mut records = Vec::new();
    for entry in std::fs::read_dir(replica.work.join("logs")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        records.extend(
            text.lines()
                .filter(|line| !line.is_empty() && !line.starts_with('\0'))
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok()),
        );
    }
    records
}

/// §3: the hook posts to replica A, the client's MCP call reaches replica B: B takes the
/// attestation from the store and decides the subagent as a subagent (with
/// `mcp.require_attestation`, an unattested call would be denied), once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_an_attestation_filed_on_one_replica_attests_the_call_on_another() {
    let database = Database::fresh("s3_attestation").await;
    let root = tempfile::tempdir().unwrap();
    let policies = ask_delete_policies(root.path());
    let config = root.path().join("askgate.json");
    std::fs::write(&config, r#"{"mcp": {"require_attestation": true}}"#).unwrap();
    let extra = ["--config", config.to_str().unwrap()];
    let (a, b) = tokio::join!(
        Replica::start_with("a", root.path(), &database.url, &policies, &extra),
        Replica::start_with("b", root.path(), &database.url, &policies, &extra),
    );
    b.consent().await;
    let list = serde_json::json!({"operation": "list_projects", "arguments": {}});
    let hook = serde_json::json!({
        "session_id": "cc-fleet", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "mcp__askgate__ClaudeDesign", "tool_input": list,
        "tool_use_id": "toolu_fleet", "agent_id": "agent-9", "agent_type": "general-purpose"
    });
    let filed = a
        .send(
            reqwest::Method::POST,
            "/v1/hooks/claude-code",
            Some(AGENT),
            Some(&hook),
        )
        .await;
    assert_eq!(filed.body, serde_json::json!({}), "{}", filed.body);
    let answered = post_mcp(&b, &mcp_call(1, "toolu_fleet", &list)).await;
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    let record = logged(&b)
        .into_iter()
        .find(|record| record["tool_use_id"] == "toolu_fleet")
        .expect("B logged the call");
    let session = &record["facts"]["context"]["session"];
    assert_eq!(session["attestation"], "attested", "{record}");
    assert_eq!(session["agent"], "subagent", "{record}");
    assert_eq!(session["agent_id"], "agent-9", "{record}");
    // Taken once across the fleet: the same id again, on A, is unattested and denied.
    let again = post_mcp(&a, &mcp_call(2, "toolu_fleet", &list)).await;
    assert_eq!(again["result"]["isError"], true, "{again}");
    assert!(
        again.to_string().contains("gates.mcp-attestation-required"),
        "{again}"
    );
}

/// A 2026-07-28 `tools/call` from a client that declared URL elicitation, optionally the retry
/// carrying the `requestState` it was given.
fn mcp_elicitable_call(
    id: u64,
    arguments: &serde_json::Value,
    state: Option<&str>,
) -> serde_json::Value {
    let mut call = mcp_call(id, &format!("toolu_ask_{id}"), arguments);
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        serde_json::json!({"elicitation": {"url": {}}});
    if let Some(state) = state {
        call["params"]["requestState"] = serde_json::json!(state);
        call["params"]["inputResponses"] =
            serde_json::json!({"askgate_approval": {"action": "cancel"}});
    }
    call
}

/// §3: a 2026-07-28 ask answered by replica A (`input_required` with a sealed `requestState`)
/// is retried on replica B: B opens the state with the fleet's key, holds the retry until the
/// approver decides (on B), and answers the approved call's result; the state opens once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_an_ask_on_one_replica_is_retried_on_another_held_and_answered() {
    let database = Database::fresh("s3_request_state").await;
    let root = tempfile::tempdir().unwrap();
    let policies = ask_delete_policies(root.path());
    let (a, b) = tokio::join!(
        Replica::start("a", root.path(), &database.url, &policies),
        Replica::start("b", root.path(), &database.url, &policies),
    );
    a.consent().await;
    let write = serde_json::json!({"operation": "write_files", "arguments": {
        "project_id": "p1", "files": [{"path": "fleet.html", "data": "<p>fleet</p>"}]}});
    let first = post_mcp(&a, &mcp_elicitable_call(1, &write, None)).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let state = result["requestState"]
        .as_str()
        .expect("a state")
        .to_string();
    let url = result["inputRequests"]["askgate_approval"]["params"]["url"]
        .as_str()
        .expect("the approval's page")
        .to_string();
    let id = url.rsplit('/').next().unwrap().to_string();
    let retry = mcp_elicitable_call(2, &write, Some(&state));
    let approve = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let approved = b.approve(&id).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
    };
    let (held, ()) = tokio::join!(post_mcp(&b, &retry), approve);
    let text = held.to_string();
    assert!(
        !text.contains("does not verify"),
        "B opened A's state: {held}"
    );
    assert!(!text.contains("askgate refused this retry"), "{held}");
    assert!(text.contains(&id), "the answer names the approval: {held}");
    let settled = b.approval(&id, "0").await;
    assert_ne!(settled.body["status"], "pending", "{}", settled.body);
    // Redeemed on B: the same state again on B is refused.
    let again = post_mcp(&b, &retry).await;
    assert!(again.to_string().contains("already used"), "{again}");
}
