//! `explain` on `POST /v1/authorize` end to end: the exact Cedar requests of a decision, one
//! per distinct target path and then the call's own, the same whether or not the snapshot's
//! answer cache held them.

use serde_json::{json, Value};

use super::harness::{approved_plan, covered_write_args, main_session, Gateway, AGENT};

async fn explained(gateway: &Gateway, session: &Value, arguments: Value) -> Value {
    let body = json!({
        "session": session,
        "tool": "ClaudeDesign",
        "input": {"operation": "write_files", "arguments": arguments},
        "explain": true,
    });
    let reply = gateway.post("/v1/authorize", Some(AGENT), Some(body)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

fn questions(body: &Value) -> Vec<(String, String)> {
    body["requests"]
        .as_array()
        .expect("explain lists the requests")
        .iter()
        .map(|request| {
            let question = request["question"].as_str().unwrap_or("").to_string();
            let path = request["context"]["path"]
                .as_str()
                .unwrap_or("")
                .to_string();
            (question, path)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_lists_each_distinct_target_then_the_call() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-explain");
    let token = approved_plan(&gateway, &session, &["index.html", "about.html"]).await;
    let covered = covered_write_args("p1", &token, &["about.html", "./about.html", "index.html"]);

    let first = explained(&gateway, &session, covered.clone()).await;
    assert_eq!(first["decision"], "allow", "{first}");
    let expected = [
        ("target", "about.html"),
        ("target", "index.html"),
        ("unapproved", ""),
    ]
    .map(|(question, path)| (question.to_string(), path.to_string()));
    assert_eq!(questions(&first), expected);
    let requests = &first["requests"];
    assert_eq!(requests[0]["principal"], "Agent::\"main\"");
    assert_eq!(requests[0]["action"], "Action::\"write_target\"");
    assert_eq!(requests[0]["resource"], "DesignProject::\"p1\"");
    assert_eq!(requests[0]["context"]["operation"], "write_files");
    assert_eq!(requests[2]["action"], "Action::\"write_files\"");
    let call = &requests[2]["context"]["design"];
    assert_eq!(call["targets"]["verdict"], "pass");
    assert_eq!(
        call["targets"]["paths"],
        json!(["about.html", "index.html"])
    );
    assert_eq!(call["plan"]["writes"], json!(["about.html", "index.html"]));

    // The same call again (its target answers now cached): the same requests, unmarked, but
    // for the caller's usage, which now counts the first call (issue 36 §2).
    let again = explained(&gateway, &session, covered).await;
    let usage = |body: &Value| body["requests"][2]["context"]["caller"]["usage"].clone();
    assert_eq!(usage(&first)["calls_minute"], 1, "{first}");
    assert_eq!(usage(&first)["identical_minute"], 0, "{first}");
    assert_eq!(usage(&again)["calls_minute"], 2, "{again}");
    assert_eq!(usage(&again)["identical_minute"], 1, "{again}");
    let without_usage = |body: &Value| {
        let mut requests = body["requests"].clone();
        requests[2]["context"]["caller"]
            .as_object_mut()
            .expect("the call's request names its caller")
            .remove("usage");
        requests
    };
    assert_eq!(without_usage(&again), without_usage(&first));
    assert!(again["requests"][0].get("memoized").is_none(), "{again}");
    assert_eq!(again["decision"], "allow");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_shows_the_blocked_target_and_the_blocked_verdict() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-explain-blocked");
    let token = approved_plan(&gateway, &session, &["index.html"]).await;
    let arguments = covered_write_args("p1", &token, &["index.html", "docs/CLAUDE.md"]);
    for _ in 0..2 {
        let body = explained(&gateway, &session, arguments.clone()).await;
        assert_ne!(body["decision"], "allow", "{body}");
        let listed = questions(&body);
        assert_eq!(listed[0], ("target".to_string(), "index.html".to_string()));
        assert_eq!(
            listed[1],
            ("target".to_string(), "docs/CLAUDE.md".to_string())
        );
        let call = &body["requests"][2]["context"]["design"];
        assert_eq!(call["targets"]["verdict"], "blocked", "{body}");
    }
}
