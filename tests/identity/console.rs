//! Approvers sign in to the console with the IdP (issue 34 §4), end to end: the real test
//! provider's code flow (PKCE, `state`, `nonce`) driven through askgate's
//! `/console/oidc/start` and `/console/oidc/callback` over real HTTP, the development login
//! form answered as a person would. The session is the person as the IdP names them
//! (`iss|sub`, their groups and email), lasts no longer than their ID token, decides through
//! the approving policies (separation of duties against their own agent), and a person the
//! IdP does not put in an approver group, a foreign `state`, a lost flow cookie and a replayed
//! code are refused with reasons.

use serde_json::{json, Value};

use super::RESOURCE;
use crate::gateway::console::{Browser, Page};
use crate::gateway::harness::{main_session, Gateway};
use crate::support::oidc::{CodeClient, Op};

const ID_TOKEN_TTL: i64 = 3_600;

/// A service on a port bound first, its console signing approvers in with `op`, whose
/// `console` client sends them back to it.
/// Reads are approved only by design leads: a group the people here have only in their ID
/// token (no `callers` entry names them).
const DESIGN_LEADS: &str = r#"
@id("org.reads-by-design-leads")
@reason("reads are approved only by design leads")
forbid (principal, action == Action::"approve", resource)
when { resource.operation == "read_file" && !principal.groups.contains("design-leads") };
"#;

async fn serving() -> (Op, Gateway, tempfile::TempDir) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let callback = callback_of(&listener);
    let op = Op::start(json!({
        "clients": [
            {"client_id": "agent", "client_secret": "agent-secret"},
            {"client_id": "delegate", "client_secret": "delegate-secret",
             "claims": {"sub": "alice", "act": {"sub": "agent-7", "client_id": "delegate"}}},
            {"client_id": "console", "client_secret": "console-secret",
             "redirect_uris": [callback]}
        ],
        "accounts": {
            "alice": {"groups": ["askgate-approvers", "design-leads"], "email": "alice@acme.test"},
            "bob": {"groups": ["design"], "email": "bob@acme.test"},
            "carol": {"groups": ["askgate-approvers"], "email": "carol@acme.test"}
        },
        "resources": {RESOURCE: {"scope": "askgate:agent askgate:read"}}
    }))
    .await;
    let config = json!({
        "identity": {"issuers": [{
            "issuer": op.issuer,
            "audience": RESOURCE,
            "agent_scopes": ["askgate:agent"],
            "approver_groups": ["askgate-approvers"],
        }]},
        "console": {"oidc": {
            "issuer": op.issuer,
            "client_id": "console",
            "client_secret": "console-secret",
            "redirect_uri": callback,
            "label": "Acme SSO",
        }},
    });
    let managed = tempfile::tempdir().unwrap();
    std::fs::create_dir(managed.path().join("approving")).unwrap();
    std::fs::write(managed.path().join("approving/org.cedar"), DESIGN_LEADS).unwrap();
    let gateway = Gateway::start_on(listener, |raw| {
        raw.identity = Some(serde_json::from_value(config["identity"].clone()).unwrap());
        raw.console = Some(serde_json::from_value(config["console"].clone()).unwrap());
        raw.policies = Some(vec![managed.path().to_path_buf()]);
    })
    .await;
    (op, gateway, managed)
}

fn callback_of(listener: &tokio::net::TcpListener) -> String {
    format!(
        "http://{}/console/oidc/callback",
        listener.local_addr().unwrap()
    )
}

/// The path and query of an absolute URL on the service.
fn on_service(url: &str) -> String {
    let url = reqwest::Url::parse(url).unwrap();
    format!("{}?{}", url.path(), url.query().unwrap_or_default())
}

/// `browser` starts a sign-in; the person `login` signs in at the provider; returns the
/// callback the provider sends the browser to (not yet followed).
async fn at_the_provider(browser: &mut Browser<'_>, op: &Op, login: &str) -> String {
    let started = browser.get("/console/oidc/start").await;
    assert_eq!(started.status, 303, "{}", started.body);
    let authorize = started.location().to_string();
    assert!(authorize.starts_with(&op.issuer), "{authorize}");
    for parameter in [
        "code_challenge_method=S256",
        "nonce=",
        "state=",
        "scope=openid",
    ] {
        assert!(authorize.contains(parameter), "{parameter}: {authorize}");
    }
    let flow = cookie_header(&started, "askgate_console_oidc");
    assert!(
        flow.contains("SameSite=Lax") && flow.contains("HttpOnly"),
        "{flow}"
    );
    on_service(&op.authorize(&authorize, login).await)
}

