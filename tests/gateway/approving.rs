//! Approvals routed by policy (issue 35 §1), end to end over HTTP: who may answer an approval
//! is a Cedar question against the approving set. Separation of duties is shipped and on by
//! default (an agent token and an approver token configured with one principal are one
//! person), an operator relaxes it, and an admin's `approving/` rule routes one kind of call
//! to one group; each approver's list holds only what they may answer, and an answer they may
//! not give is refused with the policy's reason and changes nothing.

use serde_json::{json, Value};

use super::console::Browser;
use super::harness::{main_session, Gateway, Reply};
use crate::support::documented_rule;

const ALICE_AGENT: &str = "alice-agent-token-0123456789abcdef0123";
const ALICE_APPROVER: &str = "alice-approver-token-0123456789abcdef0123";
const BOB_APPROVER: &str = "bob-approver-token-0123456789abcdef0123";
const DANA_APPROVER: &str = "dana-approver-token-0123456789abcdef0123";
const ERIN_APPROVER: &str = "erin-approver-token-0123456789abcdef0123";

fn callers() -> Value {
    json!([
        {"token": ALICE_AGENT, "role": "agent", "principal": "alice"},
        {"token": ALICE_APPROVER, "role": "approver", "principal": "alice"},
        {"token": BOB_APPROVER, "role": "approver", "principal": "bob"},
        {"token": DANA_APPROVER, "role": "approver", "principal": "dana",
         "groups": ["owners"], "email": "dana@example.com"},
        {"token": ERIN_APPROVER, "role": "approver", "principal": "erin",
         "groups": ["design-leads"], "email": "erin@example.com"},
    ])
}

async fn start(separation: Option<bool>, managed: Option<&std::path::Path>) -> Gateway {
    Gateway::start_with(|raw| {
        raw.callers = Some(serde_json::from_value(callers()).unwrap());
        if let Some(separation) = separation {
            raw.approvals =
                Some(serde_json::from_value(json!({"separation_of_duties": separation})).unwrap());
        }
        if let Some(dir) = managed {
            raw.policies = Some(vec![dir.to_path_buf()]);
        }
    })
    .await
}

/// Alice's agent asks for `operation` in p1 (consent is recorded first by bob).
async fn ask(gateway: &Gateway, operation: &str, arguments: Value) -> String {
    let body = json!({"session": main_session("s-routing"),
                      "input": {"operation": operation, "arguments": arguments}});
    let asked = gateway
        .post("/v1/design/call", Some(ALICE_AGENT), Some(body))
        .await;
    asked.approval_id()
}

