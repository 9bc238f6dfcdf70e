//! What users see (issue 33, findings A1, A2, A7, A12, A16, A17 and P2, P6 of 2026-12-04):
//! the agent learns what really happened to an approved call, the first write's two approvals
//! are one flow, a call is never run for a client that is no longer there, and the approver
//! sees who asked — over real HTTP, MCP and the console.

use std::time::Duration;

use serde_json::{json, Value};

use super::console::Browser;
use super::harness::{
    main_session, subagent_session, text_of, write_args, Gateway, AGENT, APPROVER,
};
use super::mcp::{pending_approval, quick_holds};
use super::mcp_client::McpClient;
use super::webhook::receiver;

async fn session_client(gateway: &Gateway) -> McpClient<'_> {
    let mut client = McpClient::new(gateway, Some(AGENT));
    let reply = client.initialize(json!({})).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    client
}

fn delete(path: &str) -> Value {
    json!({"operation": "delete_files", "arguments": {"project_id": "p1", "paths": [path]}})
}

/// A1: a tokenless `delete_files` asks for this call only; approved, the upstream answers that
/// it needs a plan token. The model reads that answer, its error kind and that the call ran —
/// not "askgate lost track of it".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a1_an_approved_call_that_fails_upstream_reaches_the_agent_with_its_result() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    gateway.record_consent().await;
    let mut client = session_client(&gateway).await;
    let approve = async {
        let approval = pending_approval(&gateway).await;
        assert_eq!(approval["card"]["kind"], "batch", "{approval}");
        let approved = gateway.approve(approval["id"].as_str().unwrap()).await;
        assert_eq!(approved.body["status"], "failed", "{}", approved.body);
        approved.body
    };
    let ((result, _), approved) =
        tokio::join!(client.call("ClaudeDesign", delete("index.html")), approve);
    let text = text_of(&result);
    assert_eq!(result["isError"], true, "{result}");
    assert!(!text.contains("lost track"), "{text}");
    assert!(!text.contains("did not run"), "{text}");
    let kind = approved["result"]["error"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "`demo-approver` approved it and it ran, but it failed (error `{kind}`)"
        )),
        "{text}"
    );
    assert!(text.contains(&text_of(&approved["result"])), "{text}");
    assert!(text.contains("call finalize_plan first"), "{text}");
    let structured = &result["structuredContent"];
    assert_eq!(structured["status"], "failed", "{result}");
    assert_eq!(structured["ran"], "yes", "{result}");
    assert_eq!(structured["error"], kind, "{result}");
    assert_eq!(gateway.tool_calls("delete_files").await, 1);
}

/// P6: an approved call whose run passes `approvals.run_deadline_seconds` may have reached the
/// upstream: the agent is told so, never that it did not run (it would make the call again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p6_an_approved_call_past_its_run_deadline_may_have_reached_the_upstream() {
    let gateway = Gateway::start_with(|raw| {
        quick_holds(raw, 30);
        raw.approvals = Some(serde_json::from_value(json!({"run_deadline_seconds": 1})).unwrap());
    })
    .await;
    gateway.record_consent().await;
    gateway
        .fault(json!({"fault": "delay", "ms": 4000, "tool": "delete_files"}))
        .await;
    let mut client = session_client(&gateway).await;
    let approve = async {
        let approval = pending_approval(&gateway).await;
        gateway.approve(approval["id"].as_str().unwrap()).await
    };
    let ((result, _), _) = tokio::join!(client.call("ClaudeDesign", delete("slow.html")), approve);
    let text = text_of(&result);
    assert!(!text.contains("did not run"), "{text}");
    assert!(
        text.contains("approved it, but its run did not finish (error `deadline`)"),
        "{text}"
    );
    assert!(
        text.contains("the call may or may not have reached the upstream"),
        "{text}"
    );
    assert_eq!(result["structuredContent"]["ran"], "unknown", "{result}");
}

