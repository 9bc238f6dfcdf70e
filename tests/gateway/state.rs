//! Session state and the observation order through `serve` (issue 9 §2): bounded session ids
//! (F3), a failed Projects detail lookup refusing writes and deletes (C11), a `local_path`'s
//! size decided by policy, and gates that deny before anything goes upstream.

use askgate::facts::Environment;
use askgate::server::config::RawProjects;
use serde_json::{json, Value};

use super::harness::{assert_policy, main_session, write_args, Gateway, AGENT};

const DETAIL: &str =
    "/api/organizations/org-0000/projects/11111111-1111-4111-8111-111111111111/detail";

/// `projects.local_path_root` set to `root`.
fn local_path_root(root: &tempfile::TempDir) -> RawProjects {
    RawProjects {
        local_path_root: Some(root.path().to_path_buf()),
    }
}

async fn requests(gateway: &Gateway) -> u64 {
    gateway.stats().await["requests"].as_u64().unwrap_or(0)
}

async fn authorize(gateway: &Gateway, session: Value) -> super::harness::Reply {
    let body = json!({"session": session, "tool": "ClaudeDesign",
        "input": {"operation": "get_project", "arguments": {"project_id": "p1"}}});
    gateway.post("/v1/authorize", Some(AGENT), Some(body)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f3_session_and_agent_ids_are_bounded_and_printable() {
    let gateway = Gateway::start().await;
    let long = authorize(&gateway, main_session(&"q".repeat(1_000_000))).await;
    assert_eq!(long.status, 400, "{}", long.body);
    let message = long.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`session.id` is 1000000 bytes long: at most 256 bytes"),
        "{message}"
    );
    assert!(message.len() < 200, "the id is not echoed");

    let bidi = authorize(&gateway, main_session("s\u{0}\u{202e}1")).await;
    assert_eq!(bidi.status, 400, "{}", bidi.body);
    assert!(bidi.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("`session.id`"));

    let agent = json!({"id": "s1", "agent": "subagent", "agent_id": "sub\u{7}", "mode": "default", "interactive": true});
    let refused = authorize(&gateway, agent).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("`session.agent_id` holds the unprintable character U+0007"));

    let longest = authorize(&gateway, main_session(&"é".repeat(128))).await;
    assert_eq!(
        longest.status, 200,
        "256 bytes is decided: {}",
        longest.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c11_projects_detail_failure_refuses_writes_and_deletes() {
    let gateway = Gateway::start().await;
    gateway
        .fault(json!({"fault": "status", "status": 500, "count": 10, "path_prefix": DETAIL}))
        .await;
    let session = main_session("s-c11");
    let before = requests(&gateway).await;
    let write = gateway
        .projects(
            &session,
            json!({"method": "project_write", "path": "x.md", "content": "hello"}),
        )
        .await;
    assert_eq!(write.status, 403, "{}", write.body);
    assert_eq!(write.decision(), "deny");
    assert_policy(&write, "projects.detail-unknown");
    let delete = gateway
        .projects(
            &session,
            json!({"method": "project_delete", "path": "notes.md"}),
        )
        .await;
    assert_eq!(delete.status, 403, "{}", delete.body);
    assert_policy(&delete, "projects.detail-unknown");
    // Only the two failed detail lookups went upstream: nothing was written or deleted.
    assert_eq!(requests(&gateway).await - before, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_path_size_is_decided_by_the_knowledge_budget() {
    let root = tempfile::tempdir().unwrap();
    let gateway = Gateway::start_with(|raw| raw.projects = Some(local_path_root(&root))).await;
    std::fs::write(root.path().join("huge.md"), "x".repeat(499_001 * 4)).unwrap();
    let denied = gateway
        .projects(
            &main_session("s-local"),
            json!({"method": "project_write", "path": "huge.md", "local_path": "huge.md"}),
        )
        .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert_policy(&denied, "projects.knowledge-budget");
    std::fs::write(root.path().join("small.md"), "small").unwrap();
    let allowed = gateway
        .projects(
            &main_session("s-local"),
            json!({"method": "project_write", "path": "small.md", "local_path": "small.md"}),
        )
        .await;
    assert_eq!(allowed.decision(), "allow", "{}", allowed.body);
    assert_eq!(allowed.body["result"]["isError"], false, "{}", allowed.body);
}

async fn gated(environment: Environment, design_policy: &str, projects_policy: &str) {
    let gateway = Gateway::start_with(|raw| raw.environment = Some(environment)).await;
    let session = main_session("s-gates");
    let before = requests(&gateway).await;
    let calls = [
        ("get_project", json!({"project_id": "p1"})),
        ("write_files", write_args("p1", &["index.html"])),
        ("some_server_operation", json!({"x": 1})),
        ("list", json!({})),
    ];
    for (operation, arguments) in calls {
        let reply = gateway.design(&session, operation, arguments).await;
        assert_eq!(reply.status, 403, "{operation}: {}", reply.body);
        assert_policy(&reply, design_policy);
    }
    if !projects_policy.is_empty() {
        let write = json!({"method": "project_write", "path": "x.md", "content": "x"});
        let reply = gateway.projects(&session, write).await;
        assert_eq!(reply.status, 403, "{}", reply.body);
        assert_policy(&reply, projects_policy);
    }
    assert_eq!(requests(&gateway).await, before, "nothing went upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gates_deny_before_anything_goes_upstream() {
    let essential = Environment {
        essential_traffic_only: true,
        ..Environment::default()
    };
    gated(
        essential,
        "gates.design-essential-traffic-only",
        "gates.projects-essential-traffic-only",
    )
    .await;
    let bedrock = Environment {
        provider: "bedrock".to_string(),
        ..Environment::default()
    };
    gated(
        bedrock,
        "gates.design-wrong-provider",
        "gates.projects-wrong-provider",
    )
    .await;
    let off = Environment {
        feature_flags: Default::default(),
        ..Environment::default()
    };
    gated(off, "gates.design-feature-off", "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_path_replaced_after_the_decision_is_refused() {
    use askgate::executor::projects::test_seam::{arm_for_tests, LocalPathStage};
    let root = tempfile::tempdir().unwrap();
    let gateway = Gateway::start_with(|raw| raw.projects = Some(local_path_root(&root))).await;
    let target = root.path().join("decided.md");
    std::fs::write(&target, "small").unwrap();
    let (path, other) = (target.clone(), root.path().join("other.md"));
    arm_for_tests(LocalPathStage::Checked, target, move || {
        // Another regular file, under the root, takes the decided one's name.
        std::fs::write(&other, "x".repeat(4_000_000)).expect("other file");
        std::fs::rename(&other, &path).expect("replace");
    });
    let before = requests(&gateway).await;
    let input =
        json!({"method": "project_write", "path": "decided.md", "local_path": "decided.md"});
    let reply = gateway.projects(&main_session("s-replaced"), input).await;
    assert_eq!(reply.decision(), "allow", "{}", reply.body);
    let text = reply.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        text,
        "local_path `decided.md` changed after the call was decided"
    );
    assert_eq!(
        requests(&gateway).await - before,
        1,
        "only the decision's detail lookup"
    );
}
