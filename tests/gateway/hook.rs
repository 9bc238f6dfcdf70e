//! `POST /v1/hooks/claude-code` over real HTTP: Claude Code's `PreToolUse` input decided on the
//! hook-mode set, answered as the client reads it, logged with the `tool_use_id`, and nothing
//! sent upstream.

use serde_json::{json, Value};

use super::harness::{Gateway, AGENT, APPROVER};
use super::hook_log::logged;

fn input(tool: &str, tool_input: Value) -> Value {
    json!({
        "session_id": "cc-session-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_01",
        "a_field_from_a_later_client": true
    })
}

fn design(operation: &str, arguments: Value) -> Value {
    input(
        "ClaudeDesign",
        json!({"operation": operation, "arguments": arguments}),
    )
}

async fn hook(gateway: &Gateway, body: Value) -> Value {
    let reply = gateway
        .post("/v1/hooks/claude-code", Some(AGENT), Some(body))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

fn decision(output: &Value) -> &str {
    output["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("")
}

fn reason(output: &Value) -> &str {
    output["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ordinary_call_gets_no_opinion_and_nothing_goes_upstream() {
    let gateway = Gateway::start().await;
    let write = design(
        "write_files",
        json!({"project_id": "p1", "files": [{"path": "index.html", "data": "<p>x</p>"}]}),
    );
    assert_eq!(hook(&gateway, write).await, json!({}));
    let read = design("get_project", json!({"project_id": "p1"}));
    assert_eq!(hook(&gateway, read).await, json!({}));
    let other = input("Bash", json!({"command": "ls"}));
    assert_eq!(hook(&gateway, other).await, json!({}));
    assert_eq!(gateway.stats().await["requests"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reserved_target_asks_whatever_the_client_holds() {
    let gateway = Gateway::start().await;
    let write = design(
        "write_files",
        json!({"project_id": "p1", "plan_token": "tok", "files": [{"path": "CLAUDE.md", "data": "x"}]}),
    );
    let output = hook(&gateway, write).await;
    assert_eq!(decision(&output), "ask", "{output}");
    assert!(
        reason(&output).contains("hook.blocked-targets-ask"),
        "{output}"
    );
    assert_eq!(
        output["hookSpecificOutput"]["hookEventName"], "PreToolUse",
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_ask_rule_asks_and_is_logged_with_the_tool_use_id() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        raw.policies = Some(vec!["policies/examples".into()]);
        raw.log_dir = Some(log_dir);
    })
    .await;
    let delete = input(
        "Projects",
        json!({"method": "project_delete", "path": "notes.md"}),
    );
    let output = hook(&gateway, delete).await;
    assert_eq!(decision(&output), "ask", "{output}");
    assert!(
        reason(&output).contains("your administrator requires approval for project_delete"),
        "{output}"
    );
    let info = input("Projects", json!({"method": "project_info"}));
    assert_eq!(hook(&gateway, info).await, json!({}));
    let records = logged(log.path());
    let ids: Vec<&str> = records
        .iter()
        .filter_map(|record| record["tool_use_id"].as_str())
        .collect();
    assert_eq!(ids, ["toolu_01", "toolu_01"], "{records:?}");
    assert_eq!(records[0]["decision"], "ask");
    assert_eq!(records[0]["operation"], "project_delete");
    assert_eq!(records[0]["session"], "cc-session-1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_gate_denies_in_hook_mode() {
    let gateway = Gateway::start_with(|raw| {
        raw.environment = Some(askgate::facts::Environment {
            essential_traffic_only: true,
            ..Default::default()
        });
    })
    .await;
    let output = hook(&gateway, design("get_project", json!({"project_id": "p1"}))).await;
    assert_eq!(decision(&output), "deny", "{output}");
    assert!(
        reason(&output).contains("gates.design-essential-traffic-only"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_hook_input_is_a_deny_that_names_the_problem() {
    let gateway = Gateway::start().await;
    let unknown_mode = {
        let mut body = design("get_project", json!({"project_id": "p1"}));
        body["permission_mode"] = json!("yolo");
        body
    };
    let output = hook(&gateway, unknown_mode).await;
    assert_eq!(decision(&output), "deny", "{output}");
    assert!(reason(&output).contains("`yolo`"), "{output}");
    let bad_call = input("ClaudeDesign", json!({"arguments": {"project_id": "p1"}}));
    let output = hook(&gateway, bad_call).await;
    assert_eq!(decision(&output), "deny", "{output}");
    assert!(reason(&output).contains("operation"), "{output}");
    let other_event = {
        let mut body = design("get_project", json!({"project_id": "p1"}));
        body["hook_event_name"] = json!("PermissionRequest");
        body
    };
    let output = hook(&gateway, other_event).await;
    assert_eq!(decision(&output), "deny", "{output}");
    let not_json = gateway
        .send(
            reqwest::Method::POST,
            format!("{}/v1/hooks/claude-code", gateway.url),
            Some(AGENT),
            Some(b"{not json".to_vec()),
        )
        .await;
    assert_eq!(not_json.status, 200);
    assert_eq!(decision(&not_json.body), "deny", "{}", not_json.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_needs_a_caller_token() {
    let gateway = Gateway::start().await;
    let body = Some(design("get_project", json!({"project_id": "p1"})));
    let anonymous = gateway
        .post("/v1/hooks/claude-code", None, body.clone())
        .await;
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);
    let unknown = gateway
        .post(
            "/v1/hooks/claude-code",
            Some("not-a-known-token-at-all"),
            body.clone(),
        )
        .await;
    assert_eq!(unknown.status, 401, "{}", unknown.body);
    let approver = gateway
        .post("/v1/hooks/claude-code", Some(APPROVER), body)
        .await;
    // Roles are exclusive: an approver token asks nothing (it could approve its own ask).
    assert_eq!(approver.status, 403, "{}", approver.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_rebuilds_the_hook_mode_set() {
    let managed = tempfile::tempdir().unwrap();
    let dir = managed.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.policies = Some(vec![dir])).await;
    let delete = || {
        input(
            "Projects",
            json!({"method": "project_delete", "path": "notes.md"}),
        )
    };
    assert_eq!(hook(&gateway, delete()).await, json!({}));
    std::fs::copy(
        "policies/examples/ask-project-delete.cedar",
        managed.path().join("ask-project-delete.cedar"),
    )
    .unwrap();
    let reloaded = gateway.post("/v1/admin/reload", Some(APPROVER), None).await;
    assert_eq!(reloaded.status, 200, "{}", reloaded.body);
    let output = hook(&gateway, delete()).await;
    assert_eq!(decision(&output), "ask", "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_input_ids_are_bounded_and_printable_and_never_logged_raw() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.log_dir = Some(log_dir)).await;
    let read = || design("get_project", json!({"project_id": "p1"}));
    let long = |bytes: usize| "x".repeat(bytes);
    let cases = [
        (
            "session_id",
            json!(long(257)),
            "257 bytes long: at most 256",
        ),
        ("session_id", json!("s\u{202e}1"), "U+202E"),
        ("session_id", json!("s\u{200b}1"), "U+200B"),
        ("session_id", json!(" "), "must not be empty"),
        ("agent_id", json!(long(100_000)), "100000 bytes long"),
        ("agent_id", json!("a\u{2066}b"), "U+2066"),
        (
            "tool_use_id",
            json!(long(129)),
            "129 bytes long: at most 128",
        ),
        ("tool_use_id", json!(long(200_000)), "200000 bytes long"),
        ("tool_use_id", json!("toolu\n01"), "U+000A"),
        ("hook_event_name", json!(long(100_000)), "100000 bytes long"),
        ("permission_mode", json!(long(100_000)), "100000 bytes long"),
    ];
    for (field, value, problem) in cases {
        let mut body = read();
        body[field] = value;
        let output = hook(&gateway, body).await;
        assert_eq!(decision(&output), "deny", "{field}: {output}");
        assert!(reason(&output).contains(&format!("`{field}`")), "{output}");
        assert!(reason(&output).contains(problem), "{problem}: {output}");
        assert!(reason(&output).len() < 200, "{field}: {output}");
    }
    assert!(
        logged(log.path()).is_empty(),
        "a refused input is not logged"
    );
    let mut longest = read();
    longest["session_id"] = json!(long(256));
    longest["agent_id"] = json!(long(256));
    longest["tool_use_id"] = json!(long(128));
    assert_eq!(hook(&gateway, longest).await, json!({}));
    let records = logged(log.path());
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["tool_use_id"], json!(long(128)));
    let bytes: u64 = std::fs::read_dir(log.path())
        .unwrap()
        .map(|entry| entry.unwrap().metadata().unwrap().len())
        .sum();
    assert!(bytes < 20_000, "the log holds {bytes} bytes");
}

/// `askgate` itself, run from the repository root.
fn askgate_cli(args: &[&str]) -> (i32, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Finding R1 (boundaries 2026-12-01): a log written by the hook endpoint alone, replayed on
/// the policies that decided it, reported every decision changed. Each record now names the
/// set that decided it and replay re-decides it on that set; `log tail` shows the front door
/// and the tool-use id; a replay on other policies than the log's says so in its header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r1_hook_decisions_replay_on_the_hook_set_and_name_their_front_door() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.log_dir = Some(log_dir)).await;
    let reserved = design(
        "write_files",
        json!({"project_id": "p1", "plan_token": "tok", "files": [{"path": "CLAUDE.md", "data": "x"}]}),
    );
    assert_eq!(decision(&hook(&gateway, reserved).await), "ask");
    let ordinary = design(
        "write_files",
        json!({"project_id": "p1", "files": [{"path": "index.html", "data": "<p>x</p>"}]}),
    );
    assert_eq!(hook(&gateway, ordinary).await, json!({}));
    let read = design("get_project", json!({"project_id": "p1"}));
    assert_eq!(hook(&gateway, read).await, json!({}));
    let records = logged(log.path());
    assert_eq!(records.len(), 3, "{records:?}");
    for record in &records {
        assert_eq!(record["policy_set"], "hook", "{record}");
        assert_eq!(record["front_door"], "hook", "{record}");
    }
    let dir = log.path().to_str().unwrap();
    let (code, stdout, stderr) = askgate_cli(&["replay", dir]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("3 decisions): 0 changed"), "{stdout}");
    assert!(!stdout.contains("warning:"), "{stdout}");

    let (code, stdout, _) = askgate_cli(&["log", "tail", dir]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    for line in stdout.lines() {
        assert!(line.contains("  hook  "), "{line}");
        assert!(line.contains("tool_use toolu_01"), "{line}");
    }

    // On other policies than the ones that wrote the log, the header says so.
    let (_, stdout, stderr) = askgate_cli(&["replay", dir, "--policies", "policies/examples"]);
    let warning = stdout
        .lines()
        .find(|line| line.starts_with("warning: "))
        .unwrap_or_else(|| panic!("no warning in the header:\n{stdout}"));
    assert!(warning.contains("logged by the hook set"), "{warning}");
    assert!(stderr.contains(warning), "{stderr}");
}
