//! Approved plans end to end (issue 3): finalize_plan → approve → registered → covered writes
//! run without asking until 15 minutes pass; sharing changes and revoke clear plans and grants.

use serde_json::{json, Value};
use time::Duration;

use super::harness::{
    approved_plan, assert_policy, covered_write_args, main_session, write_args, Gateway,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_plan_covers_its_writes_without_asking_until_fifteen_minutes_pass() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-plan");
    let token = approved_plan(&gateway, &session, &["index.html", "about.html"]).await;
    assert!(token.starts_with("pt_"), "{token}");
    assert_eq!(gateway.tool_calls("finalize_plan").await, 1);

    let covered = covered_write_args("p1", &token, &["./about.html"]);
    let allowed = gateway
        .design(&session, "write_files", covered.clone())
        .await;
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    assert_policy(&allowed, "plans.covered");
    assert_eq!(allowed.body["result"]["isError"], false, "{}", allowed.body);
    assert_eq!(gateway.tool_calls("write_files").await, 1);

    // A target outside the plan asks, even with the token.
    let outside = covered_write_args("p1", &token, &["other.html"]);
    let asked = gateway.design(&session, "write_files", outside).await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_policy(&asked, "plans.uncovered-asks");

    // Another session does not share the plan.
    let stranger = gateway
        .design(&main_session("s-other"), "write_files", covered.clone())
        .await;
    assert_eq!(stranger.status, 202, "{}", stranger.body);

    gateway.clock.advance(Duration::minutes(15));
    let expired = gateway.design(&session, "write_files", covered).await;
    assert_eq!(expired.status, 202, "{}", expired.body);
    assert_policy(&expired, "plans.uncovered-asks");
    assert_eq!(gateway.tool_calls("write_files").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sharing_change_clears_plans_and_forces_a_new_grant_card() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-sharing");
    let token = approved_plan(&gateway, &session, &["index.html"]).await;
    let grant = gateway
        .design(&session, "write_files", write_args("p1", &["g.html"]))
        .await;
    assert_eq!(grant.card_kind(), "grant", "{}", grant.body);
    gateway.approved_result(&grant).await;
    let held = gateway
        .design(&session, "write_files", write_args("p1", &["g2.html"]))
        .await;
    assert_policy(&held, "grants.held");

    let sharing = gateway
        .design(
            &session,
            "update_sharing",
            json!({"project_id": "p1", "scope": "org"}),
        )
        .await;
    assert_eq!(sharing.status, 202, "{}", sharing.body);
    let result = gateway.approved_result(&sharing).await;
    assert_eq!(result["isError"], false, "{result}");

    let covered = covered_write_args("p1", &token, &["index.html"]);
    let asked = gateway.design(&session, "write_files", covered).await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_policy(&asked, "plans.uncovered-asks");

    let recard = gateway
        .design(&session, "write_files", write_args("p1", &["g3.html"]))
        .await;
    assert_eq!(recard.status, 202, "{}", recard.body);
    assert_eq!(recard.card_kind(), "grant");
    // The new card shows the new sharing scope.
    assert_eq!(recard.body["approval"]["card"]["sharing_scope"], "org");

    // Approving the new card re-approves the project: the server still holds the grant, so
    // the write runs at once (no second POST), and the next write needs no card.
    let result = gateway.approved_result(&recard).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(gateway.stats().await["grant_posts"], 1);
    let trusted = gateway
        .design(&session, "write_files", write_args("p1", &["g4.html"]))
        .await;
    assert_eq!(trusted.status, 200, "{}", trusted.body);
    assert_policy(&trusted, "grants.held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_consent_card_of_a_finalize_plan_promises_no_plan_and_registers_none() {
    // Regression (found by the gateway tests): the consent card used to carry the plan note
    // ("... for up to 15 minutes") although approving consent approves no paths.
    let gateway = Gateway::start().await;
    let session = main_session("s-consent-plan");
    let asked = gateway
        .design(
            &session,
            "finalize_plan",
            json!({"project_id": "p1", "writes": ["index.html"]}),
        )
        .await;
    assert_eq!(asked.card_kind(), "consent", "{}", asked.body);
    let message = asked.body["approval"]["card"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(
        message.contains("its paths are not pre-approved"),
        "{message}"
    );
    assert!(!message.contains("without another prompt"), "{message}");
    let result = gateway.approved_result(&asked).await;
    let text = super::harness::text_of(&result);
    let body: Value = serde_json::from_str(&text).expect("plan JSON");
    let token = body["plan_token"].as_str().expect("plan token");
    let covered = covered_write_args("p1", token, &["index.html"]);
    let write = gateway.design(&session, "write_files", covered).await;
    assert_eq!(
        write.status, 202,
        "no plan was approved, so the write asks: {}",
        write.body
    );
    assert_policy(&write, "plans.uncovered-asks");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoke_clears_plans_and_verified_grants() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let session = main_session("s-revoke");
    let token = approved_plan(&gateway, &session, &["index.html"]).await;
    let grant = gateway
        .design(&session, "write_files", write_args("p1", &["g.html"]))
        .await;
    gateway.approved_result(&grant).await;

    let revoked = gateway
        .post("/v1/design/revoke", Some(super::harness::APPROVER), None)
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    assert_eq!(revoked.body["granted"], false);

    // Consent is gone: both writes ask to connect again.
    let covered = covered_write_args("p1", &token, &["index.html"]);
    let asked = gateway
        .design(&session, "write_files", covered.clone())
        .await;
    assert_eq!(asked.card_kind(), "consent", "{}", asked.body);

    // With consent back, the plan stays forgotten and the grant needs its card again.
    gateway.record_consent().await;
    let asked = gateway.design(&session, "write_files", covered).await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_policy(&asked, "plans.uncovered-asks");
    let card = gateway
        .design(&session, "write_files", write_args("p1", &["h.html"]))
        .await;
    assert_eq!(card.status, 202, "{}", card.body);
    assert_eq!(card.card_kind(), "grant");
    assert_eq!(gateway.tool_calls("write_files").await, 2);
}
