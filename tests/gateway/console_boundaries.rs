//! The console concerns of issue 18 §8, over real HTTP: unknown `/console/*` paths carry the
//! security headers, a form without `csrf` is a 403, approvers' notes refuse bidi and invisible
//! characters (API and console alike, naming `note`), the decisions page badges them in its
//! Cedar dumps, and sign-in is throttled per address and token after failures.

use std::net::{IpAddr, Ipv4Addr};

use serde_json::json;

use super::console::{ask_for_a_delete, Browser, Page};
use super::harness::{main_session, Gateway, APPROVER};

fn assert_security_headers(page: &Page, what: &str) {
    let csp = page
        .headers
        .get("content-security-policy")
        .map_or("", |csp| csp.to_str().unwrap());
    assert!(csp.contains("default-src 'none'"), "{what}: {csp}");
    assert_eq!(page.headers["x-frame-options"], "DENY", "{what}");
    assert_eq!(page.headers["referrer-policy"], "no-referrer", "{what}");
    assert_eq!(page.headers["x-content-type-options"], "nosniff", "{what}");
    assert_eq!(page.headers["cache-control"], "no-store", "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_console_paths_carry_the_security_headers() {
    let gateway = Gateway::start().await;
    let mut browser = Browser::new(&gateway);
    for path in [
        "/console/nope",
        "/console/approvals/a/b",
        "/console/assets/evil.js",
        "/console/",
    ] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 404, "{path}: {}", page.body);
        assert_security_headers(&page, path);
        assert!(
            page.body.contains("no console page"),
            "{path}: {}",
            page.body
        );
    }
    let posted = browser.post("/console/nope", &[("csrf", "x")]).await;
    assert_eq!(posted.status, 404);
    assert_security_headers(&posted, "POST /console/nope");
    // A known page asked with the wrong method: 405, with the headers too.
    let wrong = browser.get("/console/sign-out").await;
    assert_eq!(wrong.status, 405);
    assert_security_headers(&wrong, "GET /console/sign-out");
    // Outside /console nothing changes: the API's unknown paths stay as they were.
    let api = gateway.get("/v1/nope", None).await;
    assert_eq!(api.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_without_a_csrf_field_is_403_not_422() {
    let gateway = Gateway::start().await;
    let id = ask_for_a_delete(&gateway, &["old.html"]).await;
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    for action in ["approve", "refuse"] {
        let page = approver
            .post(
                &format!("/console/approvals/{id}/{action}"),
                &[("note", "no csrf")],
            )
            .await;
        assert_eq!(page.status, 403, "{action}: {}", page.body);
        assert!(page.body.contains("CSRF token"), "{}", page.body);
    }
    let still = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(still.body["status"], "pending");
    let out = approver.post("/console/sign-out", &[]).await;
    assert_eq!(out.status, 403, "{}", out.body);
    assert_eq!(
        approver.get("/console").await.status,
        200,
        "still signed in"
    );
    let mut stranger = Browser::new(&gateway);
    stranger.get("/console/sign-in").await;
    let sign_in = stranger
        .post("/console/sign-in", &[("token", APPROVER)])
        .await;
    assert_eq!(sign_in.status, 403, "{}", sign_in.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notes_with_bidi_or_invisible_characters_are_refused_naming_note() {
    let gateway = Gateway::start().await;
    let id = ask_for_a_delete(&gateway, &["old.html"]).await;
    for (note, code) in [
        ("fine \u{202e}enod", "U+202E"),
        ("ok\u{200b}", "U+200B"),
        ("a\u{2066}b", "U+2066"),
        ("tab\there", "U+0009"),
    ] {
        for action in ["approve", "refuse"] {
            let reply = gateway
                .post(
                    &format!("/v1/approvals/{id}/{action}"),
                    Some(APPROVER),
                    Some(json!({ "note": note })),
                )
                .await;
            assert_eq!(reply.status, 400, "{note:?}: {}", reply.body);
            assert_eq!(reply.body["error"]["field"], "note", "{}", reply.body);
            let message = reply.body["error"]["message"].as_str().unwrap();
            assert!(message.contains(code), "{message}");
        }
    }
    let long = gateway
        .post(
            &format!("/v1/approvals/{id}/refuse"),
            Some(APPROVER),
            Some(json!({"note": "x".repeat(501)})),
        )
        .await;
    assert_eq!(long.body["error"]["field"], "note", "{}", long.body);
    // The console refuses the same notes, shows the character as a badge, and decides nothing.
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    let csrf = approver.get("/console").await.csrf();
    let page = approver
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf), ("note", "fine \u{202e}enod")],
        )
        .await;
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("U+202E"), "{}", page.body);
    assert!(!page.body.contains('\u{202e}'), "{}", page.body);
    let still = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(still.body["status"], "pending", "{}", still.body);
    // Visible non-ASCII is a fine note.
    let refused = gateway
        .post(
            &format!("/v1/approvals/{id}/refuse"),
            Some(APPROVER),
            Some(json!({"note": "pas cette semaine — désolé"})),
        )
        .await;
    assert_eq!(refused.status, 200, "{}", refused.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_decisions_page_badges_bidi_characters_in_cedar_dumps() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.log_dir = Some(log_dir)).await;
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("dump"),
            "delete_files",
            json!({"project_id": "p1", "paths": ["a\u{202e}lmth.exe", "b\u{200b}.html"]}),
        )
        .await;
    let decision = asked.body["decision_id"].as_str().unwrap().to_string();
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    let page = approver.get("/console/decisions?session=dump").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains(&decision), "{}", page.body);
    let dump_at = page.body.find("Cedar requests").unwrap();
    let dump = &page.body[dump_at..];
    assert!(dump.contains("lmth.exe"), "the path is in the dump: {dump}");
    for raw in ['\u{202e}', '\u{200b}'] {
        assert!(
            !page.body.contains(raw),
            "{raw:?} rendered raw: {}",
            page.body
        );
    }
    assert!(
        dump.contains("\\u202e") && dump.contains("\\u200b"),
        "{dump}"
    );
}

