//! Hook-attested MCP calls with the real client (issue 19 §3): Claude Code runs the hook
//! `askgate hook install claude-code --mcp-server askgate` writes for its MCP tool, then sends
//! the `tools/call`; askgate decides it with the client's real permission mode and session.

use std::time::Duration;

use serde_json::{json, Value};

use crate::gateway::harness::{write_args, Gateway, AGENT};
use crate::gateway::hook_install::InstalledCopy;
use crate::gateway::hook_log::logged;
use crate::support::claude_code::Run;
use crate::support::fake_messages::{FakeMessages, Turn};

const DESIGN_TOOL: &str = "mcp__askgate__ClaudeDesign";

/// The settings `hook install` writes for askgate's MCP tools too, in permission mode `mode`.
fn settings(copy: &InstalledCopy, server: &str, mode: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let installed = copy.install(&file, &["--server", server, "--mcp-server", "askgate"]);
    assert!(installed.status.success(), "{installed:?}");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    settings["permissions"] = json!({"defaultMode": mode});
    settings
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_clients_dont_ask_mode_reaches_an_attested_mcp_decision() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.log_dir = Some(log_dir)).await;
    gateway.record_consent().await;
    let copy = InstalledCopy::new();
    let write = json!({"operation": "write_files", "arguments": write_args("p1", &["a.html"])});
    let fake = FakeMessages::start(vec![
        Turn::tool(DESIGN_TOOL, write),
        Turn::Text("done".to_string()),
    ])
    .await;
    let run = Run {
        api_url: &fake.url,
        prompt: "work on the design project",
        mcp_config: Some(json!({"mcpServers": {"askgate": {"type": "http",
            "url": format!("{}/mcp", gateway.url),
            "headers": {"Authorization": format!("Bearer {AGENT}")}}}})),
        settings: Some(settings(&copy, &gateway.url, "dontAsk")),
        allowed_tools: vec![DESIGN_TOOL.to_string()],
        env: vec![("ASKGATE_AGENT_TOKEN".to_string(), AGENT.to_string())],
        timeout: Duration::from_secs(150),
    };
    let out = run.json().await;
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}; client output {out}");
    assert!(results[0].is_error, "{results:?}");
    assert!(results[0].text.contains("modes.dont-ask"), "{results:?}");
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    let records = logged(log.path());
    let write = records
        .iter()
        .find(|record| record["operation"] == "write_files")
        .expect("the MCP write is logged");
    let session = &write["facts"]["context"]["session"];
    assert_eq!(session["attestation"], "attested", "{write}");
    assert_eq!(session["mode"], "dontAsk", "{write}");
    let id = write["session"].as_str().unwrap_or("");
    assert!(id.starts_with("mcp-attested:"), "{write}");
}
