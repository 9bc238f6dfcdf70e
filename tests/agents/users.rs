//! What users see, with the real client (issue 33; findings A1, A2, A4, A5, A6, A17 of
//! 2026-12-04): `askgate connect claude-code` sets Claude Code up in one step and the first
//! write reads as one flow (consent, then the grant card for the same call); an approved call
//! that fails reaches the model with its reason; a subagent's card says it is a subagent's;
//! the `claude mcp add` command askgate prints runs as printed; the model sees `project_id`
//! as the string it must be; the docs' two `hook install` commands keep the MCP tools attested.
//! Each test prints what the model and the approver read (`--nocapture` shows it).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::attest::{
    attested_run, consented_gateway, decide_in_turn, decisions_of, design, Verdict, DESIGN_TOOL,
};
use crate::gateway::harness::{write_args, Gateway, AGENT, APPROVER};
use crate::gateway::hook_install::InstalledCopy;
use crate::support::claude_code::{self, Run};
use crate::support::fake_messages::{FakeMessages, Turn};

/// `askgate ARGS` with a clean environment: `HOME` is `home`, `PATH` finds the real client.
fn askgate_in(home: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", client_path())
        .env("ASKGATE_AGENT_TOKEN", AGENT)
        .output()
        .unwrap()
}

/// `PATH` with the real client's directory first.
fn client_path() -> String {
    let binary = claude_code::binary();
    let dir = binary.parent().unwrap().display().to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

fn run_of<'a>(fake: &'a FakeMessages, prompt: &'a str) -> Run<'a> {
    Run {
        api_url: &fake.url,
        prompt,
        mcp_config: None,
        settings: None,
        allowed_tools: vec![DESIGN_TOOL.to_string()],
        args: Vec::new(),
        env: vec![("ASKGATE_AGENT_TOKEN".to_string(), AGENT.to_string())],
        timeout: Duration::from_secs(150),
    }
}

/// §3 and A2: `askgate connect claude-code` (the client's own `claude mcp add-json`, the hook)
/// writes no token; the real client then starts with only `ASKGATE_AGENT_TOKEN` in its
/// environment. Its first write asks to connect Claude Design; approving that hands the same
/// held call on to the grant card (the approver sees it at once, the model keeps waiting);
/// approved, the write runs once and the model reads its result and both approvals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2_connect_claude_code_then_the_first_write_asks_consent_then_the_grant_card() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(move |raw| raw.log_dir = Some(log_dir)).await;
    let home = tempfile::tempdir().unwrap();
    let claude = claude_code::binary();
    let connected = askgate_in(
        home.path(),
        &[
            "connect",
            "claude-code",
            "--server",
            &gateway.url,
            "--claude",
            claude.to_str().unwrap(),
        ],
    );
    let printed = String::from_utf8_lossy(&connected.stdout).to_string();
    assert!(connected.status.success(), "{connected:?}");
    println!(
        "$ askgate connect claude-code --server {}\n{printed}",
        gateway.url
    );
    assert!(printed.contains("no token is written"), "{printed}");
    assert!(
        printed.contains(&format!("{}/console", gateway.url)),
        "{printed}"
    );
    for file in [".claude.json", ".claude/settings.json"] {
        let text = std::fs::read_to_string(home.path().join(file)).unwrap();
        assert!(!text.contains(AGENT), "a token in {file}: {text}");
    }
    let fake = FakeMessages::start(vec![
        design("write_files", write_args("p1", &["first.html"])),
        Turn::Text("done".to_string()),
    ])
    .await;
    let run = run_of(&fake, "write the first page");
    let verdicts = [Verdict::Approve, Verdict::Approve];
    let (out, approvals) = tokio::join!(
        run.json_in(home.path()),
        decide_in_turn(&gateway, &verdicts)
    );
    assert_eq!(out["result"], "done", "{out}");
    let kinds: Vec<&Value> = approvals.iter().map(|a| &a["card"]["kind"]).collect();
    assert_eq!(kinds, [&json!("consent"), &json!("grant")]);
    for approval in &approvals {
        println!("the approver saw:\n{}", cli_card(approval));
    }
    let consent = gateway
        .get(
            &format!("/v1/approvals/{}", approvals[0]["id"].as_str().unwrap()),
            Some(APPROVER),
        )
        .await
        .body;
    assert_eq!(consent["status"], "completed", "{consent}");
    assert_eq!(
        consent["result"]["next_approval"], approvals[1]["id"],
        "{consent}"
    );
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    println!("the model read:\n{}", results[0].text);
    assert!(!results[0].is_error, "{results:?}");
    assert!(
        results[0].text.contains("which connected Claude Design"),
        "{results:?}"
    );
    assert!(
        results[0]
            .text
            .contains("ran once `demo-approver` approved"),
        "{results:?}"
    );
    assert_eq!(
        gateway.read_file("p1", "first.html").await.as_deref(),
        Some("<p>first.html</p>")
    );
    let writes = decisions_of(log.path(), "write_files");
    assert_eq!(
        writes[0]["facts"]["context"]["session"]["attestation"], "attested",
        "the hook connect installed attests the MCP call: {}",
        writes[0]
    );
}

