//! The hook adapter with the real client: Claude Code runs `askgate hook claude-code` as its
//! `PreToolUse` hook for its built-in `Projects` tool (issue 10 §3, tests 4 and 5).

use serde_json::{json, Value};

use crate::gateway::harness::{Gateway, AGENT};
use crate::gateway::hook_log::logged;
use crate::support::claude_code::Run;
use crate::support::fake_messages::{FakeMessages, Turn};

const PROJECT_UUID: &str = "11111111-1111-4111-8111-111111111111";

/// Claude Code's settings with askgate as the `PreToolUse` hook of its two remote tools.
fn hook_settings(server: &str) -> Value {
    let command = format!(
        "{} hook claude-code --server {server} --token {AGENT} --deadline-seconds 20",
        env!("CARGO_BIN_EXE_askgate")
    );
    json!({"hooks": {"PreToolUse": [{"matcher": "ClaudeDesign|Projects",
        "hooks": [{"type": "command", "command": command, "timeout": 30}]}]}})
}

fn run<'a>(fake: &'a FakeMessages, settings: Value) -> Run<'a> {
    Run {
        api_url: &fake.url,
        prompt: "tidy the project",
        mcp_config: None,
        settings: Some(settings),
        allowed_tools: vec!["Projects".to_string()],
        env: vec![("CLAUDE_PROJECT_UUID".to_string(), PROJECT_UUID.to_string())],
        timeout: std::time::Duration::from_secs(120),
    }
}

fn denied_methods(out: &Value) -> Vec<(String, String)> {
    out["permission_denials"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|denial| {
            (
                denial["tool_use_id"].as_str().unwrap_or("").to_string(),
                denial["tool_input"]["method"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_ask_stops_the_clients_project_delete_and_lets_project_info_through() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        raw.policies = Some(vec!["policies/examples".into()]);
        raw.log_dir = Some(log_dir);
    })
    .await;
    let fake = FakeMessages::start(vec![
        Turn::tool(
            "Projects",
            json!({"method": "project_delete", "path": "notes.md"}),
        ),
        Turn::tool("Projects", json!({"method": "project_info"})),
        Turn::Text("done".to_string()),
    ])
    .await;
    let out = run(&fake, hook_settings(&gateway.url)).json().await;
    let denied = denied_methods(&out);
    assert_eq!(denied.len(), 1, "{out}");
    assert_eq!(denied[0].1, "project_delete", "{out}");
    let records = logged(log.path());
    let delete = records
        .iter()
        .find(|record| record["operation"] == "project_delete")
        .expect("the project_delete decision is logged");
    assert_eq!(delete["decision"], "ask");
    assert_eq!(delete["tool_use_id"], json!(denied[0].0));
    let info = records
        .iter()
        .find(|record| record["operation"] == "project_info")
        .expect("the project_info decision is logged");
    assert_eq!(info["decision"], "allow");
    assert_ne!(info["tool_use_id"], delete["tool_use_id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_service_down_the_hook_blocks_the_call() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let fake = FakeMessages::start(vec![
        Turn::tool("Projects", json!({"method": "project_info"})),
        Turn::Text("done".to_string()),
    ])
    .await;
    let out = run(&fake, hook_settings(&closed)).json().await;
    let denied = denied_methods(&out);
    assert_eq!(denied.len(), 1, "{out}");
    assert_eq!(denied[0].1, "project_info", "{out}");
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].is_error, "{results:?}");
    assert!(results[0].text.contains("cannot reach"), "{results:?}");
    assert!(
        results[0].text.contains("the call is blocked"),
        "{results:?}"
    );
}