/// A2: the first write without consent asks to connect Claude Design. Approving it records
/// consent and hands the same held call on to the grant card (`completed`, naming it), which
/// the approver approves next; the call runs once and the agent, still waiting, reads its
/// result and both approvals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2_approving_the_consent_card_hands_the_held_write_on_to_its_grant_card() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 30)).await;
    let mut client = session_client(&gateway).await;
    let approve = async {
        let consent = pending_approval(&gateway).await;
        assert_eq!(consent["card"]["kind"], "consent", "{consent}");
        let id = consent["id"].as_str().unwrap().to_string();
        let approved = gateway.approve(&id).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
        assert_eq!(approved.body["status"], "completed", "{}", approved.body);
        let next = approved.body["result"]["next_approval"]
            .as_str()
            .unwrap_or_else(|| panic!("no next approval: {}", approved.body))
            .to_string();
        assert!(
            text_of(&approved.body["result"]).contains(&format!(
                "one more approval before it runs: approval `{next}`"
            )),
            "{}",
            approved.body
        );
        let grant = gateway
            .get(&format!("/v1/approvals/{next}"), Some(APPROVER))
            .await
            .body;
        assert_eq!(grant["status"], "pending", "{grant}");
        assert_eq!(grant["card"]["kind"], "grant", "{grant}");
        assert_eq!(grant["card"]["writes"], json!(["first.html"]), "{grant}");
        assert_eq!(grant["requested_by"], "demo-agent", "{grant}");
        assert_eq!(grant["client"], "waiting", "{grant}");
        assert_eq!(
            gateway.tool_calls("write_files").await,
            0,
            "nothing written yet"
        );
        let granted = gateway.approve(&next).await;
        assert_eq!(granted.body["status"], "completed", "{}", granted.body);
        (id, next)
    };
    let write = json!({"operation": "write_files", "arguments": write_args("p1", &["first.html"])});
    let ((result, _), (consent, grant)) = tokio::join!(client.call("ClaudeDesign", write), approve);
    assert_eq!(result["isError"], false, "{result}");
    let text = text_of(&result);
    assert!(
        text.contains(&format!(
            "ran once `demo-approver` approved approval `{grant}`"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "before it, `demo-approver` approved approval `{consent}`, which connected Claude Design"
        )),
        "{text}"
    );
    let stats = gateway.stats().await;
    assert_eq!(stats["consent_posts"], 1, "{stats}");
    assert_eq!(stats["grant_posts"], 1, "{stats}");
    assert_eq!(
        gateway.read_file("p1", "first.html").await.as_deref(),
        Some("<p>first.html</p>")
    );
}

/// A2 in the console: the consent card says what follows, and approving it shows the grant
/// card for the same call at once, with its forms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2_the_console_shows_the_grant_card_right_after_the_consent_card() {
    let gateway = Gateway::start().await;
    let asked = gateway
        .design(
            &main_session("console-first"),
            "write_files",
            write_args("p1", &["c.html"]),
        )
        .await;
    assert_eq!(asked.card_kind(), "consent", "{}", asked.body);
    let id = asked.approval_id();
    let mut browser = Browser::new(&gateway);
    browser.sign_in(APPROVER).await;
    let card = browser.get(&format!("/console/approvals/{id}")).await;
    assert!(
        card.body.contains("that card comes next for the same call"),
        "{}",
        card.body
    );
    let csrf = card.csrf();
    let next = browser
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf), ("note", "")],
        )
        .await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert!(
        next.body.contains("Claude Design is connected"),
        "{}",
        next.body
    );
    assert!(next.body.contains("data-kind=\"grant\""), "{}", next.body);
    assert!(
        next.body.contains("/approve\""),
        "the grant card's forms: {}",
        next.body
    );
    let shown = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(shown.body["status"], "completed", "{}", shown.body);
}

/// A12: a held call whose wait ends withdraws its approval (never `expired`), even when the
/// service's clock reaches the wait's end as the call gives up: the approval lives a moment
/// longer than the call waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a12_a_held_call_whose_wait_ends_withdraws_its_approval() {
    let gateway = Gateway::start_with(|raw| quick_holds(raw, 2)).await;
    gateway.record_consent().await;
    let mut client = session_client(&gateway).await;
    let clock = async {
        pending_approval(&gateway).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        gateway.clock.advance(time::Duration::milliseconds(2100));
    };
    let ((result, _), ()) = tokio::join!(client.call("ClaudeDesign", delete("late.html")), clock);
    let text = text_of(&result);
    assert_eq!(
        result["structuredContent"]["status"], "withdrawn",
        "{result}"
    );
    assert!(text.contains("make the call again to ask again"), "{text}");
    assert_eq!(gateway.tool_calls("delete_files").await, 0);
}

