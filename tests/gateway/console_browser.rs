//! The approval console in a real headless Chromium (issue 11): an approver signs in, an
//! agent's call asks, the card appears without a reload and names the exact paths and scope,
//! the approver approves, the agent's held call completes and the card moves to history; a
//! second browser refusing the same approval sees it already decided; an agent token cannot
//! sign in; the page fits a phone. An approval that needs two approvers (issue 35) shows
//! `1 of 2 approvals` and who voted after the first, and runs after the second. Screenshots of the list and of one card are written for
//! `snapshots/console/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use fantoccini::{Client, Locator};

use super::harness::{main_session, write_args, Gateway, AGENT, APPROVER};
use crate::support::browser::Driver;

async fn sign_in(browser: &Client, base: &str, token: &str) {
    browser
        .goto(&format!("{base}/console/sign-in"))
        .await
        .unwrap();
    let field = browser.find(Locator::Css("#token")).await.unwrap();
    field.send_keys(token).await.unwrap();
    click(browser, "form.sign-in button", "#pending, p.error").await;
}

/// Clicks the first `css` (again if the in-place refresh replaced it) and waits for `then`.
async fn click(browser: &Client, css: &str, then: &str) {
    for _ in 0..10 {
        let clicked = match browser.find(Locator::Css(css)).await {
            Ok(element) => element.click().await.is_ok(),
            Err(_) => false,
        };
        if clicked {
            browser
                .wait()
                .at_most(Duration::from_secs(15))
                .for_element(Locator::Css(then))
                .await
                .unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("could not click {css}");
}

/// The page's main text, read again if the page changed under the read.
async fn text(browser: &Client) -> String {
    for _ in 0..10 {
        if let Ok(main) = browser.find(Locator::Css("main")).await {
            if let Ok(text) = main.text().await {
                return text;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("no page text");
}

/// Where screenshots go: `snapshots/console/` when asked to refresh them
/// (`ASKGATE_SCREENSHOTS=update`) or when they are missing, else `target/console-screenshots`.
fn screenshot_path(name: &str) -> PathBuf {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots/console");
    let refresh = std::env::var("ASKGATE_SCREENSHOTS").is_ok_and(|value| value == "update");
    let dir = if refresh || !committed.join(name).exists() {
        committed
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-screenshots")
    };
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn save_png(name: &str, png: &[u8]) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name} is a PNG");
    assert!(
        png.len() > 2_000,
        "{name} holds a real picture ({} bytes)",
        png.len()
    );
    std::fs::write(screenshot_path(name), png).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_decides_an_agents_call_in_a_real_browser() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let driver = Driver::start().await;
    let profiles = tempfile::tempdir().unwrap();
    let first = driver
        .browser(&profiles.path().join("first"), 1100, 900)
        .await;
    let base = gateway.url.clone();

    sign_in(&first, &base, APPROVER).await;
    assert!(text(&first)
        .await
        .contains("Nothing is waiting for a decision."));

    let asked = gateway
        .design(
            &main_session("browser"),
            "write_files",
            write_args("p1", &["site/index.html", "site/style.css"]),
        )
        .await;
    assert_eq!(asked.card_kind(), "grant", "{}", asked.body);
    let id = asked.approval_id();
    // The agent holds its call until a person decides.
    let waiting = {
        let http = gateway.http.clone();
        let url = format!("{base}/v1/approvals/{id}?wait=60s");
        tokio::spawn(async move {
            let reply = http.get(url).bearer_auth(AGENT).send().await.unwrap();
            reply.json::<serde_json::Value>().await.unwrap()
        })
    };

    // The card appears without a reload (the page refreshes its list in place).
    let card = first
        .wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(&format!("[data-approval='{id}']")))
        .await
        .unwrap();
    let card_text = card.text().await.unwrap();
    for expected in [
        "Project write grant",
        "site/index.html",
        "site/style.css",
        "any ordinary file of this project",
        "Project (verified by the server)",
        "write_files",
    ] {
        assert!(card_text.contains(expected), "{expected} in {card_text}");
    }
    save_png("pending.png", &first.screenshot().await.unwrap());
    save_png("card.png", &card.screenshot().await.unwrap());

    // A second approver opens the same approval before it is decided.
    let second = driver
        .browser(&profiles.path().join("second"), 1100, 900)
        .await;
    sign_in(&second, &base, APPROVER).await;
    second
        .goto(&format!("{base}/console/approvals/{id}"))
        .await
        .unwrap();

    click(&first, "section.approval button.approve", "p.notice").await;
    let done = text(&first).await;
    assert!(done.contains("Approved."), "{done}");
    // The status badge is upper-cased by the stylesheet, as a person sees it.
    assert!(done.contains("COMPLETED"), "{done}");

    let held = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held["status"], "completed", "{held}");
    assert_eq!(held["result"]["isError"], false, "{held}");
    assert_eq!(
        gateway.read_file("p1", "site/index.html").await.as_deref(),
        Some("<p>site/index.html</p>")
    );

    first
        .goto(&format!("{base}/console/history"))
        .await
        .unwrap();
    assert!(text(&first).await.contains(&id));
    first.goto(&format!("{base}/console")).await.unwrap();
    assert!(!text(&first).await.contains(&id));

    // The second approver's page is stale: refusing now says who already decided.
    click(&second, "button.refuse", "p.notice").await;
    let late = text(&second).await;
    assert!(late.contains("already completed"), "{late}");
    assert!(late.contains("decided by demo-approver"), "{late}");

    // An agent token cannot sign in.
    let agent = driver
        .browser(&profiles.path().join("agent"), 390, 844)
        .await;
    sign_in(&agent, &base, AGENT).await;
    let refused = text(&agent).await;
    assert!(
        refused.contains("an agent token cannot sign in"),
        "{refused}"
    );

    // A phone-width page does not scroll sideways.
    sign_in(&agent, &base, APPROVER).await;
    let overflow = agent
        .execute(
            "return document.documentElement.scrollWidth - window.innerWidth;",
            vec![],
        )
        .await
        .unwrap();
    assert!(overflow.as_i64().unwrap_or(1) <= 0, "{overflow}");

    for browser in [first, second, agent] {
        browser.close().await.unwrap();
    }
}

/// Issue 35: with `@quorum("2")`, the first approver's click counts (`1 of 2 approvals`, their
/// vote on the card, the call not run); the asking agent's own person is refused (separation
/// of duties) and counts nothing; a second person's click runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_the_console_card_shows_1_of_2_until_a_second_person_approves() {
    use super::quorum::{ask_delete, start, ALICE_APPROVER, BOB_APPROVER, DANA_APPROVER};
    let setup = start(serde_json::json!({})).await;
    let gateway = &setup.gateway;
    let driver = Driver::start().await;
    let profiles = tempfile::tempdir().unwrap();
    let bob = driver
        .browser(&profiles.path().join("bob"), 1100, 900)
        .await;
    let base = gateway.url.clone();
    sign_in(&bob, &base, BOB_APPROVER).await;
    let id = ask_delete(gateway).await.approval_id();
    let card = bob
        .wait()
        .at_most(Duration::from_secs(15))
        .for_element(Locator::Css(&format!("[data-approval='{id}']")))
        .await
        .unwrap();
    let card_text = card.text().await.unwrap();
    assert!(card_text.contains("0 of 2 approvals"), "{card_text}");

    click(&bob, "section.approval button.approve", "p.notice").await;
    let counted = text(&bob).await;
    assert!(
        counted
            .contains("Your approval is counted: 1 of 2 approvals; waiting for another approver."),
        "{counted}"
    );
    assert!(counted.contains("bob approved at"), "{counted}");
    assert_eq!(gateway.tool_calls("delete_files").await, 0, "held");

    // Alice, the person behind the asking agent, may not approve it: the console refuses her
    // click with the policy's reason and counts nothing.
    let alice = driver
        .browser(&profiles.path().join("alice"), 1100, 900)
        .await;
    sign_in(&alice, &base, ALICE_APPROVER).await;
    alice
        .goto(&format!("{base}/console/approvals/{id}"))
        .await
        .unwrap();
    click(&alice, "button.approve", "p.error").await;
    let refused = text(&alice).await;
    assert!(refused.contains("separation of duties"), "{refused}");
    alice
        .goto(&format!("{base}/console/approvals/{id}"))
        .await
        .unwrap();
    let still = text(&alice).await;
    assert!(still.contains("1 of 2 approvals"), "not counted: {still}");
    alice.close().await.unwrap();

    let dana = driver
        .browser(&profiles.path().join("dana"), 1100, 900)
        .await;
    sign_in(&dana, &base, DANA_APPROVER).await;
    dana.goto(&format!("{base}/console/approvals/{id}"))
        .await
        .unwrap();
    let page = text(&dana).await;
    assert!(page.contains("1 of 2 approvals"), "{page}");
    click(&dana, "button.approve", "p.notice").await;
    let done = text(&dana).await;
    assert!(done.contains("Approved."), "{done}");
    assert!(done.contains("2 of 2 approvals"), "{done}");
    assert_eq!(gateway.tool_calls("delete_files").await, 1);
    for browser in [bob, dana] {
        browser.close().await.unwrap();
    }
}
