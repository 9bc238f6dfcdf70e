//! The hook adapter with the real client: Claude Code runs `askgate hook claude-code` as its
//! `PreToolUse` hook for its built-in `Projects` tool (issue 10 §3, tests 4 and 5), from the
//! entry `askgate hook install claude-code` writes (finding H1).

use serde_json::{json, Value};

use crate::gateway::harness::{Gateway, AGENT};
use crate::gateway::hook_install::InstalledCopy;
use crate::gateway::hook_log::logged;
use crate::support::claude_code::Run;
use crate::support::fake_messages::{FakeMessages, Turn};

const PROJECT_UUID: &str = "11111111-1111-4111-8111-111111111111";

fn run<'a>(fake: &'a FakeMessages, settings: Value) -> Run<'a> {
    Run {
        api_url: &fake.url,
        prompt: "tidy the project",
        mcp_config: None,
        settings: Some(settings),
        allowed_tools: vec!["Projects".to_string()],
        args: Vec::new(),
        env: vec![
            ("CLAUDE_PROJECT_UUID".to_string(), PROJECT_UUID.to_string()),
            ("ASKGATE_AGENT_TOKEN".to_string(), AGENT.to_string()),
        ],
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
    let copy = InstalledCopy::new();
    let fake = FakeMessages::start(calls(&[delete(), info()])).await;
    let out = run(&fake, installed_settings(&copy, &gateway.url))
        .json()
        .await;
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
    let copy = InstalledCopy::new();
    let out = run(&fake, installed_settings(&copy, &closed)).json().await;
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

/// A managed rule the hook-mode set denies with: no `project_delete` at all.
const DENY_PROJECT_DELETE: &str = r#"@id("managed.no-project-delete")
@reason("project_delete is switched off here")
forbid (principal, action == Action::"project_delete", resource);
"#;

/// The client's tool result when its `Projects` tool ran (offline, it refuses to reach out).
const PROJECTS_RAN: &str = "Projects is unavailable while nonessential network traffic";

/// A service whose managed rules deny `project_delete`, with its decision log.
struct DenyingService {
    gateway: Gateway,
    log: tempfile::TempDir,
    _managed: tempfile::TempDir,
}

impl DenyingService {
    async fn start() -> DenyingService {
        let (managed, log) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(managed.path().join("no-delete.cedar"), DENY_PROJECT_DELETE).unwrap();
        let (managed_dir, log_dir) = (managed.path().to_path_buf(), log.path().to_path_buf());
        let gateway = Gateway::start_with(|raw| {
            raw.policies = Some(vec![managed_dir]);
            raw.log_dir = Some(log_dir);
        })
        .await;
        DenyingService {
            gateway,
            log,
            _managed: managed,
        }
    }

    /// (operation, decision) of every logged decision, in order.
    fn decisions(&self) -> Vec<(String, String)> {
        logged(self.log.path())
            .iter()
            .map(|record| {
                let text = |key: &str| record[key].as_str().unwrap_or("").to_string();
                (text("operation"), text("decision"))
            })
            .collect()
    }
}

/// The settings `hook install` writes for `server`, from `copy`.
fn installed_settings(copy: &InstalledCopy, server: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let installed = copy.install(&file, &["--server", server]);
    assert!(installed.status.success(), "{installed:?}");
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

/// The settings `hook install` writes from a copy of the binary that is then deleted.
fn settings_without_their_binary(server: &str) -> Value {
    let copy = InstalledCopy::new();
    let settings = installed_settings(&copy, server);
    copy.remove();
    settings
}

fn calls(methods: &[Value]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = methods
        .iter()
        .map(|input| Turn::tool("Projects", input.clone()))
        .collect();
    turns.push(Turn::Text("done".to_string()));
    turns
}

fn delete() -> Value {
    json!({"method": "project_delete", "path": "notes.md"})
}

fn info() -> Value {
    json!({"method": "project_info"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_from_the_installed_entry_a_denied_call_is_blocked_and_an_allowed_one_goes_through() {
    let service = DenyingService::start().await;
    let copy = InstalledCopy::new();
    let settings = installed_settings(&copy, &service.gateway.url);
    let fake = FakeMessages::start(calls(&[delete(), info()])).await;
    let out = run(&fake, settings).json().await;
    let denied = denied_methods(&out);
    assert_eq!(denied.len(), 1, "{out}");
    assert_eq!(denied[0].1, "project_delete", "{out}");
    let results = fake.tool_results();
    let blocked = results
        .iter()
        .find(|result| result.tool_use_id == denied[0].0)
        .expect("the delete's result");
    assert!(
        blocked.text.contains("managed.no-project-delete"),
        "{results:?}"
    );
    let ran = results
        .iter()
        .find(|result| result.tool_use_id != denied[0].0)
        .expect("the info's result");
    assert!(ran.text.contains(PROJECTS_RAN), "{results:?}");
    let expected = [("project_delete", "deny"), ("project_info", "allow")]
        .map(|(operation, decision)| (operation.to_string(), decision.to_string()));
    assert_eq!(service.decisions(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_with_the_installed_binary_gone_a_denied_call_is_blocked_and_nothing_runs() {
    let service = DenyingService::start().await;
    let settings = settings_without_their_binary(&service.gateway.url);
    let fake = FakeMessages::start(calls(&[delete()])).await;
    let out = run(&fake, settings).json().await;
    let denied = denied_methods(&out);
    assert_eq!(denied.len(), 1, "{out}");
    assert_eq!(denied[0].1, "project_delete", "{out}");
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].is_error, "{results:?}");
    let text = &results[0].text;
    assert!(
        text.starts_with("PreToolUse:Projects hook error")
            && text.contains("askgate: not found")
            && !text.contains(PROJECTS_RAN),
        "the hook blocked it, the tool never ran: {results:?}"
    );
    assert!(service.decisions().is_empty(), "askgate was never reached");
}

/// Each of the entry's two guards alone blocks a call whose hook binary is gone; with neither
/// (the entry the README used to document) the client runs the call — what H1 found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_each_guard_alone_blocks_when_the_binary_is_gone_and_without_both_the_call_runs() {
    let service = DenyingService::start().await;
    let settings = settings_without_their_binary(&service.gateway.url);
    for (exit_guard, on_failure, blocked) in [
        (true, false, true),
        (false, true, true),
        (false, false, false),
    ] {
        let mut settings = settings.clone();
        let hook = &mut settings["hooks"]["PreToolUse"][0]["hooks"][0];
        if !exit_guard {
            let command = hook["command"].as_str().unwrap().replace(" || exit 2", "");
            hook["command"] = json!(command);
        }
        if !on_failure {
            hook.as_object_mut().unwrap().remove("onFailure");
        }
        let fake = FakeMessages::start(calls(&[info()])).await;
        let out = run(&fake, settings).json().await;
        let results = fake.tool_results();
        assert_eq!(results.len(), 1, "{results:?}");
        assert_eq!(denied_methods(&out).len(), usize::from(blocked), "{out}");
        assert_eq!(
            !results[0].text.contains(PROJECTS_RAN),
            blocked,
            "{results:?}"
        );
    }
}