/// A16: a 2026-07-28 client told where to approve (`input_required`) that never comes back:
/// the approver's approval waits for it instead of running the call, the card says no client
/// is waiting, and when the approval's wait is over it is withdrawn — the call never ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a16_an_approval_whose_client_never_came_back_is_withdrawn_and_never_runs() {
    let logs = tempfile::tempdir().unwrap();
    let log_dir = logs.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| {
        quick_holds(raw, 2);
        raw.log_dir = Some(log_dir);
    })
    .await;
    gateway.record_consent().await;
    let mut client = McpClient::stateless(&gateway, Some(AGENT));
    client.capabilities = json!({"elicitation": {"url": {}}});
    let first = client
        .request(
            "tools/call",
            json!({"name": "ClaudeDesign", "arguments": delete("gone.html")}),
        )
        .await;
    assert_eq!(
        first.response(1)["result"]["resultType"],
        "input_required",
        "{first:?}"
    );
    let approval = pending_approval(&gateway).await;
    assert_eq!(approval["client"], "not_yet", "{approval}");
    let id = approval["id"].as_str().unwrap().to_string();
    let mut browser = Browser::new(&gateway);
    browser.sign_in(APPROVER).await;
    let card = browser.get(&format!("/console/approvals/{id}")).await;
    assert!(
        card.body.contains("data-client=\"not_yet\""),
        "{}",
        card.body
    );
    assert!(
        card.body.contains("has not come back for the result"),
        "{}",
        card.body
    );
    // Approved while nobody waits: answered at once, nothing runs.
    let approved = gateway.approve(&id).await;
    assert_eq!(approved.status, 202, "{}", approved.body);
    assert_eq!(approved.body["status"], "running", "{}", approved.body);
    let mut shown = approved;
    for _ in 0..100 {
        shown = gateway
            .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
            .await;
        if shown.body["status"] != "running" {
            break;
        }
        assert_eq!(
            gateway.tool_calls("delete_files").await,
            0,
            "nothing runs meanwhile"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(shown.body["status"], "withdrawn", "{}", shown.body);
    let why = text_of(&shown.body["result"]);
    assert!(why.contains("never came back for the result"), "{why}");
    assert!(why.contains("the call never ran"), "{why}");
    assert_eq!(gateway.tool_calls("delete_files").await, 0);
    let withdrawn: Vec<Value> = super::hook_log::records(logs.path())
        .into_iter()
        .filter(|record| record["kind"] == "approval" && record["action"] == "withdrawn")
        .collect();
    assert_eq!(withdrawn.len(), 1, "{withdrawn:?}");
    assert_eq!(withdrawn[0]["approval_id"], id.as_str());
}

/// A17 and A7: the card of a subagent's call says it is a subagent's (and which), its mode and
/// where its facts come from — in the JSON, the console and the webhook; with `console_url` set
/// to the console URL `serve` prints, the webhook's link opens that card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a17_a7_a_subagents_card_says_who_asked_and_the_webhook_link_opens_it() {
    let hook = receiver(0).await;
    let webhook = hook.url.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let console = format!("http://{}/console", listener.local_addr().unwrap());
    let printed = console.clone();
    let gateway = Gateway::start_on(listener, move |raw| {
        raw.notify = Some(askgate::server::config::RawNotify {
            webhook_url: Some(webhook),
            console_url: Some(printed),
        });
    })
    .await;
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &subagent_session("sub-session"),
            "delete_files",
            delete("x.html")["arguments"].clone(),
        )
        .await;
    let id = asked.approval_id();
    let asked_as = &asked.body["approval"]["asked_as"];
    assert_eq!(
        asked_as,
        &json!({"agent": "subagent", "agent_id": "sub-1", "mode": "default", "attestation": "none"})
    );
    let expected = "subagent sub-1, permission mode default, as the caller stated them";
    let mut message = Value::Null;
    for _ in 0..100 {
        if let Some(first) = hook.bodies.lock().unwrap().first() {
            message = first.clone();
        }
        if !message.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let link = message["console_url"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(link, format!("{console}/approvals/{id}"), "{message}");
    assert!(
        message["text"].as_str().unwrap().contains(expected),
        "{message}"
    );
    let mut browser = Browser::new(&gateway);
    browser.sign_in(APPROVER).await;
    let path = link.strip_prefix(&gateway.url).unwrap();
    let page = browser.get(path).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&id), "{}", page.body);
    assert!(page.body.contains(expected), "{}", page.body);
}

