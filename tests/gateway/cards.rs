//! Cards that state what approving will actually do (issue 23 §2, SPEC §5), as an approver
//! sees them — the JSON card, `askgate approvals list`, the console page and the webhook — and
//! what approving then records, shown before and after: a subagent's or a permission-hook
//! session's finalize_plan and a plan of 21 writes keep no plan, and a subagent's consent ask
//! connects nothing.

use serde_json::{json, Value};

use super::console::Browser;
use super::harness::{
    assert_policy, covered_write_args, main_session, subagent_session, text_of, Gateway, AGENT,
    APPROVER,
};
use super::webhook::receiver;

/// Everything an approver is shown of one approval.
struct Seen {
    card: Value,
    cli: String,
    console: String,
    webhook: String,
}

async fn notifying_gateway(webhook: String) -> Gateway {
    Gateway::start_with(|raw| {
        raw.notify = Some(askgate::server::config::RawNotify {
            webhook_url: Some(webhook),
            console_url: Some("https://askgate.example".to_string()),
        });
    })
    .await
}

async fn seen(gateway: &Gateway, id: &str, webhook: &super::webhook::Receiver) -> Seen {
    let view = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(view.status, 200, "{}", view.body);
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
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
        .expect("approvals list runs");
    assert!(output.status.success(), "{output:?}");
    let mut browser = Browser::new(gateway);
    browser.sign_in(APPROVER).await;
    let page = browser.get(&format!("/console/approvals/{id}")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    Seen {
        card: view.body["card"].clone(),
        cli: String::from_utf8(output.stdout).expect("utf-8"),
        console: page.body,
        webhook: webhook_text(webhook, id).await,
    }
}

/// The text of the webhook message for approval `id`, once it has arrived (within 5 s).
async fn webhook_text(webhook: &super::webhook::Receiver, id: &str) -> String {
    for _ in 0..100 {
        let found = webhook
            .bodies
            .lock()
            .expect("bodies")
            .iter()
            .find(|message| message["approval"]["id"] == json!(id))
            .map(|message| message["text"].as_str().unwrap_or("").to_string());
        if let Some(text) = found {
            return text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no webhook message for `{id}`");
}

impl Seen {
    /// Every view names the kind and the scope sentence, and none promises a plan.
    fn assert_this_call_only(&self, scope: &str) {
        assert_eq!(self.card["kind"], "batch", "{}", self.card);
        assert_eq!(self.card["scope"], scope, "{}", self.card);
        for (view, text) in [
            ("cli", &self.cli),
            ("console", &self.console),
            ("webhook", &self.webhook),
        ] {
            assert!(text.contains("This call only"), "{view}: {text}");
            assert!(text.contains(scope), "{view}: {text}");
            assert!(!text.contains("15 minutes"), "{view}: {text}");
        }
        let message = self.card["message"].as_str().unwrap_or("");
        assert!(message.contains("keeps nothing"), "{message}");
        assert!(!message.contains("15 minutes"), "{message}");
        assert!(self.cli.contains(message), "{}", self.cli);
    }
}

/// Whether a write with `token` in p1 would be decided on a registered plan (`explain`).
async fn plan_found(gateway: &Gateway, session: &Value, token: &str) -> bool {
    let body = json!({
        "session": session,
        "tool": "ClaudeDesign",
        "input": {"operation": "write_files",
                  "arguments": covered_write_args("p1", token, &["index.html"])},
        "explain": true,
    });
    let reply = gateway.post("/v1/authorize", Some(AGENT), Some(body)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let requests = reply.body["requests"].as_array().expect("explained");
    let call = requests.last().expect("the call's own request");
    call["context"]["design"]["plan"]["found"] == json!(true)
}

/// Approves `asked` (a finalize_plan) and returns the plan token the upstream minted.
async fn approved_token(gateway: &Gateway, asked: &super::harness::Reply) -> String {
    let result = gateway.approved_result(asked).await;
    assert_eq!(result["isError"], false, "{result}");
    let body: Value = serde_json::from_str(&text_of(&result)).expect("plan JSON");
    body["plan_token"].as_str().expect("a token").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_or_hook_sessions_finalize_plan_card_says_this_call_only_and_no_plan_is_kept() {
    let hook = receiver(0).await;
    let gateway = notifying_gateway(hook.url.clone()).await;
    gateway.record_consent().await;
    let hooked = json!({"id": "s-cards-hook", "agent": "main", "mode": "default",
                        "interactive": true, "permission_hook": true});
    let cases = [
        (
            subagent_session("s-cards"),
            "no plan is kept for a subagent",
        ),
        (
            hooked,
            "no plan is kept for a session with a permission-request hook",
        ),
    ];
    for (session, kept) in cases {
        let asked = gateway
            .design(
                &session,
                "finalize_plan",
                json!({"project_id": "p1", "scope": "paths",
                       "writes": ["index.html"], "deletes": ["old.css"]}),
            )
            .await;
        assert_eq!(asked.status, 202, "{}", asked.body);
        assert_policy(&asked, "design.finalize-plan-asks-this-call");
        let id = asked.approval_id();
        let seen = seen(&gateway, &id, &hook).await;
        seen.assert_this_call_only(&format!("this call only; {kept}"));
        assert_eq!(seen.card["writes"], json!(["index.html"]));
        assert_eq!(seen.card["deletes"], json!(["old.css"]));
        assert!(seen.console.contains("Writes (1)"), "{}", seen.console);
        assert!(seen.console.contains("Deletes (1)"), "{}", seen.console);
        assert!(seen.cli.contains("writes:   index.html"), "{}", seen.cli);

        // Before: the call has not run. After: it ran once and its token is no plan, for this
        // session or the main agent in the same session.
        let finalized = gateway.tool_calls("finalize_plan").await;
        let token = approved_token(&gateway, &asked).await;
        assert_eq!(gateway.tool_calls("finalize_plan").await, finalized + 1);
        let main = main_session(session["id"].as_str().unwrap_or(""));
        assert!(!plan_found(&gateway, &session, &token).await);
        assert!(!plan_found(&gateway, &main, &token).await);
        let write = gateway
            .design(
                &main,
                "write_files",
                covered_write_args("p1", &token, &["index.html"]),
            )
            .await;
        assert_eq!(write.status, 202, "{}", write.body);
        assert_policy(&write, "plans.uncovered-asks");
    }
    assert_eq!(
        gateway.stats().await["consent_posts"],
        1,
        "only the test's own"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalize_plan_of_21_writes_is_asked_for_this_call_and_registers_no_plan() {
    let hook = receiver(0).await;
    let gateway = notifying_gateway(hook.url.clone()).await;
    gateway.record_consent().await;
    let session = main_session("s-cards-21");
    let writes: Vec<String> = (0..21)
        .map(|index| format!("page-{index:02}.html"))
        .collect();
    let asked = gateway
        .design(
            &session,
            "finalize_plan",
            json!({"project_id": "p1", "scope": "paths", "writes": writes}),
        )
        .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    let seen = seen(&gateway, &asked.approval_id(), &hook).await;
    seen.assert_this_call_only(
        "this call only; no plan is kept (the plan can't be registered: it has 21 writes, more than 20)",
    );
    assert_eq!(seen.card["writes"], json!(writes));

    let token = approved_token(&gateway, &asked).await;
    assert!(
        !plan_found(&gateway, &session, &token).await,
        "never registered"
    );

    // The same session's plan of 20 writes is a plan card, and approving registers it.
    let twenty = &writes[..20];
    let asked = gateway
        .design(
            &session,
            "finalize_plan",
            json!({"project_id": "p1", "scope": "paths", "writes": twenty}),
        )
        .await;
    assert_eq!(asked.card_kind(), "plan", "{}", asked.body);
    assert_eq!(asked.body["approval"]["card"]["expires_in_seconds"], 900);
    let token = approved_token(&gateway, &asked).await;
    assert!(plan_found(&gateway, &session, &token).await, "registered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_consent_card_connects_nothing_and_approving_records_no_consent() {
    let hook = receiver(0).await;
    let gateway = notifying_gateway(hook.url.clone()).await;
    let read = json!({"project_id": "p1", "path": "index.html"});
    let asked = gateway
        .design(
            &subagent_session("s-cards-consent"),
            "read_file",
            read.clone(),
        )
        .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_policy(&asked, "consent.this-call-asks");
    let seen = seen(&gateway, &asked.approval_id(), &hook).await;
    seen.assert_this_call_only(
        "this call only; Claude Design stays unconnected (nothing is recorded for a subagent)",
    );
    assert!(!seen.console.contains("until revoked"), "{}", seen.console);
    assert!(!seen.cli.contains("Connect Claude Design"), "{}", seen.cli);

    // Before: no consent recorded. After approving: the call ran once and was refused upstream
    // for want of consent, none was posted, and the main agent is still asked to connect.
    assert_eq!(gateway.stats().await["consent_posts"], 0);
    let result = gateway.failed_result(&asked).await;
    assert_eq!(result["error"], "needs_consent", "{result}");
    let stats = gateway.stats().await;
    assert_eq!(stats["consent_posts"], 0);
    assert_eq!(stats["tools_call"]["read_file"], 1);
    let main = gateway
        .design(&main_session("s-cards-main"), "read_file", read)
        .await;
    assert_eq!(main.card_kind(), "consent", "{}", main.body);
    assert!(main.body["approval"]["card"]["scope"]
        .as_str()
        .unwrap_or("")
        .contains("until revoked"));
}
