//! The MCP front door with the real client: Claude Code connects to `serve`'s `/mcp` with an
//! agent token and the model's `mcp__askgate__ClaudeDesign` calls go through askgate's
//! pipeline (issue 10 §3, tests 1–3).

use std::time::Duration;

use serde_json::{json, Value};

use crate::gateway::harness::{write_args, Gateway, AGENT, APPROVER};
use crate::gateway::hook_log::logged;
use crate::support::claude_code::{self, Run};
use crate::support::fake_messages::{FakeMessages, ToolResult, Turn};

const DESIGN_TOOL: &str = "mcp__askgate__ClaudeDesign";

/// Claude Code's `--mcp-config` for askgate at `server` with the demo agent token.
fn mcp_config(server: &str) -> Value {
    json!({"mcpServers": {"askgate": {"type": "http", "url": format!("{server}/mcp"),
        "headers": {"Authorization": format!("Bearer {AGENT}")}}}})
}

fn run<'a>(fake: &'a FakeMessages, gateway: &Gateway) -> Run<'a> {
    Run {
        api_url: &fake.url,
        prompt: "work on the design project",
        mcp_config: Some(mcp_config(&gateway.url)),
        settings: None,
        allowed_tools: vec![DESIGN_TOOL.to_string()],
        args: Vec::new(),
        env: Vec::new(),
        timeout: Duration::from_secs(150),
    }
}

fn design(operation: &str, arguments: Value) -> Turn {
    Turn::tool(
        DESIGN_TOOL,
        json!({"operation": operation, "arguments": arguments}),
    )
}

/// The one tool result the model was sent back.
fn only_result(fake: &FakeMessages, out: &Value) -> ToolResult {
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}; client output {out}");
    results.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_read_list_projects_returns_the_sandboxs_projects_to_the_model() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let fake = FakeMessages::start(vec![
        design("list_projects", json!({})),
        Turn::Text("listed".to_string()),
    ])
    .await;
    let out = run(&fake, &gateway).json().await;
    assert_eq!(out["result"], "listed", "{out}");
    let result = only_result(&fake, &out);
    assert!(!result.is_error, "{result:?}");
    assert!(result.text.contains("Q3 deck"), "{result:?}");
    assert!(result.text.contains("p1"), "{result:?}");
    assert_eq!(gateway.tool_calls("list_projects").await, 1);
}

/// Approves the first pending approval once it appears, through the approvals API.
async fn approve_when_pending(gateway: &Gateway) -> Value {
    for _ in 0..1_200 {
        let pending = gateway.get("/v1/approvals", Some(APPROVER)).await;
        if let Some(approval) = pending.body["approvals"].as_array().and_then(|a| a.first()) {
            assert_eq!(gateway.tool_calls("write_files").await, 0, "held, not run");
            let id = approval["id"].as_str().unwrap();
            let approved = gateway.approve(id).await;
            // 202 `running`: a 2026-07-28 client took the approval link and its retry was not
            // back yet, so the approved work waits for it (A16); the landed write is checked
            // after the client ends either way.
            let waits = approved.status == 202 && approved.body["status"] == "running";
            assert!(approved.status == 200 || waits, "{}", approved.body);
            return approval.clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the held call never became a pending approval");
}

/// Claude Code's current MCP client speaks 2026-07-28 (stateless); `MCP_SDK_GENERATION=v1`
/// makes it speak 2025-11-25 (`initialize`, `Mcp-Session-Id`, URL elicitation declared).
const GENERATIONS: [Option<&str>; 2] = [None, Some("v1")];

/// Also: the ask's decision record carries the tool-use id the client sent in `_meta`
/// (`claudecode/toolUseId`), the id the model's `tool_use` block had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_ask_holds_a_tokenless_write_until_approved_and_the_write_lands_once() {
    for generation in GENERATIONS {
        held_write_lands_once(generation).await;
    }
}

async fn held_write_lands_once(generation: Option<&str>) {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.log_dir = Some(log_dir)).await;
    gateway.record_consent().await;
    let fake = FakeMessages::start(vec![
        design("write_files", write_args("p1", &["held.html"])),
        Turn::Text("written".to_string()),
    ])
    .await;
    let mut client = run(&fake, &gateway);
    if let Some(generation) = generation {
        client
            .env
            .push(("MCP_SDK_GENERATION".into(), generation.into()));
    }
    let (out, approval) = tokio::join!(client.json(), approve_when_pending(&gateway));
    assert_eq!(approval["card"]["kind"], "grant", "{approval}");
    assert_eq!(out["result"], "written", "{out}");
    let result = only_result(&fake, &out);
    assert!(!result.is_error, "{result:?}");
    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 1, "{stats}");
    // The first attempt is refused with needs_project_grant, then the one write that lands.
    assert_eq!(stats["tools_call"]["write_files"], 2, "{stats}");
    assert_eq!(
        gateway.read_file("p1", "held.html").await.as_deref(),
        Some("<p>held.html</p>")
    );
    let asked: Vec<Value> = logged(log.path())
        .into_iter()
        .filter(|record| record["decision"] == "ask")
        .collect();
    // The call's decision, then the re-decision when it was approved.
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0]["operation"], "write_files", "{asked:?}");
    assert!(result.tool_use_id.starts_with("toolu_"), "{result:?}");
    assert_eq!(
        asked[0]["tool_use_id"],
        json!(result.tool_use_id),
        "{asked:?}"
    );
    // The model's result names the approval's page in the console.
    assert!(result.text.contains("/console/approvals/ap_"), "{result:?}");
    // On 2026-07-28 the client was sent the approval link (input_required) and its retry,
    // with the sealed state, was the call that was held and ran.
    let metrics = gateway.get("/metrics", None).await.body;
    let metrics = metrics.as_str().unwrap_or("");
    let links = |step: &str| {
        metrics
            .lines()
            .find(|line| {
                line.starts_with(&format!(
                    "askgate_mcp_approval_links_total{{step=\"{step}\"}}"
                ))
            })
            .and_then(|line| line.rsplit(' ').next())
            .and_then(|count| count.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    };
    let expected = u64::from(generation.is_none());
    assert_eq!(links("offered"), expected, "{metrics}");
    assert_eq!(links("redeemed"), expected, "{metrics}");
    assert_eq!(links("refused"), 0, "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_deny_refuses_a_claude_md_write_with_the_reason_and_the_sandbox_never_sees_it() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let fake = FakeMessages::start(vec![
        design("write_files", write_args("p1", &["CLAUDE.md"])),
        Turn::Text("refused".to_string()),
    ])
    .await;
    let out = run(&fake, &gateway).json().await;
    assert_eq!(out["result"], "refused", "{out}");
    let result = only_result(&fake, &out);
    assert!(result.is_error, "{result:?}");
    assert!(
        result.text.contains("askgate denied this call"),
        "{result:?}"
    );
    assert!(result.text.contains("reserved"), "{result:?}");
    let stats = gateway.stats().await;
    assert_eq!(stats["tools_call"].get("write_files"), None, "{stats}");
    assert_eq!(stats["grant_posts"], 0, "{stats}");
}

