//! Hook-attested MCP calls with the real client (issue 19 §3): Claude Code runs the hook
//! `askgate hook install claude-code --mcp-server askgate` writes for its MCP tool, then sends
//! the `tools/call`; askgate decides it with the client's real permission mode, agent and
//! session. Two client sessions on one token are in `attest_sessions.rs`.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::gateway::harness::{covered_write_args, write_args, Gateway, AGENT, APPROVER};
use crate::gateway::hook_install::InstalledCopy;
use crate::gateway::hook_log::logged;
use crate::support::claude_code::Run;
use crate::support::fake_messages::{Caller, FakeMessages, ToolResult, Turn};

pub const DESIGN_TOOL: &str = "mcp__askgate__ClaudeDesign";

/// The settings `hook install` writes for askgate's MCP tools too, in permission mode `mode`.
pub fn settings(copy: &InstalledCopy, server: &str, mode: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let installed = copy.install(&file, &["--server", server, "--mcp-server", "askgate"]);
    assert!(installed.status.success(), "{installed:?}");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    settings["permissions"] = json!({"defaultMode": mode});
    settings
}

/// A run of the client with askgate as its MCP server `askgate`, the demo agent token, and
/// the hook installed from `copy` in permission mode `mode`.
pub fn attested_run<'a>(
    fake: &'a FakeMessages,
    gateway: &Gateway,
    copy: &InstalledCopy,
    mode: &str,
) -> Run<'a> {
    Run {
        api_url: &fake.url,
        prompt: "work on the design project",
        mcp_config: Some(json!({"mcpServers": {"askgate": {"type": "http",
            "url": format!("{}/mcp", gateway.url),
            "headers": {"Authorization": format!("Bearer {AGENT}")}}}})),
        settings: Some(settings(copy, &gateway.url, mode)),
        allowed_tools: vec![DESIGN_TOOL.to_string()],
        args: Vec::new(),
        env: vec![("ASKGATE_AGENT_TOKEN".to_string(), AGENT.to_string())],
        timeout: Duration::from_secs(150),
    }
}

pub fn design(operation: &str, arguments: Value) -> Turn {
    Turn::tool(
        DESIGN_TOOL,
        json!({"operation": operation, "arguments": arguments}),
    )
}

/// The plan token in a `finalize_plan` result (its first text is the upstream's JSON).
pub fn plan_token(result: &ToolResult) -> String {
    let mut values = serde_json::Deserializer::from_str(&result.text).into_iter::<Value>();
    let body = values.next().and_then(Result::ok).unwrap_or(Value::Null);
    body["plan_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no plan token in {result:?}"))
        .to_string()
}

