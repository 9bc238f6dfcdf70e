//! sandbox::design_tests: every Design operation's happy path and the server-side enforcement
//! (consent, grants, plan tokens), over real HTTP on loopback.
use serde_json::{json, Value};

use super::testing::{start, Running};

async fn ready() -> (Running, String) {
    let sandbox = start().await;
    let session = sandbox.initialize().await;
    sandbox.consent().await;
    (sandbox, session)
}

async fn plan(
    sandbox: &Running,
    session: &str,
    project: &str,
    writes: Value,
    deletes: Value,
) -> String {
    let minted = sandbox
        .call_ok(
            session,
            "finalize_plan",
            json!({"project_id": project, "writes": writes, "deletes": deletes, "scope": "paths"}),
        )
        .await;
    minted["plan_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn every_tool_needs_consent_first() {
    let sandbox = start().await;
    let session = sandbox.initialize().await;
    for tool in ["list_projects", "read_file", "write_files", "finalize_plan"] {
        let (status, body) = sandbox
            .call(&session, tool, json!({"project_id": "p1"}))
            .await;
        assert_eq!(status, 403);
        assert_eq!(
            body,
            json!({"error": "needs_consent", "consent": "agent_design_projects"})
        );
    }
    assert_eq!(sandbox.sandbox.stats()["tools_call"]["read_file"], 1);
}

#[tokio::test]
async fn read_operations() {
    let (sandbox, session) = ready().await;
    let systems = sandbox
        .call_ok(&session, "list_design_systems", json!({}))
        .await;
    assert_eq!(systems["design_systems"][0]["id"], "ds-default");
    let prompt = sandbox
        .call_ok(&session, "get_claude_design_prompt", json!({}))
        .await;
    assert!(prompt.as_str().unwrap().contains("finalize_plan"));
    let projects = sandbox.call_ok(&session, "list_projects", json!({})).await;
    assert_eq!(projects["projects"].as_array().unwrap().len(), 4);
    let project = sandbox
        .call_ok(&session, "get_project", json!({"project_id": "p1"}))
        .await;
    assert_eq!(project["name"], "Q3 deck");
    assert_eq!(project["sharing"]["scope"], "invited");
    assert_eq!(project["url"], "https://claude.ai/design/p/p1");
    assert_eq!(project["members"], 1);
    let files = sandbox
        .call_ok(
            &session,
            "list_files",
            json!({"project_id": "p1", "path": "sty"}),
        )
        .await;
    assert_eq!(files["files"], json!([{"path": "styles.css", "size": 19}]));
    let file = sandbox
        .call_ok(
            &session,
            "read_file",
            json!({"project_id": "p1", "path": "styles.css"}),
        )
        .await;
    assert_eq!(file["data"], "body { margin: 0; }");
    let members = sandbox
        .call_ok(&session, "list_members", json!({"project_id": "p1"}))
        .await;
    assert_eq!(members["members"][0]["role"], "editor");
    let (_, missing) = sandbox
        .call(&session, "get_project", json!({"project_id": "zz"}))
        .await;
    assert_eq!(missing["result"]["isError"], true);
    assert_eq!(
        missing["result"]["content"][0]["text"],
        "unknown project `zz`"
    );
    let (_, bad) = sandbox
        .call(&session, "read_file", json!({"project_id": "p1"}))
        .await;
    assert_eq!(bad["result"]["content"][0]["text"], "missing `path`");
}

#[tokio::test]
async fn render_preview_returns_an_image_sized_by_render() {
    let (sandbox, session) = ready().await;
    let (_, small) = sandbox
        .call(&session, "render_preview", json!({"project_id": "p1"}))
        .await;
    assert_eq!(small["result"]["content"][0]["mimeType"], "image/png");
    assert_eq!(small["result"]["content"][1]["type"], "text");
    let (_, large) = sandbox
        .call(
            &session,
            "render_preview",
            json!({"project_id": "p1", "render": "large"}),
        )
        .await;
    assert_eq!(
        large["result"]["content"][0]["data"]
            .as_str()
            .unwrap()
            .len(),
        200_000
    );
}

#[tokio::test]
async fn project_conversation_and_member_operations() {
    let (sandbox, session) = ready().await;
    let created = sandbox
        .call_ok(&session, "create_project", json!({"name": "New"}))
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("p-") && id.len() == 10);
    let chat = sandbox.call_ok(&session, "put_conversation", json!({"project_id": id, "title": "t", "messages": [{"role": "user", "content": "hi"}]})).await;
    let chat_id = chat["chat_id"].as_str().unwrap();
    let read = sandbox
        .call_ok(
            &session,
            "get_conversation",
            json!({"project_id": id, "chat_id": chat_id}),
        )
        .await;
    assert_eq!(read["messages"][0]["content"], "hi");
    let added = sandbox
        .call_ok(
            &session,
            "add_member",
            json!({"project_id": "p1", "account_uuid": "a2", "role": " Viewer "}),
        )
        .await;
    assert_eq!(added["member"]["role"], "viewer");
    let changed = sandbox
        .call_ok(
            &session,
            "update_member_role",
            json!({"project_id": "p1", "account_uuid": "a2", "role": "editor"}),
        )
        .await;
    assert_eq!(changed["member"]["role"], "editor");
    sandbox
        .call_ok(
            &session,
            "remove_member",
            json!({"project_id": "p1", "account_uuid": "a2"}),
        )
        .await;
    let (_, gone) = sandbox
        .call(
            &session,
            "remove_member",
            json!({"project_id": "p1", "account_uuid": "a2"}),
        )
        .await;
    assert_eq!(gone["result"]["isError"], true);
    let shared = sandbox
        .call_ok(
            &session,
            "update_sharing",
            json!({"project_id": "p1", "scope": "ORG", "link_permission": "edit"}),
        )
        .await;
    assert_eq!(shared["sharing"]["scope"], "org");
    let (_, bad) = sandbox
        .call(
            &session,
            "update_sharing",
            json!({"project_id": "p1", "scope": "public"}),
        )
        .await;
    assert_eq!(bad["result"]["isError"], true);
}