/// The schema the model receives for `ClaudeDesign` once it loads the deferred tool with
/// `ToolSearch` names every operation's arguments (issue 19 §1): the client flattens root
/// composition keywords, so askgate publishes none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_sees_claude_designs_arguments_after_tool_search() {
    let gateway = Gateway::start().await;
    let fake = FakeMessages::start(vec![
        Turn::tool(
            "ToolSearch",
            json!({"query": format!("select:{DESIGN_TOOL}"), "max_results": 1}),
        ),
        Turn::Text("loaded".to_string()),
    ])
    .await;
    let out = run(&fake, &gateway).json().await;
    assert_eq!(out["result"], "loaded", "{out}");
    let requests = fake.agent_requests();
    let loaded = requests
        .iter()
        .flat_map(|request| request["tools"].as_array().cloned().unwrap_or_default())
        .find(|tool| tool["name"] == DESIGN_TOOL)
        .unwrap_or_else(|| panic!("{DESIGN_TOOL} never reached the model: {requests:?}"));
    let schema = &loaded["input_schema"];
    let arguments = &schema["properties"]["arguments"]["properties"];
    for key in [
        "files",
        "path",
        "data",
        "plan_token",
        "writes",
        "paths",
        "scope",
    ] {
        let text = arguments.to_string();
        assert!(
            text.contains(&format!("\"{key}\"")),
            "`{key}` missing from what the model sees: {schema}"
        );
    }
    assert!(
        loaded["description"]
            .as_str()
            .unwrap_or("")
            .contains("- write_files(project_id, plan_token, files[{path*"),
        "{loaded}"
    );
}

/// What `claude mcp list` shows for askgate's `/mcp` without a token and with an unknown one
/// (issue 19 §5): the words name the agent token, not a failed OAuth discovery.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_mcp_list_says_askgate_needs_an_agent_token() {
    let gateway = Gateway::start().await;
    let home = tempfile::tempdir().unwrap();
    let url = format!("{}/mcp", gateway.url);
    let timeout = Duration::from_secs(90);
    for (name, header) in [
        ("askgate-no-token", None),
        (
            "askgate-wrong-token",
            Some("Authorization: Bearer not-a-configured-token"),
        ),
    ] {
        let mut args = vec!["mcp", "add", "--transport", "http", name, &url];
        if let Some(header) = header {
            args.extend(["--header", header]);
        }
        let (added, printed) = claude_code::command(home.path(), &args, timeout).await;
        assert!(added, "{printed}");
    }
    let (_, listed) = claude_code::command(home.path(), &["mcp", "list"], timeout).await;
    let line = |name: &str| {
        listed
            .lines()
            .find(|line| line.starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("`{name}` is not listed: {listed}"))
            .to_string()
    };
    // Without a token the client tries OAuth; the registration endpoint's answer, which the
    // client prints, names the fix.
    let missing = line("askgate-no-token");
    assert!(missing.contains("✘ Failed to connect"), "{missing}");
    assert!(
        missing.contains("askgate needs an agent token, not OAuth")
            && missing.contains("Authorization: Bearer <agent token>"),
        "{missing}"
    );
    // With a token the client never tries OAuth: it says the header was rejected.
    let wrong = line("askgate-wrong-token");
    assert!(
        wrong.contains("Server rejected the configured Authorization header (HTTP 401)")
            && wrong.contains("unknown bearer token"),
        "{wrong}"
    );
    assert!(!wrong.contains("Registration"), "{wrong}");
    assert!(!wrong.contains("not-a-configured-token"), "{wrong}");
}