/// §4 of issue 32 (concern 5): a token mistyped five times from one address waits; the right
/// token from the same address (approvers behind one proxy) still signs in; fifty guesses of any
/// tokens hold everything from the address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_is_throttled_per_address_and_token_after_five_failures() {
    let gateway = Gateway::start().await;
    let proxy = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    let mut typo = Browser::from_address(&gateway, proxy);
    for _ in 0..5 {
        let page = typo.sign_in("mistyped-approver-token").await;
        assert_eq!(page.status, 401, "{}", page.body);
    }
    let held = typo.sign_in("mistyped-approver-token").await;
    assert_eq!(held.status, 429, "{}", held.body);
    assert_eq!(held.headers["retry-after"], "60");
    assert!(
        held.body
            .contains("too many failed sign-ins from your address: try again in 60 s"),
        "{}",
        held.body
    );
    assert!(typo
        .cookies
        .iter()
        .all(|(name, _)| name != "askgate_console"));
    // Another approver behind the same proxy signs in.
    let mut colleague = Browser::from_address(&gateway, proxy);
    assert_eq!(colleague.sign_in(APPROVER).await.status, 303);
    // A guesser: fifty different tokens hold the address, the right token included.
    let guesser_address = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
    let mut guesser = Browser::from_address(&gateway, guesser_address);
    for guess in 0..50 {
        let page = guesser.sign_in(&format!("guess-number-{guess}")).await;
        assert_eq!(page.status, 401, "{}", page.body);
    }
    assert_eq!(guesser.sign_in(APPROVER).await.status, 429);
    // Another address is not held.
    let mut approver = Browser::new(&gateway);
    assert_eq!(approver.sign_in(APPROVER).await.status, 303);
    // A minute later the address may try once; a failure makes it wait again.
    gateway.clock.advance(time::Duration::minutes(1));
    assert_eq!(guesser.sign_in("guess-again").await.status, 401);
    assert_eq!(guesser.sign_in(APPROVER).await.status, 429);
    gateway.clock.advance(time::Duration::minutes(1));
    let signed_in = guesser.sign_in(APPROVER).await;
    assert_eq!(signed_in.status, 303, "{}", signed_in.body);
    assert_eq!(guesser.get("/console").await.status, 200);
}
