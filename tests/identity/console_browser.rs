//! Signing in to the console with the IdP in a real headless Chromium (issue 34 §4): the
//! person clicks *Sign in with …*, signs in on the provider's own login and consent pages, and
//! lands on the pending approvals signed in as the IdP names them. askgate is opened as
//! `localhost` and the provider as `127.0.0.1`, so the provider's redirect back is a
//! cross-site navigation, as in production: the flow cookie (`SameSite=Lax`) must come back
//! with it, and the session cookie (`SameSite=Strict`) must be sent to the console after it.

use std::time::Duration;

use fantoccini::{Client, Locator};
use serde_json::json;

use super::RESOURCE;
use crate::gateway::harness::Gateway;
use crate::support::browser::Driver;
use crate::support::oidc::Op;

/// Clicks the first `css` and waits for `then`.
async fn click(browser: &Client, css: &str, then: &str) {
    let url = browser.current_url().await.unwrap();
    browser
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|_| panic!("no {css} on {url}"))
        .click()
        .await
        .unwrap();
    browser
        .wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(then))
        .await
        .unwrap_or_else(|_| panic!("no {then} after clicking {css}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_signs_in_with_the_idp_in_a_real_browser() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://localhost:{}", listener.local_addr().unwrap().port());
    let callback = format!("{base}/console/oidc/callback");
    let op = Op::start(json!({
        "clients": [{"client_id": "console", "client_secret": "console-secret",
                     "redirect_uris": [callback]}],
        "accounts": {"alice": {"groups": ["askgate-approvers"], "email": "alice@acme.test"}},
        "resources": {RESOURCE: {"scope": "askgate:agent"}}
    }))
    .await;
    let identity = json!({"issuers": [{"issuer": op.issuer, "audience": RESOURCE,
                                       "agent_scopes": ["askgate:agent"],
                                       "approver_groups": ["askgate-approvers"]}]});
    let console = json!({"oidc": {"issuer": op.issuer, "client_id": "console",
                                  "client_secret": "console-secret",
                                  "redirect_uri": callback, "label": "Acme SSO"}});
    let _gateway = Gateway::start_on(listener, |raw| {
        raw.identity = Some(serde_json::from_value(identity).unwrap());
        raw.console = Some(serde_json::from_value(console).unwrap());
    })
    .await;
    let driver = Driver::start().await;
    let profiles = tempfile::tempdir().unwrap();
    let browser = driver
        .browser(&profiles.path().join("alice"), 1100, 900)
        .await;

    browser
        .goto(&format!("{base}/console/sign-in"))
        .await
        .unwrap();
    // The provider's development login page, then its consent page.
    click(&browser, "a.button", "input[name=login]").await;
    browser
        .find(Locator::Css("input[name=login]"))
        .await
        .unwrap()
        .send_keys("alice")
        .await
        .unwrap();
    browser
        .find(Locator::Css("input[name=password]"))
        .await
        .unwrap()
        .send_keys("any")
        .await
        .unwrap();
    click(&browser, "button[type=submit]", "button[type=submit]").await;
    click(&browser, "button[type=submit]", "#pending").await;

    let url = browser.current_url().await.unwrap();
    assert_eq!(url.as_str(), format!("{base}/console"));
    let header = browser
        .find(Locator::Css("span.who"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(header.contains(&format!("{}|alice", op.issuer)), "{header}");
    let cookies = browser.get_all_cookies().await.unwrap();
    assert!(
        !cookies
            .iter()
            .any(|cookie| cookie.name() == "askgate_console_oidc"),
        "the flow cookie is gone"
    );
    browser.close().await.unwrap();
}