#[tokio::test]
async fn tokenless_writes_need_a_grant() {
    let (sandbox, session) = ready().await;
    let write = json!({"project_id": "p2", "files": [{"path": "a.html", "data": "<p>"}]});
    let (status, body) = sandbox.call(&session, "write_files", write.clone()).await;
    assert_eq!(
        (status, body),
        (
            403,
            json!({"error": "needs_project_grant", "project_id": "p2"})
        )
    );
    assert_eq!(
        sandbox
            .call(&session, "create_support_js", json!({"project_id": "p2"}))
            .await
            .0,
        403
    );
    sandbox
        .post("/v1/design/grants", json!({"project_id": "p2"}))
        .await;
    assert_eq!(
        sandbox.call_ok(&session, "write_files", write).await["written"],
        json!(["a.html"])
    );
    assert_eq!(
        sandbox
            .call_ok(&session, "create_support_js", json!({"project_id": "p2"}))
            .await["written"],
        json!(["support.js"])
    );
    let (status, _) = sandbox
        .call(
            &session,
            "delete_files",
            json!({"project_id": "p2", "paths": ["a.html"]}),
        )
        .await;
    assert_eq!(status, 403, "a grant never covers deletes");
    let (status, _) = sandbox
        .call(
            &session,
            "copy_files",
            json!({"project_id": "p2", "files": [{"src": "a.html", "dest": "b.html"}]}),
        )
        .await;
    assert_eq!(status, 403, "tokenless copies are refused");
}

#[tokio::test]
async fn plan_tokens_gate_writes_copies_and_deletes() {
    let (sandbox, session) = ready().await;
    let (_, scoped) = sandbox
        .call(
            &session,
            "finalize_plan",
            json!({"project_id": "p1", "writes": ["x"], "scope": "project"}),
        )
        .await;
    assert_eq!(scoped["result"]["isError"], true);
    let token = plan(
        &sandbox,
        &session,
        "p1",
        json!(["new.html", "copy.css"]),
        json!(["styles.css"]),
    )
    .await;
    let write = |path: &str| json!({"project_id": "p1", "plan_token": token, "files": [{"path": path, "data": "x"}]});
    assert_eq!(
        sandbox
            .call(&session, "write_files", write("other.html"))
            .await
            .0,
        403
    );
    sandbox
        .call_ok(&session, "write_files", write("new.html"))
        .await;
    let copy = json!({"project_id": "p1", "plan_token": token, "files": [{"src": "styles.css", "dest": "copy.css"}]});
    sandbox.call_ok(&session, "copy_files", copy).await;
    let delete = json!({"project_id": "p1", "plan_token": token, "paths": ["styles.css"]});
    assert_eq!(
        sandbox.call_ok(&session, "delete_files", delete).await["deleted"],
        json!(["styles.css"])
    );
    let other_project = json!({"project_id": "p2", "plan_token": token, "files": [{"path": "new.html", "data": "x"}]});
    assert_eq!(
        sandbox.call(&session, "write_files", other_project).await.0,
        403
    );
    let files = sandbox
        .call_ok(&session, "list_files", json!({"project_id": "p1"}))
        .await;
    let paths: Vec<&str> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["copy.css", "index.html", "new.html"]);
}

#[tokio::test]
async fn plan_tokens_expire_after_ten_minutes() {
    let (sandbox, session) = ready().await;
    let minted = sandbox
        .call_ok(
            &session,
            "finalize_plan",
            json!({"project_id": "p1", "writes": ["a.html"]}),
        )
        .await;
    let expires_at = minted["expires_at"].as_i64().unwrap();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    assert!((now + 599..=now + 601).contains(&expires_at));
    let write = json!({"project_id": "p1", "plan_token": minted["plan_token"], "files": [{"path": "a.html", "data": "x"}]});
    sandbox
        .post("/_sandbox/clock", json!({"advance_seconds": 599}))
        .await;
    sandbox
        .call_ok(&session, "write_files", write.clone())
        .await;
    sandbox
        .post("/_sandbox/clock", json!({"advance_seconds": 2}))
        .await;
    assert_eq!(sandbox.call(&session, "write_files", write).await.0, 403);
}