/// A1: a tokenless `delete_files` asks for this call only; approved, the upstream answers that
/// it needs a plan token. The model reads that answer and that the call ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_the_real_client_reads_why_an_approved_call_failed() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();
    let fake = FakeMessages::start(vec![
        design(
            "delete_files",
            json!({"project_id": "p1", "paths": ["index.html"]}),
        ),
        Turn::Text("done".to_string()),
    ])
    .await;
    let run = attested_run(&fake, &gateway, &copy, "default");
    let (out, approvals) = tokio::join!(run.json(), decide_in_turn(&gateway, &[Verdict::Approve]));
    assert_eq!(out["result"], "done", "{out}");
    assert_eq!(approvals[0]["card"]["kind"], "batch");
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}; client output {out}");
    let text = &results[0].text;
    println!("the model read:\n{text}");
    assert!(results[0].is_error, "{results:?}");
    assert!(
        !text.contains("lost track") && !text.contains("did not run"),
        "{text}"
    );
    assert!(
        text.contains("approved it and it ran, but it failed (error `needs_project_grant`)"),
        "{text}"
    );
    assert!(text.contains("call finalize_plan first"), "{text}");
}

/// A17: a subagent the real client starts asks (its `finalize_plan`, this call only); the
/// approver's card — JSON, `askgate approvals list`, the console — says a subagent asked,
/// which one, its permission mode, and that the client's hook attested it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a17_a_real_subagents_card_says_it_is_an_attested_subagent() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();
    let plan = json!({"project_id": "p1", "writes": ["sub.html"], "scope": "paths"});
    let subagent = vec![
        design("finalize_plan", plan),
        Turn::Text("subagent done".to_string()),
    ];
    let main = vec![
        Turn::tool(
            "Agent",
            json!({"description": "plan the page", "prompt": "plan sub.html in p1",
                   "subagent_type": "general-purpose", "run_in_background": false}),
        ),
        Turn::Text("done".to_string()),
    ];
    let fake = FakeMessages::start_with_subagent(main, subagent).await;
    let run = attested_run(&fake, &gateway, &copy, "default");
    let (out, (approval, cards, page)) = tokio::join!(run.json(), read_then_approve(&gateway));
    assert_eq!(out["result"], "done", "{out}");
    let asked = &approval["asked_as"];
    assert_eq!(asked["agent"], "subagent", "{approval}");
    assert_eq!(asked["attestation"], "attested", "{approval}");
    assert_eq!(asked["mode"], "default", "{approval}");
    let agent_id = asked["agent_id"].as_str().unwrap_or_default();
    assert!(!agent_id.is_empty(), "{approval}");
    println!("$ askgate approvals list\n{cards}");
    let expected =
        format!("subagent {agent_id}, permission mode default, attested by the client's hook");
    assert!(cards.contains(&format!("asked as: {expected}")), "{cards}");
    assert!(page.contains(&expected), "{page}");
}

