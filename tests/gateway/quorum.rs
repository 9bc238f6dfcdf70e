//! Approvals that need several approvers (issue 35 §2 and the votes of §3), end to end over
//! HTTP with real Cedar: an admin's `@quorum("2")` on an `@ask` policy holds a destructive
//! delete until two distinct eligible approvers approve. The first approval leaves it pending
//! with `1 of 2 approvals` (the call not run), the same approver again is refused and changes
//! nothing, an ineligible vote is refused and not counted, the second approver runs it exactly
//! once, and one refusal refuses it. Every vote (who, when, note) is on the approval (API, CLI,
//! console) and in the decision log (`askgate log show`); `approvals.refusal_requires_note`
//! refuses a refusal without a note; the webhook says how many approvers an ask needs.

use serde_json::{json, Value};

use super::console::Browser;
use super::harness::{main_session, Gateway, Reply};

pub(super) const ALICE_AGENT: &str = "alice-agent-token-0123456789abcdef0123";
pub(super) const ALICE_APPROVER: &str = "alice-approver-token-0123456789abcdef0123";
pub(super) const BOB_APPROVER: &str = "bob-approver-token-0123456789abcdef0123";
pub(super) const DANA_APPROVER: &str = "dana-approver-token-0123456789abcdef0123";
const CAROL_APPROVER: &str = "carol-approver-token-0123456789abcdef0123";

/// The admin's rule: a Design delete needs two approvers.
const TWO_APPROVERS: &str = r#"@id("org.deletes-need-two-approvers")
@ask("batch")
@quorum("2")
@reason("destructive deletes need two approvers")
forbid (principal, action == Action::"delete_files", resource)
unless { context.approvals.contains("batch") };
"#;

fn callers() -> Value {
    json!([
        {"token": ALICE_AGENT, "role": "agent", "principal": "alice"},
        {"token": ALICE_APPROVER, "role": "approver", "principal": "alice"},
        {"token": BOB_APPROVER, "role": "approver", "principal": "bob"},
        {"token": DANA_APPROVER, "role": "approver", "principal": "dana"},
        {"token": CAROL_APPROVER, "role": "approver", "principal": "carol"},
    ])
}

pub(super) struct Setup {
    pub(super) gateway: Gateway,
    logs: tempfile::TempDir,
    _managed: tempfile::TempDir,
}

pub(super) async fn start(approvals: Value) -> Setup {
    start_notifying(approvals, None).await
}

/// [`start`], with the webhook at `webhook` when given.
async fn start_notifying(approvals: Value, webhook: Option<String>) -> Setup {
    let managed = tempfile::tempdir().unwrap();
    std::fs::write(managed.path().join("two.cedar"), TWO_APPROVERS).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let (dir, log_dir) = (managed.path().to_path_buf(), logs.path().to_path_buf());
    let gateway = Gateway::start_with(|raw| {
        raw.callers = Some(serde_json::from_value(callers()).unwrap());
        raw.policies = Some(vec![dir]);
        raw.log_dir = Some(log_dir);
        raw.approvals = Some(serde_json::from_value(approvals).unwrap());
        raw.notify = webhook.map(|url| askgate::server::config::RawNotify {
            webhook_url: Some(url),
            console_url: Some("https://askgate.example".to_string()),
        });
    })
    .await;
    let consent = gateway
        .post("/v1/design/consent", Some(BOB_APPROVER), None)
        .await;
    assert_eq!(consent.status, 200, "{}", consent.body);
    Setup {
        gateway,
        logs,
        _managed: managed,
    }
}

/// Alice's agent asks to delete a file of p1: the reply (202, with its approval).
pub(super) async fn ask_delete(gateway: &Gateway) -> Reply {
    let body = json!({"session": main_session("s-quorum"),
                      "input": {"operation": "delete_files",
                                "arguments": {"project_id": "p1", "paths": ["styles.css"]}}});
    gateway
        .post("/v1/design/call", Some(ALICE_AGENT), Some(body))
        .await
}