const AGENT_ONE: &str = "agent-one-token-0123456789abcdefghij";
const AGENT_TWO: &str = "agent-two-token-0123456789abcdefghij";
const APPROVER_TOKEN: &str = "approver-token-0123456789abcdefghijk";

/// An ask of `token`'s (2026-07-28, URL elicitation): its approval's link state.
async fn linked_ask(client: &mut McpClient<'_>, path: &str) -> (Value, String) {
    let params = json!({"name": "ClaudeDesign", "arguments": delete(path)});
    let first = client.request("tools/call", params.clone()).await;
    let result = first.messages[0]["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{first:?}");
    (params, result["requestState"].as_str().unwrap().to_string())
}

fn retry(params: &Value, state: &str) -> Value {
    let mut retry = params.clone();
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({"askgate_approval": {"action": "cancel"}});
    retry
}

/// P2: agent-two asks, retries with its state (held) and goes away, again and again — more
/// times than the table of redeemed links holds. agent-one's own ask and retry are then still
/// taken and held, and run once approved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p2_one_agents_redeemed_links_never_refuse_another_agents_retry() {
    let gateway = Gateway::start_with(|raw| {
        quick_holds(raw, 30);
        raw.callers = Some(
            serde_json::from_value(json!([
                {"token": AGENT_ONE, "role": "agent", "principal": "agent-one"},
                {"token": AGENT_TWO, "role": "agent", "principal": "agent-two"},
                {"token": APPROVER_TOKEN, "role": "approver", "principal": "approver"},
            ]))
            .unwrap(),
        );
        raw.approvals = Some(
            serde_json::from_value(json!({"max_pending": 4, "max_pending_per_caller": 4})).unwrap(),
        );
        raw.mcp.as_mut().unwrap().max_held = Some(2);
        raw.mcp.as_mut().unwrap().max_held_per_caller = Some(2);
    })
    .await;
    let consent = gateway
        .post("/v1/design/consent", Some(APPROVER_TOKEN), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    let mut two = McpClient::stateless(&gateway, Some(AGENT_TWO));
    two.capabilities = json!({"elicitation": {"url": {}}});
    for n in 0..6 {
        let (params, state) = linked_ask(&mut two, &format!("two-{n}.html")).await;
        // Held, then the client goes away: the approval is withdrawn.
        let gone = tokio::time::timeout(
            Duration::from_millis(400),
            two.request("tools/call", retry(&params, &state)),
        )
        .await;
        assert!(gone.is_err(), "the retry is held: {gone:?}");
    }
    let mut one = McpClient::stateless(&gateway, Some(AGENT_ONE));
    one.capabilities = json!({"elicitation": {"url": {}}});
    let (params, state) = linked_ask(&mut one, "one.html").await;
    let approve = async {
        for _ in 0..100 {
            let pending = gateway.get("/v1/approvals", Some(APPROVER_TOKEN)).await;
            let mine = pending.body["approvals"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|approval| {
                    approval["requested_by"] == "agent-one" && approval["client"] == "waiting"
                })
                .cloned();
            if let Some(mine) = mine {
                let id = mine["id"].as_str().unwrap();
                let reply = gateway
                    .post(
                        &format!("/v1/approvals/{id}/approve"),
                        Some(APPROVER_TOKEN),
                        None,
                    )
                    .await;
                assert_eq!(reply.status, 200, "{}", reply.body);
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("agent-one's retry was never held");
    };
    let ((result, _), ()) = tokio::join!(one.call_with_params(retry(&params, &state)), approve);
    let text = text_of(&result);
    assert!(!text.contains("refused this retry"), "{text}");
    assert!(text.contains("`approver` approved it and it ran"), "{text}");
}
