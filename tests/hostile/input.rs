//! Hostile input over real HTTP (F8, C17, C4, C5, C16): a non-string or hostile `project_id`
//! and a key sent twice are refused as input errors naming the field, before anything reaches
//! the upstream, and `?wait=` errors name the query parameter.

use serde_json::{json, Value};

use crate::gateway::harness::{main_session, Gateway, AGENT, APPROVER};

/// Every `tools/call` the sandbox has seen, whatever the tool.
async fn upstream_calls(gateway: &Gateway) -> u64 {
    let stats = gateway.stats().await;
    stats["tools_call"]
        .as_object()
        .map(|calls| calls.values().filter_map(Value::as_u64).sum())
        .unwrap_or(0)
}

fn frozen_project_policies() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pin.cedar"),
        "@id(\"admin.freeze-123\")\n@reason(\"project 123 is frozen\")\n\
         forbid (principal, action, resource == DesignProject::\"123\");\n",
    )
    .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f8_project_id_number_does_not_turn_a_project_deny_into_an_ask() {
    let policies = frozen_project_policies();
    let dir = policies.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.policies = Some(vec![dir])).await;
    gateway.record_consent().await;
    let session = main_session("s-f8");
    let string = gateway
        .design(
            &session,
            "update_sharing",
            json!({"project_id": "123", "scope": "org"}),
        )
        .await;
    assert_eq!(string.status, 403, "{}", string.body);
    assert_eq!(string.policies(), ["admin.freeze-123"]);
    for id in ["123", "123.0", "1.23e2"] {
        let body = format!(
            "{{\"session\":{},\"input\":{{\"operation\":\"update_sharing\",\"arguments\":{{\"project_id\":{id},\"scope\":\"org\"}}}}}}",
            session
        );
        let reply = gateway
            .send(
                reqwest::Method::POST,
                format!("{}/v1/design/call", gateway.url),
                Some(AGENT),
                Some(body.into_bytes()),
            )
            .await;
        assert_eq!(reply.status, 400, "{id}: {}", reply.body);
        assert_eq!(
            reply.body["error"]["field"],
            "call.input.arguments.project_id"
        );
        assert_eq!(
            reply.body["error"]["message"],
            "`project_id` must be a string, not a number"
        );
    }
    assert_eq!(
        upstream_calls(&gateway).await,
        0,
        "nothing was sent upstream"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c17_project_id_number_on_reads_is_refused() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    for operation in ["get_project", "list_files", "read_file", "list_members"] {
        let reply = gateway
            .design(&main_session("s-c17"), operation, json!({"project_id": 1}))
            .await;
        assert_eq!(reply.status, 400, "{operation}: {}", reply.body);
        assert_eq!(
            reply.body["error"]["field"],
            "call.input.arguments.project_id"
        );
    }
    assert_eq!(upstream_calls(&gateway).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c4_hostile_project_id_is_refused_before_anything_goes_upstream() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let too_long = "p".repeat(79);
    let hostile = [
        "p1\u{0}",
        "p1\u{202E}",
        "",
        too_long.as_str(),
        "p#1",
        "p1\u{FEFF}",
    ];
    for id in hostile {
        let read = gateway
            .design(
                &main_session("s-c4"),
                "get_project",
                json!({"project_id": id}),
            )
            .await;
        assert_eq!(read.status, 400, "{id:?}: {}", read.body);
        assert_eq!(
            read.body["error"]["field"],
            "call.input.arguments.project_id"
        );
        // A tokenless write would have fetched the identity card (`get_project`) first.
        let write = gateway
            .design(
                &main_session("s-c4"),
                "write_files",
                json!({"project_id": id, "files": [{"path": "a.html", "data": "x"}]}),
            )
            .await;
        assert_eq!(write.status, 400, "{id:?}: {}", write.body);
    }
    assert_eq!(
        upstream_calls(&gateway).await,
        0,
        "no observation went upstream"
    );
    // 78 ASCII characters are 80 once quoted: at the limit, accepted and decided.
    let at_limit = gateway
        .design(
            &main_session("s-c4"),
            "get_project",
            json!({"project_id": "p".repeat(78)}),
        )
        .await;
    assert_ne!(at_limit.status, 400, "{}", at_limit.body);
}

async fn raw_call(gateway: &Gateway, body: &str) -> (u16, Value) {
    let reply = gateway
        .send(
            reqwest::Method::POST,
            format!("{}/v1/design/call", gateway.url),
            Some(AGENT),
            Some(body.as_bytes().to_vec()),
        )
        .await;
    (reply.status, reply.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c5_duplicate_keys_are_refused_anywhere_in_a_call() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-c5").to_string();
    let cases = [
        (
            format!(
                r#"{{"session":{session},"input":{{"operation":"get_project","arguments":{{"project_id":"p2","project_id":"p1"}}}}}}"#
            ),
            "project_id",
            "input.arguments.project_id",
        ),
        (
            format!(
                r#"{{"session":{session},"input":{{"operation":"delete_files","operation":"get_project","arguments":{{"project_id":"p1"}}}}}}"#
            ),
            "operation",
            "input.operation",
        ),
        (
            format!(
                r#"{{"session":{session},"input":{{"operation":"write_files","arguments":{{"project_id":"p1","plan_token":"t","files":[{{"path":"a","path":"CLAUDE.md","data":"x"}}]}}}}}}"#
            ),
            "path",
            "input.arguments.files[0].path",
        ),
        (
            format!(
                r#"{{"session":{session},"input":{{"operation":"list"}},"input":{{"operation":"delete_files"}}}}"#
            ),
            "input",
            "input",
        ),
    ];
    for (body, key, path) in cases {
        let (status, reply) = raw_call(&gateway, &body).await;
        assert_eq!(status, 400, "{body}: {reply}");
        assert_eq!(reply["error"]["field"], path, "{reply}");
        assert_eq!(
            reply["error"]["message"],
            format!("duplicate key `{key}` in the request body: send each key once")
        );
    }
    assert_eq!(upstream_calls(&gateway).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c16_wait_errors_name_the_query_parameter() {
    let gateway = Gateway::start().await;
    for wait in ["1h", "-1s", "1.5s", "s", "%20"] {
        let reply = gateway
            .get(&format!("/v1/approvals/nope?wait={wait}"), Some(APPROVER))
            .await;
        assert_eq!(reply.status, 400, "{wait}: {}", reply.body);
        assert_eq!(reply.body["error"]["field"], "query.wait", "{}", reply.body);
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid query parameter `wait`"),
            "{message}"
        );
        assert!(!message.contains("body"), "{message}");
    }
    // A value past u64 (or one whose minutes overflow) clamps instead of wrapping: the
    // unknown approval is reported, nothing panics.
    for wait in ["18446744073709551615m", "99999999999999999999999s"] {
        let reply = gateway
            .get(&format!("/v1/approvals/nope?wait={wait}"), Some(APPROVER))
            .await;
        assert_eq!(reply.status, 404, "{wait}: {}", reply.body);
    }
}