async fn consent(gateway: &Gateway) {
    let reply = gateway
        .post("/v1/design/consent", Some(BOB_APPROVER), None)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

async fn answer(gateway: &Gateway, token: &str, id: &str, vote: &str) -> Reply {
    gateway
        .post(&format!("/v1/approvals/{id}/{vote}"), Some(token), None)
        .await
}

/// The ids of the pending approvals `token`'s approver is shown.
async fn listed(gateway: &Gateway, token: &str) -> Vec<String> {
    let reply = gateway.get("/v1/approvals", Some(token)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|view| view["id"].as_str().unwrap().to_string())
        .collect()
}

/// `token`'s `vote` on `id` is refused (403) with `reason`.
async fn refused_with(gateway: &Gateway, token: &str, id: &str, vote: &str, reason: &str) {
    let refused = answer(gateway, token, id, vote).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(message(&refused).contains(reason), "{}", refused.body);
}

fn message(reply: &Reply) -> String {
    reply.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn delete_args() -> Value {
    json!({"project_id": "p1", "paths": ["styles.css"]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn separation_of_duties_refuses_the_person_behind_the_agent_and_another_approver_approves() {
    let gateway = start(None, None).await;
    consent(&gateway).await;
    let id = ask(&gateway, "delete_files", delete_args()).await;

    let own = answer(&gateway, ALICE_APPROVER, &id, "approve").await;
    assert_eq!(own.status, 403, "{}", own.body);
    let text = message(&own);
    assert!(text.contains("separation of duties"), "{text}");
    assert!(text.contains(&id), "{text}");
    let view = gateway
        .get(&format!("/v1/approvals/{id}"), Some(BOB_APPROVER))
        .await;
    assert_eq!(
        view.body["status"], "pending",
        "nothing changed: {}",
        view.body
    );
    assert_eq!(gateway.tool_calls("delete_files").await, 0);

    // Alice is shown it (she may still refuse her own agent's call); bob may approve it.
    assert!(listed(&gateway, ALICE_APPROVER).await.contains(&id));
    assert!(listed(&gateway, BOB_APPROVER).await.contains(&id));
    let approved = answer(&gateway, BOB_APPROVER, &id, "approve").await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(approved.body["approved_by"], "bob", "{}", approved.body);
    // It ran upstream (the sandbox then wants a plan for a delete: the approval's result says so).
    assert_eq!(gateway.tool_calls("delete_files").await, 1);

    // Refusing one's own agent's call stays allowed.
    let second = ask(&gateway, "delete_files", delete_args()).await;
    let refused = answer(&gateway, ALICE_APPROVER, &second, "refuse").await;
    assert_eq!(refused.status, 200, "{}", refused.body);
    assert_eq!(refused.body["status"], "refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn separation_of_duties_false_lets_the_same_person_approve() {
    let gateway = start(Some(false), None).await;
    consent(&gateway).await;
    let id = ask(&gateway, "delete_files", delete_args()).await;
    let own = answer(&gateway, ALICE_APPROVER, &id, "approve").await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert_eq!(own.body["approved_by"], "alice", "{}", own.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 1);
}

/// docs/admins.md's approving examples, as an admin drops them into `approving/` (the brand
/// project's id being the sandbox's `p2`).
fn documented_examples(managed: &std::path::Path) {
    let approving = managed.join("approving");
    std::fs::create_dir(&approving).unwrap();
    let brand = documented_rule("org.brand-grants-by-design-leads");
    assert!(brand.contains("\"p-brand\""), "{brand}");
    std::fs::write(
        approving.join("brand.cedar"),
        brand.replace("\"p-brand\"", "\"p2\""),
    )
    .unwrap();
    std::fs::write(
        approving.join("owners.cedar"),
        documented_rule("org.deletes-by-owners"),
    )
    .unwrap();
}

/// Issue 35: the examples docs/admins.md shows, loaded from the page itself, route grants on
/// the brand project to design leads and destructive deletes to owners; every other answer
/// stays open to any approver, and a refused approve changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_examples_route_brand_grants_to_design_leads_and_deletes_to_owners() {
    let managed = tempfile::tempdir().unwrap();
    documented_examples(managed.path());
    let gateway = start(None, Some(managed.path())).await;
    consent(&gateway).await;
    let write = |project: &str| json!({"project_id": project, "files": [{"path": "new.html", "data": "<p>x</p>"}]});
    let brand = ask(&gateway, "write_files", write("p2")).await;
    let other = ask(&gateway, "write_files", write("p1")).await;
    let delete = ask(&gateway, "delete_files", delete_args()).await;

    // The brand grant: neither bob nor an owner may approve it; a design lead may.
    for token in [BOB_APPROVER, DANA_APPROVER] {
        let refused = answer(&gateway, token, &brand, "approve").await;
        assert_eq!(refused.status, 403, "{}", refused.body);
        assert!(
            message(&refused)
                .contains("grants on the brand project are approved only by design leads"),
            "{}",
            refused.body
        );
    }
    let by_erin = answer(&gateway, ERIN_APPROVER, &brand, "approve").await;
    assert_eq!(by_erin.status, 200, "{}", by_erin.body);
    assert_eq!(by_erin.body["approved_by"], "erin", "{}", by_erin.body);
    // A grant on another project: anyone.
    let by_bob = answer(&gateway, BOB_APPROVER, &other, "approve").await;
    assert_eq!(by_bob.status, 200, "{}", by_bob.body);

    // The delete: bob and a design lead are refused with the owners rule's reason; nothing
    // ran; an owner approves it.
    for token in [BOB_APPROVER, ERIN_APPROVER] {
        let reason = "destructive deletes are approved only by owners";
        refused_with(&gateway, token, &delete, "approve", reason).await;
    }
    assert_eq!(gateway.tool_calls("delete_files").await, 0);
    let by_dana = answer(&gateway, DANA_APPROVER, &delete, "approve").await;
    assert_eq!(by_dana.status, 200, "{}", by_dana.body);
    assert_eq!(by_dana.body["approved_by"], "dana", "{}", by_dana.body);
    assert_eq!(gateway.tool_calls("delete_files").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_who_may_answer_nothing_is_shown_nothing() {
    let managed = tempfile::tempdir().unwrap();
    let approving = managed.path().join("approving");
    std::fs::create_dir(&approving).unwrap();
    std::fs::write(
        approving.join("p1.cedar"),
        r#"@id("org.p1-by-owners")
@reason("project p1 is answered only by owners")
forbid (principal, action in [Action::"approve", Action::"refuse"], resource)
when { resource.project == "p1" && !(principal.groups.contains("owners")) };
"#,
    )
    .unwrap();
    let gateway = start(None, Some(managed.path())).await;
    consent(&gateway).await;
    let id = ask(&gateway, "delete_files", delete_args()).await;
    assert!(listed(&gateway, BOB_APPROVER).await.is_empty());
    assert_eq!(listed(&gateway, DANA_APPROVER).await, vec![id.clone()]);
    refused_with(&gateway, BOB_APPROVER, &id, "refuse", "only by owners").await;
    let view = gateway
        .get(&format!("/v1/approvals/{id}"), Some(DANA_APPROVER))
        .await;
    assert_eq!(view.body["status"], "pending", "{}", view.body);

    // The console: the same list, the same refusal, through its own forms.
    let mut bob = Browser::new(&gateway);
    bob.sign_in(BOB_APPROVER).await;
    let home = bob.get("/console").await;
    assert_eq!(home.status, 200, "{}", home.body);
    assert!(!home.body.contains(&id), "{}", home.body);
    let csrf = home.csrf();
    let approve = bob
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(approve.status, 403, "{}", approve.body);
    assert!(approve.body.contains("only by owners"), "{}", approve.body);
    let mut dana = Browser::new(&gateway);
    dana.sign_in(DANA_APPROVER).await;
    let home = dana.get("/console").await;
    assert!(home.body.contains(&id), "{}", home.body);
    let csrf = home.csrf();
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