/// Reads the first pending approval as an approver would (the CLI, the console page), then
/// approves it; returns its JSON, the CLI's cards and the page.
async fn read_then_approve(gateway: &Gateway) -> (Value, String, String) {
    for _ in 0..500 {
        let pending = gateway.get("/v1/approvals", Some(APPROVER)).await;
        if let Some(approval) = pending.body["approvals"].as_array().and_then(|a| a.first()) {
            let id = approval["id"].as_str().unwrap().to_string();
            let cards = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
                .args([
                    "approvals",
                    "list",
                    "--server",
                    &gateway.url,
                    "--token",
                    APPROVER,
                ])
                .output()
                .await
                .unwrap();
            let cards = String::from_utf8_lossy(&cards.stdout).to_string();
            let page = console_page(gateway, &id).await;
            let approved = gateway.approve(&id).await;
            assert!(matches!(approved.status, 200 | 202), "{}", approved.body);
            return (approval.clone(), cards, page);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no approval became pending");
}

/// The approval's console page, signed in as the demo approver.
async fn console_page(gateway: &Gateway, id: &str) -> String {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let form = http
        .get(format!("{}/console/sign-in", gateway.url))
        .send()
        .await
        .unwrap();
    let cookies: Vec<String> = form
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .map(|value| value.split(';').next().unwrap_or("").to_string())
        .collect();
    let body = form.text().await.unwrap();
    let marker = "name=\"csrf\" value=\"";
    let start = body.find(marker).unwrap() + marker.len();
    let csrf = &body[start..start + body[start..].find('"').unwrap()];
    let signed = http
        .post(format!("{}/console/sign-in", gateway.url))
        .header("cookie", cookies.join("; "))
        .form(&[("csrf", csrf), ("token", APPROVER)])
        .send()
        .await
        .unwrap();
    let session: Vec<String> = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .map(|value| value.split(';').next().unwrap_or("").to_string())
        .filter(|pair| !pair.ends_with('='))
        .collect();
    http.get(format!("{}/console/approvals/{id}", gateway.url))
        .header("cookie", session.join("; "))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// A card as `askgate approvals list` prints it (from its JSON).
fn cli_card(approval: &Value) -> String {
    askgate::cli::approvals::card_text(approval, time::OffsetDateTime::now_utc())
}

/// A6: without a token Claude Code tries OAuth, and askgate's refusal names the command that
/// configures the token; run as printed (a shell, the real client), it adds a server the client
/// then connects to with the token from its environment — and writes no token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_the_claude_mcp_add_command_askgate_prints_runs_as_printed() {
    let gateway = Gateway::start().await;
    let refused = gateway
        .post(
            "/register",
            None,
            Some(json!({"client_name": "claude-code"})),
        )
        .await;
    let said = refused.body["error_description"]
        .as_str()
        .unwrap()
        .to_string();
    let start = said.find("(`").unwrap() + 2;
    let command = &said[start..start + said[start..].find("`, or").unwrap()];
    let url = format!("{}/mcp", gateway.url);
    assert!(
        command.starts_with(&format!(
            "claude mcp add --transport http askgate {url} --header"
        )),
        "{command}"
    );
    println!("askgate printed: {said}");
    let home = tempfile::tempdir().unwrap();
    // Run where the user works: `claude mcp add` keeps the server for that directory.
    let added = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(home.path())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", client_path())
        .env("ASKGATE_AGENT_TOKEN", AGENT)
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");
    let config = std::fs::read_to_string(home.path().join(".claude.json")).unwrap();
    assert!(!config.contains(AGENT), "the token was written: {config}");
    let listed = std::process::Command::new(claude_code::binary())
        .args(["mcp", "list"])
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", client_path())
        .env("ASKGATE_AGENT_TOKEN", AGENT)
        .current_dir(home.path())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(
        listed.contains(&format!("askgate: {url} (HTTP) - ✔ Connected")),
        "{listed}"
    );
}

/// A4: after `ToolSearch`, the real client hands the model `project_id` typed as the string
/// askgate accepts (a number was published, then refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a4_the_model_sees_project_id_as_a_string() {
    let gateway = Gateway::start().await;
    let fake = FakeMessages::start(vec![
        Turn::tool(
            "ToolSearch",
            json!({"query": format!("select:{DESIGN_TOOL}"), "max_results": 1}),
        ),
        Turn::Text("loaded".to_string()),
    ])
    .await;
    let mut run = run_of(&fake, "load the design tool");
    run.mcp_config = Some(json!({"mcpServers": {"askgate": {"type": "http",
        "url": format!("{}/mcp", gateway.url),
        "headers": {"Authorization": format!("Bearer {AGENT}")}}}}));
    let out = run.json().await;
    assert_eq!(out["result"], "loaded", "{out}");
    let loaded = fake
        .agent_requests()
        .iter()
        .flat_map(|request| request["tools"].as_array().cloned().unwrap_or_default())
        .find(|tool| tool["name"] == DESIGN_TOOL)
        .expect("the tool reached the model");
    let project_id = &loaded["input_schema"]["properties"]["arguments"]["properties"]["project_id"];
    assert_eq!(project_id["type"], "string", "{project_id}");
}

/// A5: docs/agents.md's two `hook install` commands, in its order (for the MCP tools, then
/// with `--server` and `--deadline-seconds`), keep the MCP tools matched: the real client's
/// MCP call is still attested.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a5_the_docs_two_hook_installs_keep_the_mcp_calls_attested() {
    let log = tempfile::tempdir().unwrap();
    let gateway = consented_gateway(log.path()).await;
    let copy = InstalledCopy::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let first = copy.install(
        &file,
        &["--server", &gateway.url, "--mcp-server", "askgate"],
    );
    assert!(first.status.success(), "{first:?}");
    let second = copy.install(
        &file,
        &["--server", &gateway.url, "--deadline-seconds", "10"],
    );
    assert!(second.status.success(), "{second:?}");
    let said = String::from_utf8_lossy(&second.stdout);
    assert!(
        said.contains("kept `mcp__askgate__ClaudeDesign|mcp__askgate__Projects`"),
        "{said}"
    );
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let fake = FakeMessages::start(vec![
        design("list_projects", json!({})),
        Turn::Text("done".to_string()),
    ])
    .await;
    let mut run = attested_run(&fake, &gateway, &copy, "default");
    run.settings = Some(settings);
    let out = run.json().await;
    assert_eq!(out["result"], "done", "{out}");
    let records = decisions_of(log.path(), "list_projects");
    assert_eq!(
        records[0]["facts"]["context"]["session"]["attestation"], "attested",
        "{}",
        records[0]
    );
}
