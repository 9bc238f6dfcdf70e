//! Consent and durable write grants end to end (issue 3): the consent ask and its POST, the
//! grant card and its POST with the retry, the ineligible project, and sessions that never mint.

use serde_json::json;

use super::harness::{
    assert_policy, main_session, non_interactive_session, subagent_session, text_of, write_args,
    Gateway,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consent_ask_then_approve_posts_consent_once_and_later_calls_run_without_asking() {
    let gateway = Gateway::start().await;
    let session = main_session("s-consent");
    let read = json!({"project_id": "p1", "path": "index.html"});
    let asked = gateway.design(&session, "read_file", read.clone()).await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_eq!(asked.decision(), "ask");
    assert_eq!(asked.card_kind(), "consent");
    assert_policy(&asked, "consent.connect-asks-read");
    assert_eq!(
        gateway.tool_calls("read_file").await,
        0,
        "nothing ran before approval"
    );

    let result = gateway.approved_result(&asked).await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(text_of(&result).contains("index.html"), "{result}");
    let stats = gateway.stats().await;
    assert_eq!(stats["consent_posts"], 1);
    assert_eq!(stats["tools_call"]["read_file"], 1);

    let again = gateway.design(&session, "read_file", read).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.decision(), "allow");
    assert_eq!(again.body["result"]["isError"], false);
    let stats = gateway.stats().await;
    assert_eq!(stats["consent_posts"], 1, "consent is posted once");
    assert_eq!(stats["tools_call"]["read_file"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_card_names_the_server_identity_and_approving_posts_the_grant_then_writes() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-grant");
    let asked = gateway
        .design(&session, "write_files", write_args("p1", &["new.html"]))
        .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_eq!(asked.card_kind(), "grant");
    assert_policy(&asked, "grants.card-asks");
    let card = &asked.body["approval"]["card"];
    assert_eq!(card["project_id"], "p1");
    assert_eq!(card["name"], "Q3 deck");
    assert_eq!(card["sharing_scope"], "invited");
    assert_eq!(card["sharing_label"], "private: invited members only");
    assert_eq!(card["url"], "https://claude.ai/design/p/p1");
    assert_eq!(card["writes"], json!(["new.html"]));
    // The identity came from the sandbox's get_project; the write itself has not run.
    assert_eq!(gateway.tool_calls("get_project").await, 1);
    assert_eq!(gateway.tool_calls("write_files").await, 0);

    let result = gateway.approved_result(&asked).await;
    assert_eq!(result["isError"], false, "{result}");
    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 1);
    // First attempt refused with needs_project_grant, then the retry after the grant POST.
    assert_eq!(stats["tools_call"]["write_files"], 2);
    assert_eq!(
        gateway.read_file("p1", "new.html").await.as_deref(),
        Some("<p>new.html</p>")
    );

    let next = gateway
        .design(&session, "write_files", write_args("p1", &["second.html"]))
        .await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert_policy(&next, "grants.held");
    assert_eq!(next.body["result"]["isError"], false);
    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 1, "no second grant POST");
    assert_eq!(stats["tools_call"]["write_files"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grant_post_404_makes_the_project_ineligible_and_later_tokenless_writes_are_denied() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-shared");
    let asked = gateway
        .design(&session, "write_files", write_args("shared-1", &["a.html"]))
        .await;
    assert_eq!(asked.card_kind(), "grant", "{}", asked.body);
    assert_eq!(asked.body["approval"]["card"]["name"], "Partner deck");

    let result = gateway.failed_result(&asked).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        text_of(&result).contains("can't hold a durable write grant"),
        "{result}"
    );
    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 1);
    assert_eq!(
        stats["tools_call"]["write_files"], 1,
        "no retry after the 404"
    );

    let denied = gateway
        .design(&session, "write_files", write_args("shared-1", &["b.html"]))
        .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert_eq!(denied.decision(), "deny");
    assert_policy(&denied, "grants.ineligible-project-denied");
    assert_eq!(gateway.tool_calls("write_files").await, 1);
    assert_eq!(gateway.stats().await["grant_posts"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_and_non_interactive_sessions_never_mint_consent_or_grants() {
    let gateway = Gateway::start().await;
    let subagent = subagent_session("s-sub");
    let asked = gateway
        .design(
            &subagent,
            "read_file",
            json!({"project_id": "p1", "path": "index.html"}),
        )
        .await;
    // A subagent records nothing: the ask is for this call only (issue 23 §2).
    assert_eq!(asked.card_kind(), "batch", "{}", asked.body);
    assert_policy(&asked, "consent.this-call-asks");
    let result = gateway.failed_result(&asked).await;
    // The call ran (the sandbox saw it) but consent was not minted, so the server refused it.
    let stats = gateway.stats().await;
    assert_eq!(stats["tools_call"]["read_file"], 1);
    assert_eq!(stats["consent_posts"], 0);
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["error"], "needs_consent", "{result}");

    gateway.record_consent().await;
    let headless = non_interactive_session("s-headless");
    let denied = gateway
        .design(&headless, "write_files", write_args("p1", &["x.html"]))
        .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert_policy(&denied, "grants.non-interactive-denied");
    let stats = gateway.stats().await;
    assert_eq!(stats["grant_posts"], 0);
    assert_eq!(stats["tools_call"].get("write_files"), None);

    let sub_write = gateway
        .design(&subagent, "write_files", write_args("p1", &["y.html"]))
        .await;
    assert_eq!(sub_write.status, 403, "{}", sub_write.body);
    assert_policy(&sub_write, "grants.subagent-or-hook-denied");
    assert_eq!(gateway.stats().await["grant_posts"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_consent_post_is_reported_and_the_call_does_not_run() {
    let gateway = Gateway::start().await;
    let asked = gateway
        .design(
            &main_session("s-consent-fails"),
            "read_file",
            json!({"project_id": "p1", "path": "index.html"}),
        )
        .await;
    gateway
        .fault(json!({"fault": "status", "status": 500, "path_prefix": "/v1/design/consent"}))
        .await;
    let result = gateway.failed_result(&asked).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["error"], "consent", "{result}");
    assert!(
        text_of(&result).starts_with("Couldn't record Design consent"),
        "{result}"
    );
    let stats = gateway.stats().await;
    assert_eq!(
        stats["consent_posts"], 0,
        "the faulted POST never reached the handler"
    );
    assert_eq!(stats["tools_call"], json!({}), "{stats}");
}
