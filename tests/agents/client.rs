//! The harness itself: the real client talks to the scripted fake Messages API.

use serde_json::json;

use crate::support::claude_code::Run;
use crate::support::fake_messages::{FakeMessages, Turn};

fn run<'a>(api_url: &'a str, prompt: &'a str) -> Run<'a> {
    Run {
        api_url,
        prompt,
        mcp_config: None,
        settings: None,
        allowed_tools: Vec::new(),
        args: Vec::new(),
        env: Vec::new(),
        timeout: std::time::Duration::from_secs(120),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_client_answers_with_the_scripted_text() {
    let fake = FakeMessages::start(vec![Turn::Text("hello from the fake".to_string())]).await;
    let out = run(&fake.url, "say hello").json().await;
    assert_eq!(out["result"], "hello from the fake", "{out}");
    assert_eq!(out["is_error"], false, "{out}");
    assert!(!fake.agent_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_project_uuid_the_client_offers_its_projects_tool() {
    let fake = FakeMessages::start(vec![Turn::Text("ok".to_string())]).await;
    let mut run = run(&fake.url, "what is in my project?");
    run.env.push((
        "CLAUDE_PROJECT_UUID".to_string(),
        "11111111-1111-4111-8111-111111111111".to_string(),
    ));
    let out = run.json().await;
    assert_eq!(out["is_error"], false, "{out}");
    let offered = fake.offered_tools();
    assert!(offered.iter().any(|name| name == "Projects"), "{offered:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_tool_call_is_executed_and_its_result_sent_back() {
    let fake = FakeMessages::start(vec![
        Turn::tool("Projects", json!({"method": "project_info"})),
        Turn::Text("seen".to_string()),
    ])
    .await;
    let mut run = run(&fake.url, "describe the project");
    run.env.push((
        "CLAUDE_PROJECT_UUID".to_string(),
        "11111111-1111-4111-8111-111111111111".to_string(),
    ));
    run.allowed_tools.push("Projects".to_string());
    let out = run.json().await;
    assert_eq!(out["result"], "seen", "{out}");
    // Offline, the client's own Projects tool refuses to run: what matters here is that the
    // scripted call was executed and its result came back to the model.
    let results = fake.tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].tool_use_id, "toolu_0000");
    assert!(results[0].is_error, "{results:?}");
    assert!(results[0].text.contains("Projects"), "{results:?}");
}