/// What the approver does with the next approval that becomes pending.
pub enum Verdict {
    Approve,
    Refuse(&'static str),
}

/// Decides, through the approvals API, each approval as it becomes pending, in order, and
/// returns them as they were pending.
pub async fn decide_in_turn(gateway: &Gateway, verdicts: &[Verdict]) -> Vec<Value> {
    let mut decided: Vec<Value> = Vec::new();
    for verdict in verdicts {
        let approval = next_pending(gateway, &decided).await;
        let id = approval["id"].as_str().unwrap();
        let (path, body) = match verdict {
            Verdict::Approve => (format!("/v1/approvals/{id}/approve"), None),
            Verdict::Refuse(note) => (
                format!("/v1/approvals/{id}/refuse"),
                Some(json!({"note": note})),
            ),
        };
        let reply = gateway.post(&path, Some(APPROVER), body).await;
        // 202 (`running`): approved before the client came back with its 2026-07-28 retry;
        // the call runs once it does (A16).
        assert!(matches!(reply.status, 200 | 202), "{}", reply.body);
        decided.push(approval);
    }
    decided
}

async fn next_pending(gateway: &Gateway, decided: &[Value]) -> Value {
    for _ in 0..500 {
        let pending = gateway.get("/v1/approvals", Some(APPROVER)).await;
        let fresh = pending.body["approvals"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|approval| !decided.iter().any(|seen| seen["id"] == approval["id"]));
        if let Some(approval) = fresh {
            return approval.clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no approval became pending after {decided:?}");
}

/// The decision records of `operation` calls, in order.
pub fn decisions_of(log: &std::path::Path, operation: &str) -> Vec<Value> {
    logged(log)
        .into_iter()
        .filter(|record| record["operation"] == operation)
        .collect()
}

/// A service logging its decisions to `log`, with Design consent recorded.
pub async fn consented_gateway(log: &Path) -> Gateway {
    let log_dir = log.to_path_buf();
    let gateway = Gateway::start_with(move |raw| raw.log_dir = Some(log_dir)).await;
    gateway.record_consent().await;
    gateway
}

/// No `tools/call` reached askgate: nothing decided, logged or run.
async fn assert_nothing_reached(gateway: &Gateway, log: &Path) {
    assert!(logged(log).is_empty(), "askgate decided nothing");
    assert_eq!(gateway.stats().await["tools_call"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_clients_dont_ask_mode_reaches_an_attested_mcp_decision() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();
    let fake = FakeMessages::start(vec![
        design("write_files", write_args("p1", &["a.html"])),
        Turn::Text("done".to_string()),
    ])
    .await;
    let out = attested_run(&fake, &gateway, &copy, "dontAsk").json().await;
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}; client output {out}");
    assert!(results[0].is_error, "{results:?}");
    assert!(results[0].text.contains("modes.dont-ask"), "{results:?}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    let records = decisions_of(log.path(), "write_files");
    let session = &records[0]["facts"]["context"]["session"];
    assert_eq!(session["attestation"], "attested", "{}", records[0]);
    assert_eq!(session["mode"], "dontAsk", "{}", records[0]);
    let id = records[0]["session"].as_str().unwrap_or("");
    assert!(id.starts_with("mcp-attested:"), "{}", records[0]);
}

/// `--permission-mode plan` as the real client has it: its plan mode refuses every call to an
/// MCP tool that is not annotated read-only, before the call is sent, whatever a hook answers
/// (Claude Code 2.1.328: `Cannot call mcp__askgate__ClaudeDesign while in plan mode.`; here a
/// second hook even answers `allow`).
/// askgate's tools are not read-only (one tool carries reads and writes), so in plan mode a
/// read is refused as a write is: the hook attests them, but no `tools/call` reaches askgate,
/// nothing is decided or logged, nothing runs. (Were a plan-mode call to arrive, askgate
/// decides it as plan mode: `tests/gateway/attest.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_clients_plan_mode_refuses_askgates_mcp_tools_before_askgate_decides() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();
    let fake = FakeMessages::start(vec![
        design("list_projects", json!({})),
        design("write_files", write_args("p1", &["a.html"])),
        Turn::Text("done".to_string()),
    ])
    .await;
    let mut run = attested_run(&fake, &gateway, &copy, "default");
    run.args = vec!["--permission-mode".into(), "plan".into()];
    // Not even a hook's `allow` lets the call through: askgate's hook could not change this.
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow"}});
    let settings = run.settings.as_mut().unwrap();
    settings["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(json!({"matcher": DESIGN_TOOL, "hooks": [{"type": "command",
            "command": format!("cat >/dev/null; echo '{allow}'")}]}));
    let out = run.json().await;
    assert_eq!(out["result"], "done", "{out}");
    let results = fake.tool_results();
    assert_eq!(results.len(), 2, "{results:?}; client output {out}");
    for result in &results {
        assert!(result.is_error, "{result:?}");
        assert_eq!(
            result.text,
            format!("Cannot call {DESIGN_TOOL} while in plan mode.")
        );
    }
    let denied = out["permission_denials"].as_array().unwrap();
    assert_eq!(denied.len(), 2, "{out}");
    assert_nothing_reached(&gateway, log.path()).await;
}

/// The installed entry fails closed for askgate's MCP tools as for the built-in ones: with the
/// binary gone the hook cannot attest, so the client blocks the call (`|| exit 2`,
/// `onFailure: "block"`) and no `tools/call` reaches askgate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_cannot_run_blocks_the_mcp_call_before_it_reaches_askgate() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();
    let fake = FakeMessages::start(vec![
        design("list_projects", json!({})),
        Turn::Text("done".to_string()),
    ])
    .await;
    let run = attested_run(&fake, &gateway, &copy, "default");
    copy.remove();
    let out = run.json().await;
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}; client output {out}");
    assert!(results[0].is_error, "{results:?}");
    assert!(
        results[0]
            .text
            .starts_with(&format!("PreToolUse:{DESIGN_TOOL} hook error")),
        "{results:?}"
    );
    assert_nothing_reached(&gateway, log.path()).await;
}

const REFUSAL_NOTE: &str = "not the main page: send the change for review first";

