//! What else replicas share through the store: a consent revoke through one replica is applied
//! by every replica before it returns, an approver signed in to the console through one replica
//! is signed in on all, and an approval still reaches a waiting call after the listener's
//! connection was cut (the catch-up after the re-`LISTEN`, and the poll behind it).

use serde_json::{json, Value};

use super::harness::{session, Replica, AGENT, APPROVER};
use super::replicas::fleet;

async fn read_index(replica: &Replica, session_id: &str) -> u16 {
    let body = json!({"session": session(session_id), "input": {"operation": "read_file",
        "arguments": {"project_id": "p1", "path": "index.html"}}});
    replica
        .send(
            reqwest::Method::POST,
            "/v1/design/call",
            Some(AGENT),
            Some(&body),
        )
        .await
        .status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consent_revoke_on_b_is_applied_on_a_before_it_returns() {
    let (_database, _root, a, b) = fleet("consent_revoke", &[]).await;
    for replica in [&a, &b] {
        replica.consent().await;
    }
    assert_eq!(
        read_index(&a, "fleet-consent").await,
        200,
        "consent given: A reads"
    );
    let revoked = b
        .send(
            reqwest::Method::POST,
            "/v1/design/revoke",
            Some(APPROVER),
            None,
        )
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    // A's upstream still holds the consent; only the fleet's invalidation makes A ask.
    assert_eq!(
        read_index(&a, "fleet-consent").await,
        202,
        "A asks for consent again"
    );
    assert_eq!(read_index(&b, "fleet-consent").await, 202, "so does B");
}

/// A console session's cookies, signed in through `replica`.
async fn signed_in(replica: &Replica) -> String {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let form = http
        .get(format!("{}/console/sign-in", replica.url))
        .send()
        .await
        .unwrap();
    let mut cookies: Vec<String> = form
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok()?.split(';').next().map(str::to_string))
        .collect();
    let page = form.text().await.unwrap();
    let marker = "name=\"csrf\" value=\"";
    let start = page.find(marker).expect("a csrf field") + marker.len();
    let csrf = &page[start..start + page[start..].find('"').unwrap()];
    let signed = http
        .post(format!("{}/console/sign-in", replica.url))
        .header("cookie", cookies.join("; "))
        .form(&[("csrf", csrf), ("token", APPROVER)])
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status().as_u16(), 303, "signed in");
    cookies.extend(
        signed
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|value| value.to_str().ok()?.split(';').next().map(str::to_string))
            .filter(|pair| pair.starts_with("askgate_console=")),
    );
    cookies.join("; ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_signed_in_through_a_is_signed_in_on_b() {
    let (database, _root, a, b) = fleet("console_sessions", &[]).await;
    let id = a.ask_delete("fleet-console", "notes.md").await;
    let cookies = signed_in(&a).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let home = http
        .get(format!("{}/console", b.url))
        .header("cookie", &cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(home.status().as_u16(), 200, "B knows the session");
    let text = home.text().await.unwrap();
    assert!(text.contains(&id), "B's console lists A's approval");
    // The store holds a digest of the session token, never the token.
    let token = cookies
        .split("; ")
        .find_map(|pair| pair.strip_prefix("askgate_console="))
        .unwrap()
        .to_string();
    let rows = database
        .client()
        .await
        .query("SELECT token FROM console_sessions", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0].get::<_, String>(0), token);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_reaches_the_waiting_call_after_the_listener_connection_is_cut() {
    let (database, _root, a, b) = fleet("listener_cut", &[]).await;
    let id = a.ask_delete("fleet-cut", "notes.md").await;
    let waiter = {
        let url = a.url.clone();
        let id = id.clone();
        tokio::spawn(async move {
            let reply = reqwest::Client::new()
                .get(format!("{url}/v1/approvals/{id}?wait=30s"))
                .bearer_auth(AGENT)
                .send()
                .await
                .unwrap();
            reply.json::<Value>().await.unwrap()
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // Cut every connection of A's (its listener among them) while the call waits.
    let cut = database
        .client()
        .await
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'askgate a' AND datname = current_database()",
            &[],
        )
        .await
        .unwrap();
    assert!(!cut.is_empty(), "A had connections to cut");
    let approved = b.approve(&id).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    let body = waiter.await.unwrap();
    assert_eq!(body["status"], "completed", "{body}");
    // A is back in the fleet by itself.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let health = a.healthz().await;
        if health.body["store"]["ready"] == true {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "A did not recover: {}",
            health.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

pub(super) async fn design(
    replica: &Replica,
    session_id: &str,
    operation: &str,
    arguments: Value,
) -> super::harness::Reply {
    let body = json!({"session": session(session_id),
                      "input": {"operation": operation, "arguments": arguments}});
    replica
        .send(
            reqwest::Method::POST,
            "/v1/design/call",
            Some(AGENT),
            Some(&body),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_registered_through_a_covers_the_sessions_writes_on_b_until_a_consent_revoke() {
    let (_database, _root, a, b) = fleet("shared_plans", &[]).await;
    for replica in [&a, &b] {
        replica.consent().await;
    }
    let asked = design(
        &a,
        "fleet-plan",
        "finalize_plan",
        json!({"project_id": "p1", "writes": ["index.html"], "scope": "paths"}),
    )
    .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    let id = asked.body["approval"]["id"].as_str().unwrap().to_string();
    let approved = a.approve(&id).await;
    assert_eq!(approved.body["status"], "completed", "{}", approved.body);
    let text = approved.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    let token = serde_json::from_str::<Value>(text).unwrap()["plan_token"]
        .as_str()
        .unwrap()
        .to_string();
    let covered = json!({"project_id": "p1", "plan_token": token,
        "files": [{"path": "index.html", "data": "<p>planned</p>"}]});
    let on_b = design(&b, "fleet-plan", "write_files", covered.clone()).await;
    assert_eq!(on_b.status, 200, "B decides on A's plan: {}", on_b.body);
    assert!(
        on_b.policies().iter().any(|id| id == "plans.covered"),
        "{}",
        on_b.body
    );
    // Another session (same token) is not covered on B either.
    let stranger = design(&b, "fleet-other", "write_files", covered.clone()).await;
    assert_eq!(stranger.status, 202, "{}", stranger.body);
    // A consent revoke through A clears the plan on B as well.
    let revoked = a
        .send(
            reqwest::Method::POST,
            "/v1/design/revoke",
            Some(APPROVER),
            None,
        )
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    let after = design(&b, "fleet-plan", "write_files", covered).await;
    assert_eq!(after.status, 202, "the plan is gone on B: {}", after.body);
}

/// Issue 34 §4 across a fleet: a sign-in with the IdP started through A is finished through B
/// (the flow lives in the browser's cookie, not in a replica), and the session it makes —
/// the person as the IdP names them, groups and email — is read back by A from the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_with_the_idp_started_on_a_finishes_on_b_and_holds_on_a() {
    const PUBLIC: &str = "https://askgate.acme.test/console/oidc/callback";
    const RESOURCE: &str = "https://askgate.acme.test/mcp";
    let op = crate::support::oidc::Op::start(json!({
        "clients": [{"client_id": "console", "client_secret": "console-secret",
                     "redirect_uris": [PUBLIC]}],
        "accounts": {"alice": {"groups": ["askgate-approvers"], "email": "alice@acme.test"}},
        "resources": {RESOURCE: {"scope": "askgate:agent"}}
    }))
    .await;
    let work = tempfile::tempdir().expect("config dir");
    let config = work.path().join("askgate.json");
    let file = json!({
        "callers": [{"token": AGENT, "role": "agent", "principal": "demo-agent"}],
        "identity": {"issuers": [{"issuer": op.issuer, "audience": RESOURCE,
                                  "agent_scopes": ["askgate:agent"],
                                  "approver_groups": ["askgate-approvers"]}]},
        "console": {"oidc": {"issuer": op.issuer, "client_id": "console",
                             "client_secret": "console-secret", "redirect_uri": PUBLIC}},
    });
    std::fs::write(&config, file.to_string()).expect("config written");
    let config = config.display().to_string();
    let (database, _root, a, b) = fleet("console_oidc", &["--config", &config]).await;
    let id = a.ask_delete("fleet-oidc", "notes.md").await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let cookie_of = |response: &reqwest::Response, name: &str| {
        response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|value| value.to_str().ok()?.split(';').next().map(str::to_string))
            .find(|pair| pair.starts_with(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} cookie"))
    };

    let started = http
        .get(format!("{}/console/oidc/start", a.url))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status().as_u16(), 303);
    let flow = cookie_of(&started, "askgate_console_oidc");
    let authorize = started.headers()["location"].to_str().unwrap().to_string();
    let callback = reqwest::Url::parse(&op.authorize(&authorize, "alice").await).unwrap();
    let finished = http
        .get(format!(
            "{}{}?{}",
            b.url,
            callback.path(),
            callback.query().unwrap_or_default()
        ))
        .header("cookie", &flow)
        .send()
        .await
        .unwrap();
    assert_eq!(finished.status().as_u16(), 200, "B finishes A's sign-in");
    let session = cookie_of(&finished, "askgate_console");

    let home = http
        .get(format!("{}/console", a.url))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(home.status().as_u16(), 200, "A knows the session B made");
    let text = home.text().await.unwrap();
    assert!(text.contains(&id), "A's console lists the approval");
    assert!(text.contains(&format!("{}|alice", op.issuer)), "{text}");
    let row = database
        .client()
        .await
        .query_one("SELECT groups, email FROM console_sessions", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, Value>(0), json!(["askgate-approvers"]));
    assert_eq!(row.get::<_, String>(1), "alice@acme.test");
}
