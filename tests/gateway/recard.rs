//! Recard and verified grants end to end (issue 23 §1): once consent is revoked every project
//! needs its identity card again, because the server's grant is no longer trusted; a project
//! the human then re-approves keeps its verified grant whatever the flag (client-facts §5.1,
//! §8 6e, 6f), and only a non-interactive session is refused under the flag (§8 6a). The
//! grant facts each decision read are shown through `explain`, before and after approving.

use serde_json::{json, Value};

use super::harness::{
    assert_policy, main_session, non_interactive_session, write_args, Gateway, AGENT, APPROVER,
};

/// The decision on a tokenless write of `paths` in p1 and the grant facts it read.
async fn grant_facts(gateway: &Gateway, session: &Value, paths: &[&str]) -> (String, Value) {
    let body = json!({
        "session": session,
        "tool": "ClaudeDesign",
        "input": {"operation": "write_files", "arguments": write_args("p1", paths)},
        "explain": true,
    });
    let reply = gateway.post("/v1/authorize", Some(AGENT), Some(body)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let requests = reply.body["requests"].as_array().expect("explained");
    let call = requests.last().expect("the call's own request");
    let decision = reply.body["decision"].as_str().unwrap_or("").to_string();
    (decision, call["context"]["design"]["grant"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recard_all_withdraws_the_servers_grant_and_a_re_approved_project_keeps_its_own() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-recard");
    let first = gateway
        .design(&session, "write_files", write_args("p1", &["a.html"]))
        .await;
    assert_eq!(first.card_kind(), "grant", "{}", first.body);
    gateway.approved_result(&first).await;
    assert_eq!(gateway.stats().await["grant_posts"], 1);
    let (decision, grant) = grant_facts(&gateway, &session, &["a.html"]).await;
    assert_eq!(decision, "allow");
    assert_eq!(grant["verified"], true, "{grant}");
    assert_eq!(grant["recard"], false, "{grant}");

    // Revoking consent seeds it false: every verified mark goes and every project is flagged.
    let revoked = gateway
        .post("/v1/design/revoke", Some(APPROVER), None)
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    gateway.record_consent().await;
    let (decision, grant) = grant_facts(&gateway, &session, &["b.html"]).await;
    assert_eq!(decision, "ask");
    assert_eq!(
        grant,
        json!({"verified": false, "server": "granted", "recard": true, "ineligible": false}),
        "the server still holds the grant, but it is not trusted"
    );

    // The approver sees the identity card again and approves it.
    let asked = gateway
        .design(&session, "write_files", write_args("p1", &["b.html"]))
        .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_policy(&asked, "grants.card-asks");
    let card = &asked.body["approval"]["card"];
    assert_eq!(card["kind"], "grant");
    assert_eq!(card["name"], "Q3 deck");
    assert_eq!(card["url"], "https://claude.ai/design/p/p1");
    assert_eq!(card["writes"], json!(["b.html"]));
    let result = gateway.approved_result(&asked).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        gateway.stats().await["grant_posts"],
        1,
        "the server held the grant: the write ran at once, no second POST"
    );

    // Verified again, and still flagged: only the server's word stays distrusted.
    let (decision, grant) = grant_facts(&gateway, &session, &["c.html"]).await;
    assert_eq!(decision, "allow");
    assert_eq!(grant["verified"], true, "{grant}");
    assert_eq!(grant["recard"], true, "{grant}");
    let ordinary = gateway
        .design(&session, "write_files", write_args("p1", &["c.html"]))
        .await;
    assert_eq!(ordinary.status, 200, "{}", ordinary.body);
    assert_policy(&ordinary, "grants.held");
    let reserved = gateway
        .design(&session, "write_files", write_args("p1", &["CLAUDE.md"]))
        .await;
    assert_eq!(reserved.status, 202, "{}", reserved.body);
    assert_eq!(reserved.card_kind(), "batch");
    assert_policy(&reserved, "grants.reserved-targets-ask");
    let headless = gateway
        .design(
            &non_interactive_session("s-recard-headless"),
            "write_files",
            write_args("p1", &["d.html"]),
        )
        .await;
    assert_eq!(headless.status, 403, "{}", headless.body);
    assert_policy(&headless, "grants.non-interactive-denied");
    assert_eq!(gateway.read_file("p1", "d.html").await, None);
}