/// A subagent the real client starts (the Agent tool, in the foreground) writes over MCP: its
/// tokenless write is denied (a subagent never mints a grant, 6b); its `finalize_plan` asks for
/// this call only and registers no plan; its write with that token asks per batch, and runs
/// once approved. Afterwards nothing durable exists: the sandbox saw no grant, and the main
/// agent's own tokenless write still asks for the project grant (refused here, with a note
/// the model reads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_subagents_mcp_write_asks_per_batch_and_mints_no_grant_or_plan() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();
    let plan = json!({"project_id": "p1", "writes": ["sub.html"], "scope": "paths"});
    let subagent = vec![
        design("write_files", write_args("p1", &["sub.html"])),
        design("finalize_plan", plan),
        Turn::after(|results| {
            let token = plan_token(results.last().expect("the plan's result"));
            design(
                "write_files",
                covered_write_args("p1", &token, &["sub.html"]),
            )
        }),
        Turn::Text("subagent done".to_string()),
    ];
    let main = vec![
        Turn::tool(
            "Agent",
            json!({"description": "write the page", "prompt": "write sub.html in p1",
                   "subagent_type": "general-purpose", "run_in_background": false}),
        ),
        design("write_files", write_args("p1", &["main.html"])),
        Turn::Text("done".to_string()),
    ];
    let fake = FakeMessages::start_with_subagent(main, subagent).await;
    let run = attested_run(&fake, &gateway, &copy, "default");
    let verdicts = [
        Verdict::Approve,
        Verdict::Approve,
        Verdict::Refuse(REFUSAL_NOTE),
    ];
    let (out, approvals) = tokio::join!(run.json(), decide_in_turn(&gateway, &verdicts));
    assert_eq!(out["result"], "done", "{out}");

    // The approver saw two asks for this call only, then the main agent's grant card.
    let kinds: Vec<&Value> = approvals.iter().map(|a| &a["card"]["kind"]).collect();
    assert_eq!(kinds, [&json!("batch"), &json!("batch"), &json!("grant")]);

    let sub = fake.tool_results_of(Caller::Subagent);
    assert_eq!(sub.len(), 3, "{sub:?}");
    assert!(sub[0].is_error, "{sub:?}");
    assert!(
        sub[0].text.contains("grants.subagent-or-hook-denied"),
        "{sub:?}"
    );
    assert!(!sub[1].is_error && !sub[2].is_error, "{sub:?}");
    let main = fake.tool_results();
    assert_eq!(main.len(), 2, "{main:?}");
    let refused = &main[1];
    assert!(refused.is_error, "{refused:?}");
    assert!(refused.text.contains(REFUSAL_NOTE), "{refused:?}");
    assert!(
        refused.text.contains("/console/approvals/ap_"),
        "{refused:?}"
    );

    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 0, "no durable grant: {stats}");
    assert_eq!(stats["tools_call"]["write_files"], 1, "{stats}");
    assert_eq!(
        gateway.read_file("p1", "sub.html").await.as_deref(),
        Some("<p>sub.html</p>")
    );
    assert_eq!(gateway.read_file("p1", "main.html").await, None);

    // The log: the subagent's three calls attested as a subagent's, its write not covered by
    // any plan; the main agent's write attested as the main agent's, asking for the grant.
    let writes = decisions_of(log.path(), "write_files");
    let plans = decisions_of(log.path(), "finalize_plan");
    let by_subagent = [&writes[0], &plans[0], &writes[1]];
    for (record, policy) in by_subagent.iter().zip([
        "grants.subagent-or-hook-denied",
        "design.finalize-plan-asks-this-call",
        "plans.uncovered-asks",
    ]) {
        let session = &record["facts"]["context"]["session"];
        assert_eq!(session["attestation"], "attested", "{record}");
        assert_eq!(session["agent"], "subagent", "{record}");
        assert!(session["agent_id"].as_str().is_some(), "{record}");
        assert_eq!(session["may_record"], false, "{record}");
        assert!(
            record["policies"]
                .as_array()
                .unwrap()
                .contains(&json!(policy)),
            "{record}"
        );
    }
    assert_eq!(
        writes[1]["facts"]["context"]["design"]["plan"]["found"], false,
        "{}",
        writes[1]
    );
    let main_write = writes
        .iter()
        .find(|record| record["targets"] == json!(["main.html"]))
        .expect("the main agent's write is logged");
    let session = &main_write["facts"]["context"]["session"];
    assert_eq!(session["attestation"], "attested", "{main_write}");
    assert_eq!(session["agent"], "main", "{main_write}");
    assert_eq!(main_write["approval"], "grant", "{main_write}");
    assert!(
        main_write["policies"]
            .as_array()
            .unwrap()
            .contains(&json!("grants.card-asks")),
        "{main_write}"
    );
}