/// A browser that `login` signed in with the IdP.
async fn signed_in<'a>(gateway: &'a Gateway, op: &Op, login: &str) -> Browser<'a> {
    let mut browser = Browser::new(gateway);
    let callback = at_the_provider(&mut browser, op, login).await;
    let page = browser.get(&callback).await;
    assert_eq!(page.status, 200, "{}", page.body);
    browser
}

/// Approves `id` through its console page.
async fn approve_in(browser: &mut Browser<'_>, id: &str) -> Page {
    let page = browser.get(&format!("/console/approvals/{id}")).await;
    browser
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &page.csrf())],
        )
        .await
}

fn cookie_header(page: &Page, name: &str) -> String {
    page.headers
        .get_all("set-cookie")
        .iter()
        .map(|value| value.to_str().unwrap().to_string())
        .find(|value| value.starts_with(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name} cookie set: {:?}", page.headers))
}

async fn ask(gateway: &Gateway, token: &str, session: &str) -> String {
    let body = json!({"session": main_session(session),
                      "input": {"operation": "read_file",
                                "arguments": {"project_id": "p1", "path": "index.html"}}});
    let asked = gateway
        .post("/v1/design/call", Some(token), Some(body))
        .await;
    asked.approval_id()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_signs_in_with_the_idp_and_decides_as_the_person_it_names() {
    let (op, gateway, _managed) = serving().await;
    let mut browser = Browser::new(&gateway);
    let sign_in = browser.get("/console/sign-in").await;
    assert!(
        sign_in.body.contains("Sign in with Acme SSO"),
        "{}",
        sign_in.body
    );

    let callback = at_the_provider(&mut browser, &op, "alice").await;
    let signed_in = browser.get(&callback).await;
    assert_eq!(signed_in.status, 200, "{}", signed_in.body);
    let alice = format!("{}|alice", op.issuer);
    assert!(signed_in.body.contains(&alice), "{}", signed_in.body);
    assert!(
        signed_in.body.contains("http-equiv=\"refresh\""),
        "{}",
        signed_in.body
    );
    let session = cookie_header(&signed_in, "askgate_console");
    assert!(session.contains("SameSite=Strict"), "{session}");
    let max_age: i64 = session
        .split("Max-Age=")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (ID_TOKEN_TTL - 60..=ID_TOKEN_TTL).contains(&max_age),
        "the session ends with the ID token, not after 8 h: {max_age}"
    );
    assert!(
        !browser
            .cookies
            .iter()
            .any(|(name, _)| name == "askgate_console_oidc"),
        "the flow cookie is cleared"
    );

    // An agent's ask and one made by alice's own agent (the delegate's token names her).
    let agent = op
        .client_credentials("agent", "agent-secret", RESOURCE, "askgate:agent")
        .await;
    let theirs = ask(&gateway, &agent, "s-agent").await;
    let delegate = op
        .client_credentials("delegate", "delegate-secret", RESOURCE, "askgate:agent")
        .await;
    let own = ask(&gateway, &delegate, "s-own").await;

    let home = browser.get("/console").await;
    assert_eq!(home.status, 200, "{}", home.body);
    assert!(home.body.contains(&theirs), "{}", home.body);
    // Her own agent's ask is listed (she may refuse it) but approving it is refused.
    let refused = approve_in(&mut browser, &own).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.body.contains("separation of duties"),
        "{}",
        refused.body
    );

    let approved = approve_in(&mut browser, &theirs).await;
    assert!(
        approved.status < 400,
        "{}: {}",
        approved.status,
        approved.body
    );
    // The asking agent reads its approval: approved by alice as the IdP names her.
    let view: Value = gateway
        .get(&format!("/v1/approvals/{theirs}"), Some(&agent))
        .await
        .body;
    assert_eq!(view["approved_by"], alice.as_str(), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_outside_the_approver_groups_is_refused_and_their_session_never_starts() {
    let (op, gateway, _managed) = serving().await;
    let mut browser = Browser::new(&gateway);
    let callback = at_the_provider(&mut browser, &op, "bob").await;
    let refused = browser.get(&callback).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.body.contains("is not an approver"),
        "{}",
        refused.body
    );
    assert!(!browser
        .cookies
        .iter()
        .any(|(name, _)| name == "askgate_console"));
    let home = browser.get("/console").await;
    assert_eq!(home.status, 303);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_state_a_lost_flow_and_a_replayed_code_are_refused() {
    let (op, gateway, _managed) = serving().await;

    // The callback of alice's sign-in delivered to another browser, which started its own.
    let mut alices = Browser::new(&gateway);
    let callback = at_the_provider(&mut alices, &op, "alice").await;
    let mut other = Browser::new(&gateway);
    let started = other.get("/console/oidc/start").await;
    assert_eq!(started.status, 303);
    let foreign = other.get(&callback).await;
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    assert!(foreign.body.contains("state"), "{}", foreign.body);

    // A browser with no sign-in in flight.
    let mut fresh = Browser::new(&gateway);
    let lost = fresh.get(&callback).await;
    assert_eq!(lost.status, 400, "{}", lost.body);
    assert!(lost.body.contains("sign in again"), "{}", lost.body);

    // The right browser signs in once; the same code again is refused by the provider.
    let flow = alices
        .cookies
        .iter()
        .find(|(name, _)| name == "askgate_console_oidc")
        .cloned()
        .unwrap();
    let first = alices.get(&callback).await;
    assert_eq!(first.status, 200, "{}", first.body);
    alices.cookies.push(flow);
    let again = alices.get(&callback).await;
    assert_eq!(again.status, 502, "{}", again.body);
    assert!(again.body.contains("refused the code"), "{}", again.body);
    assert!(!again.body.contains("console-secret"), "{}", again.body);

    // The provider's own refusal is passed on.
    let mut denied = Browser::new(&gateway);
    let started = denied.get("/console/oidc/start").await;
    let state = reqwest::Url::parse(started.location())
        .unwrap()
        .query_pairs()
        .find(|(key, _)| key == "state")
        .map(|(_, value)| value.into_owned())
        .unwrap();
    let refused = denied
        .get(&format!(
            "/console/oidc/callback?error=access_denied&error_description=the+user+said+no&state={state}"
        ))
        .await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(
        refused.body.contains("the user said no"),
        "{}",
        refused.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_groups_in_the_id_token_decide_who_may_approve() {
    let (op, gateway, _managed) = serving().await;
    let agent = op
        .client_credentials("agent", "agent-secret", RESOURCE, "askgate:agent")
        .await;
    let asked = ask(&gateway, &agent, "s-groups").await;

    // carol is an approver, but not a design lead.
    let mut carol = signed_in(&gateway, &op, "carol").await;
    let refused = approve_in(&mut carol, &asked).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.body.contains("only by design leads"),
        "{}",
        refused.body
    );

    // alice is both, by her ID token alone.
    let mut alice = signed_in(&gateway, &op, "alice").await;
    let approved = approve_in(&mut alice, &asked).await;
    assert!(
        approved.status < 400,
        "{}: {}",
        approved.status,
        approved.body
    );
}

/// The command line approves with the person's own token from the IdP in
/// `ASKGATE_APPROVER_TOKEN` (an access token for askgate, from any OAuth flow the person's
/// tooling runs): the approval names them `iss|sub`, and the groups in the token decide as in
/// the console.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approvals_cli_approves_with_the_persons_idp_token() {
    let (op, gateway, _managed) = serving().await;
    let agent = op
        .client_credentials("agent", "agent-secret", RESOURCE, "askgate:agent")
        .await;
    let asked = ask(&gateway, &agent, "s-cli").await;
    let redirect = format!("{}/console/oidc/callback", gateway.url);
    let client = CodeClient {
        client_id: "console",
        secret: "console-secret",
        redirect_uri: &redirect,
    };
    let approve = |login: &'static str| {
        let (op, client, url, asked) = (&op, &client, gateway.url.clone(), asked.clone());
        async move {
            let token = op
                .sign_in(client, login, RESOURCE, "openid askgate:read")
                .await
                .access_token;
            tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
                .args(["approvals", "approve", &asked, "--server", &url])
                .env_remove("ASKGATE_TOKEN")
                .env_remove("ASKGATE_AGENT_TOKEN")
                .env("ASKGATE_APPROVER_TOKEN", token)
                .output()
                .await
                .expect("askgate runs")
        }
    };
    let carol = approve("carol").await;
    assert!(!carol.status.success(), "{carol:?}");
    assert!(
        String::from_utf8_lossy(&carol.stderr).contains("only by design leads"),
        "{carol:?}"
    );
    let alice = approve("alice").await;
    assert!(alice.status.success(), "{alice:?}");
    let view: Value = gateway
        .get(&format!("/v1/approvals/{asked}"), Some(&agent))
        .await
        .body;
    assert_eq!(
        view["approved_by"],
        format!("{}|alice", op.issuer),
        "{view}"
    );
}
