//! Projects writes through `serve` on both routes (issue 3, client-facts §10.2–§10.3): with a
//! session token configured the service uses the CCR session route, where a replace is a
//! delete then a create (the doc gets a new uuid) and never a PATCH; without one it uses the
//! org route, where a replace is a PATCH in place. Asserted on what reached the sandbox.

use serde_json::{json, Value};

use super::harness::{main_session, Gateway, Reply};
use super::upstream::{RecordedUpstream, Route};
use askgate::sandbox::projects::seed::NOTES_DOC_UUID;

async fn serve_on(route: Route) -> (RecordedUpstream, Gateway) {
    let upstream = RecordedUpstream::start().await;
    let gateway = Gateway::start_with(|raw| upstream.configure(raw, route)).await;
    (upstream, gateway)
}

async fn call(gateway: &Gateway, input: Value) -> Reply {
    gateway.projects(&main_session("s-route"), input).await
}

/// The `result` object of an allowed, successful Projects call.
fn result(reply: &Reply) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.decision(), "allow", "{}", reply.body);
    assert_eq!(reply.body["result"]["isError"], false, "{}", reply.body);
    reply.body["result"]["result"].clone()
}

async fn write(gateway: &Gateway, path: &str, content: &str) -> Value {
    let input = json!({"method": "project_write", "path": path, "content": content});
    result(&call(gateway, input).await)
}

async fn read(gateway: &Gateway, path: &str) -> Value {
    result(&call(gateway, json!({"method": "project_read", "path": path})).await)
}

/// The doc paths `project_info` lists, read back through the service.
async fn doc_paths(gateway: &Gateway) -> Vec<String> {
    let info = result(&call(gateway, json!({"method": "project_info"})).await);
    info["docs"]
        .as_array()
        .expect("docs")
        .iter()
        .filter_map(|doc| doc["path"].as_str().map(str::to_string))
        .collect()
}

/// The sandbox's own count of Projects requests.
async fn sandbox_projects_requests(gateway: &Gateway) -> u64 {
    gateway.stats().await["projects_requests"]
        .as_u64()
        .expect("projects_requests")
}

/// The last request after `mark` whose session-route `op` is `op`.
fn session_op(upstream: &RecordedUpstream, mark: usize, op: &str) -> Value {
    let seen = upstream.seen_since(mark);
    let found = seen.iter().rev().find(|request| request.json()["op"] == op);
    found.map(|request| request.json()).expect(op)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replace_on_the_session_route_is_a_delete_then_a_create() {
    let (upstream, gateway) = serve_on(Route::Session).await;

    let created = write(&gateway, "team/new.md", "first").await;
    assert_eq!(created["path"], "team/new.md");
    assert_eq!(created["replaced"], false);
    let first_uuid = created["doc_uuid"].as_str().expect("uuid").to_string();
    assert_eq!(upstream.projects_effects_since(0), ["session write-doc"]);

    let mark = upstream.mark();
    let replaced = write(&gateway, "team/new.md", "second").await;
    assert_eq!(replaced["path"], "team/new.md");
    assert_eq!(replaced["replaced"], true);
    assert_ne!(replaced["doc_uuid"], first_uuid.as_str(), "a new doc");
    assert_eq!(
        upstream.projects_effects_since(mark),
        ["session delete-doc", "session write-doc"]
    );
    let deleted = session_op(&upstream, mark, "delete-doc");
    assert_eq!(deleted["doc_uuid"], first_uuid.as_str());
    let rewritten = session_op(&upstream, mark, "write-doc");
    assert_eq!(rewritten["file_name"], "team/new.md");
    assert_eq!(rewritten["content"], "second");

    assert_eq!(read(&gateway, "team/new.md").await["content"], "second");
    let paths = doc_paths(&gateway).await;
    let copies = paths.iter().filter(|path| *path == "team/new.md").count();
    assert_eq!(copies, 1, "{paths:?}");

    // A seeded doc is replaced the same way.
    let mark = upstream.mark();
    let notes = write(&gateway, "notes.md", "seeded doc replaced").await;
    assert_eq!(notes["replaced"], true);
    assert_ne!(notes["doc_uuid"], NOTES_DOC_UUID);
    assert_eq!(
        upstream.projects_effects_since(mark),
        ["session delete-doc", "session write-doc"]
    );
    assert_eq!(
        session_op(&upstream, mark, "delete-doc")["doc_uuid"],
        NOTES_DOC_UUID
    );

    // The whole test went by the session route: never a PATCH, never the org route, and the
    // sandbox's own counter saw exactly the requests recorded here.
    let calls = upstream.projects_calls_since(0);
    assert!(
        calls.iter().all(|call| call.starts_with("session ")),
        "{calls:?}"
    );
    let seen = upstream.seen();
    assert!(!seen.iter().any(|request| request.method == "PATCH"));
    assert!(!seen.iter().any(|request| request.path.starts_with("/api/")));
    let counted = sandbox_projects_requests(&gateway).await;
    assert_eq!(counted, u64::try_from(calls.len()).expect("count"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replace_on_the_org_route_is_a_patch_in_place() {
    let (upstream, gateway) = serve_on(Route::Org).await;

    let created = write(&gateway, "team/new.md", "first").await;
    assert_eq!(created["replaced"], false);
    assert_eq!(upstream.projects_effects_since(0), ["org POST docs"]);

    let mark = upstream.mark();
    let replaced = write(&gateway, "team/new.md", "second").await;
    assert_eq!(replaced["replaced"], true);
    assert_eq!(replaced["doc_uuid"], created["doc_uuid"], "the same doc");
    assert_eq!(upstream.projects_effects_since(mark), ["org PATCH docs"]);
    let seen = upstream.seen_since(mark);
    let patch = seen.iter().find(|request| request.method == "PATCH");
    let patch = patch.expect("patch");
    assert!(patch
        .path
        .ends_with(created["doc_uuid"].as_str().expect("uuid")));
    assert_eq!(patch.json(), json!({"content": "second"}));

    assert_eq!(read(&gateway, "team/new.md").await["content"], "second");
    let calls = upstream.projects_calls_since(0);
    assert!(
        calls.iter().all(|call| call.starts_with("org ")),
        "{calls:?}"
    );
    assert!(!upstream
        .seen()
        .iter()
        .any(|request| request.path.starts_with("/v2/ccr-sessions/")));
}