async fn answer(gateway: &Gateway, token: &str, id: &str, vote: &str, note: Option<&str>) -> Reply {
    let body = note.map(|note| json!({ "note": note }));
    gateway
        .post(&format!("/v1/approvals/{id}/{vote}"), Some(token), body)
        .await
}

async fn shown(gateway: &Gateway, id: &str) -> Value {
    let reply = gateway
        .get(&format!("/v1/approvals/{id}"), Some(DANA_APPROVER))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

fn voters(view: &Value) -> Vec<(String, String, Option<String>)> {
    view["votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ballot| {
            (
                ballot["by"].as_str().unwrap().to_string(),
                ballot["vote"].as_str().unwrap().to_string(),
                ballot["note"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn message(reply: &Reply) -> String {
    reply.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_quorum_2_holds_the_call_until_a_second_person_approves() {
    let setup = start(json!({})).await;
    let gateway = &setup.gateway;
    let asked = ask_delete(gateway).await;
    let id = asked.approval_id();
    assert_eq!(asked.body["approval"]["quorum"], 2, "{}", asked.body);
    assert_eq!(asked.body["approval"]["votes"], json!([]));

    let first = answer(gateway, BOB_APPROVER, &id, "approve", Some("looks right")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["status"], "pending", "{}", first.body);
    assert_eq!(first.body["quorum"], 2);
    assert_eq!(
        voters(&first.body),
        [("bob".into(), "approve".into(), Some("looks right".into()))]
    );
    assert!(first.body["votes"][0]["at"].is_string(), "{}", first.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 0, "held");

    // The same person again: refused with the tally, nothing changes.
    let again = answer(gateway, BOB_APPROVER, &id, "approve", None).await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(
        message(&again),
        format!("`bob` already approved approval `{id}`: 1 of 2 approvals; waiting for another approver")
    );
    // The requester's own vote is refused by separation of duties and not counted.
    let own = answer(gateway, ALICE_APPROVER, &id, "approve", None).await;
    assert_eq!(own.status, 403, "{}", own.body);
    assert!(
        message(&own).contains("separation of duties"),
        "{}",
        own.body
    );
    let view = shown(gateway, &id).await;
    assert_eq!(view["status"], "pending");
    assert_eq!(voters(&view).len(), 1, "{view}");
    assert_eq!(gateway.tool_calls("delete_files").await, 0);

    // The list carries the quorum and the votes too.
    let listed = gateway.get("/v1/approvals", Some(DANA_APPROVER)).await;
    let listed = &listed.body["approvals"][0];
    assert_eq!(
        (listed["id"].as_str(), &listed["quorum"]),
        (Some(id.as_str()), &json!(2))
    );
    assert_eq!(voters(listed).len(), 1);

    // A second, distinct approver: the call runs, exactly once.
    let second = answer(gateway, DANA_APPROVER, &id, "approve", None).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body["approved_by"], "dana", "{}", second.body);
    assert_ne!(second.body["status"], "pending", "{}", second.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 1);
    let view = shown(gateway, &id).await;
    assert_eq!(
        voters(&view),
        [
            ("bob".into(), "approve".into(), Some("looks right".into())),
            ("dana".into(), "approve".into(), None)
        ]
    );
    let late = answer(gateway, CAROL_APPROVER, &id, "approve", None).await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 1, "never twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_one_refusal_after_an_approval_refuses_the_call() {
    let setup = start(json!({})).await;
    let gateway = &setup.gateway;
    let id = ask_delete(gateway).await.approval_id();
    let first = answer(gateway, BOB_APPROVER, &id, "approve", None).await;
    assert_eq!(first.body["status"], "pending", "{}", first.body);
    let refused = answer(gateway, DANA_APPROVER, &id, "refuse", Some("not this week")).await;
    assert_eq!(refused.status, 200, "{}", refused.body);
    assert_eq!(refused.body["status"], "refused", "{}", refused.body);
    assert_eq!(
        voters(&refused.body),
        [
            ("bob".into(), "approve".into(), None),
            ("dana".into(), "refuse".into(), Some("not this week".into()))
        ]
    );
    let late = answer(gateway, CAROL_APPROVER, &id, "approve", None).await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 0, "never ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_a_bad_note_or_a_refusal_without_one_when_required_changes_nothing() {
    let setup = start(json!({"refusal_requires_note": true})).await;
    let gateway = &setup.gateway;
    let id = ask_delete(gateway).await.approval_id();
    let hidden = answer(gateway, BOB_APPROVER, &id, "approve", Some("ok\u{7}")).await;
    assert_eq!(hidden.status, 400, "{}", hidden.body);
    assert_eq!(hidden.body["error"]["field"], "note");
    let long = "x".repeat(501);
    let long = answer(gateway, BOB_APPROVER, &id, "approve", Some(&long)).await;
    assert_eq!(long.status, 400, "{}", long.body);
    let bare = answer(gateway, BOB_APPROVER, &id, "refuse", None).await;
    assert_eq!(bare.status, 400, "{}", bare.body);
    assert_eq!(bare.body["error"]["field"], "note");
    assert!(
        message(&bare)
            .contains("a refusal needs a `note` saying why (`approvals.refusal_requires_note`)"),
        "{}",
        bare.body
    );
    let blank = answer(gateway, BOB_APPROVER, &id, "refuse", Some("   ")).await;
    assert_eq!(blank.status, 400, "a blank note is no note: {}", blank.body);
    let view = shown(gateway, &id).await;
    assert_eq!(view["status"], "pending", "{view}");
    assert_eq!(view["votes"], json!([]), "nothing counted");

    // The console's refusal form is held to the same rule.
    let mut bob = Browser::new(gateway);
    bob.sign_in(BOB_APPROVER).await;
    let csrf = bob.get("/console").await.csrf();
    let refused = bob
        .post(
            &format!("/console/approvals/{id}/refuse"),
            &[("csrf", &csrf), ("note", "")],
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(
        refused.body.contains("refusal_requires_note"),
        "{}",
        refused.body
    );
    assert_eq!(shown(gateway, &id).await["status"], "pending");

    let noted = answer(gateway, BOB_APPROVER, &id, "refuse", Some("wrong project")).await;
    assert_eq!(noted.status, 200, "{}", noted.body);
    assert_eq!(noted.body["status"], "refused");
}

/// The console shows `1 of 2 approvals` and who voted, and says a counted approval waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_the_console_card_says_1_of_2_and_who_voted() {
    let setup = start(json!({})).await;
    let gateway = &setup.gateway;
    let id = ask_delete(gateway).await.approval_id();
    let mut bob = Browser::new(gateway);
    bob.sign_in(BOB_APPROVER).await;
    let home = bob.get("/console").await;
    assert!(home.body.contains("0 of 2 approvals"), "{}", home.body);
    // Issue 35 §3: the card shows what the approval is bound to.
    let shown = gateway
        .get(&format!("/v1/approvals/{id}"), Some(BOB_APPROVER))
        .await;
    let digest = shown.body["bound"]["call"].as_str().unwrap_or("<none>");
    assert!(
        home.body.contains("Bound to") && home.body.contains(digest),
        "{}",
        home.body
    );
    let csrf = home.csrf();
    let counted = bob
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf), ("note", "fine by me")],
        )
        .await;
    assert_eq!(counted.status, 200, "{}", counted.body);
    assert!(
        counted
            .body
            .contains("Your approval is counted: 1 of 2 approvals; waiting for another approver."),
        "{}",
        counted.body
    );
    assert!(counted.body.contains("fine by me"), "{}", counted.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 0);
    let again = bob
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    assert!(again.body.contains("already approved"), "{}", again.body);

    let mut dana = Browser::new(gateway);
    dana.sign_in(DANA_APPROVER).await;
    let page = dana.get(&format!("/console/approvals/{id}")).await;
    assert!(page.body.contains("1 of 2 approvals"), "{}", page.body);
    assert!(page.body.contains("bob"), "{}", page.body);
    let csrf = page.csrf();
    let approved = dana
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert!(approved.body.contains("Approved."), "{}", approved.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 1);
}

async fn askgate(args: &[&str]) -> String {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// Notes go in through the CLI and the API and come out of `askgate approvals show` and
/// `askgate log show`: who voted, when, with their note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_votes_and_notes_round_trip_through_the_cli_and_the_log() {
    let setup = start(json!({})).await;
    let (gateway, logs) = (&setup.gateway, &setup.logs);
    let asked = ask_delete(gateway).await;
    let id = asked.approval_id();
    let decision = asked.body["decision_id"].as_str().unwrap().to_string();
    let server = ["--server", gateway.url.as_str()];

    let voted = askgate(
        &[
            &["approvals", "approve", &id, "--note", "first look: fine"][..],
            &server,
            &["--token", BOB_APPROVER],
        ]
        .concat(),
    )
    .await;
    assert!(
        voted.contains("(pending, 1 of 2 approvals; waiting for another approver)"),
        "{voted}"
    );
    let card = askgate(
        &[
            &["approvals", "show", &id][..],
            &server,
            &["--token", DANA_APPROVER],
        ]
        .concat(),
    )
    .await;
    assert!(card.contains("  quorum:   1 of 2 approvals"), "{card}");
    assert!(card.contains("bob approved at "), "{card}");
    assert!(card.contains(": first look: fine"), "{card}");

    let approved = answer(
        gateway,
        DANA_APPROVER,
        &id,
        "approve",
        Some("second pair of eyes"),
    )
    .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 1);

    let log = logs.path().to_str().unwrap();
    let shown = askgate(&["log", "show", &decision, log]).await;
    for expected in [
        r#""action": "voted""#,
        r#""by": "bob""#,
        r#""note": "first look: fine""#,
        r#""action": "approved""#,
        r#""by": "dana""#,
        r#""note": "second pair of eyes""#,
    ] {
        assert!(shown.contains(expected), "{expected} in {shown}");
    }
    // Issue 35 §3: each answer names the call it was given for.
    let digest = asked.body["approval"]["bound"]["call"].as_str().unwrap();
    assert!(shown.contains(&format!(r#""call": "{digest}""#)), "{shown}");
    // `replay` on the shipped policies alone (the two-approver rule gone) shows the ask that
    // changed and who answered it.
    let replayed = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["replay", log])
        .output()
        .await
        .unwrap();
    assert_eq!(
        replayed.status.code(),
        Some(5),
        "changes found: {replayed:?}"
    );
    let replayed = String::from_utf8(replayed.stdout).unwrap();
    for expected in [
        "answered: voted by bob at ",
        ": first look: fine",
        "answered: approved by dana at ",
    ] {
        assert!(replayed.contains(expected), "{expected} in {replayed}");
    }
}

/// The webhook's message says how many approvers the ask needs and carries its quorum and
/// (still empty) votes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_the_webhook_message_carries_the_quorum() {
    let hook = super::webhook::receiver(0).await;
    let setup = start_notifying(json!({}), Some(hook.url.clone())).await;
    let id = ask_delete(&setup.gateway).await.approval_id();
    let mut message = Value::Null;
    for _ in 0..100 {
        if let Some(body) = hook.bodies.lock().unwrap().first() {
            message = body.clone();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(message["approval"]["id"], json!(id), "{message}");
    assert_eq!(message["approval"]["quorum"], 2, "{message}");
    assert_eq!(message["approval"]["votes"], json!([]), "{message}");
    let text = message["text"].as_str().unwrap();
    assert!(
        text.contains("Needs 2 distinct approvers (0 of 2 approvals)."),
        "{text}"
    );
}
