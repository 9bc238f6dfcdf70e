//! `/console` over real HTTP: sign-in, cookies, CSRF, security headers, escaping of hostile
//! strings, approving and refusing through the page, an approval already decided, expiry.

use serde_json::json;

use super::harness::{main_session, write_args, Gateway, AGENT, APPROVER};

/// A person's browser without JavaScript: cookies by hand, no redirects followed.
pub(crate) struct Browser<'a> {
    gateway: &'a Gateway,
    http: reqwest::Client,
    pub(crate) cookies: Vec<(String, String)>,
}

pub(crate) struct Page {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Page {
    pub(crate) fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
    }

    /// The value of the first hidden `csrf` field.
    pub(crate) fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let start = self.body.find(marker).expect("a csrf field") + marker.len();
        let end = self.body[start..].find('"').expect("end of the csrf value");
        self.body[start..start + end].to_string()
    }
}

impl<'a> Browser<'a> {
    pub(crate) fn new(gateway: &'a Gateway) -> Self {
        Self::from_address(gateway, std::net::Ipv4Addr::LOCALHOST.into())
    }

    /// A browser whose connections come from `address` (another loopback address is another
    /// peer to the service).
    pub(crate) fn from_address(gateway: &'a Gateway, address: std::net::IpAddr) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .local_address(address)
            .build()
            .unwrap();
        Self {
            gateway,
            http,
            cookies: Vec::new(),
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Page {
        let request = self.http.get(format!("{}{path}", self.gateway.url));
        self.send(request).await
    }

    pub(crate) async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let request = self
            .http
            .post(format!("{}{path}", self.gateway.url))
            .form(form);
        self.send(request).await
    }

    async fn send(&mut self, mut request: reqwest::RequestBuilder) -> Page {
        if !self.cookies.is_empty() {
            let header: Vec<String> = self
                .cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            request = request.header("cookie", header.join("; "));
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        for set in headers.get_all("set-cookie") {
            let text = set.to_str().unwrap();
            let (pair, _) = text.split_once(';').unwrap_or((text, ""));
            let (name, value) = pair.split_once('=').unwrap();
            self.cookies.retain(|(known, _)| known != name);
            if !value.is_empty() {
                self.cookies.push((name.to_string(), value.to_string()));
            }
        }
        let body = response.text().await.unwrap();
        Page {
            status,
            headers,
            body,
        }
    }

    pub(crate) async fn sign_in(&mut self, token: &str) -> Page {
        let form = self.get("/console/sign-in").await;
        let csrf = form.csrf();
        self.post("/console/sign-in", &[("csrf", &csrf), ("token", token)])
            .await
    }
}

pub(super) async fn ask_for_a_delete(gateway: &Gateway, paths: &[&str]) -> String {
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("console"),
            "delete_files",
            json!({"project_id": "p1", "paths": paths}),
        )
        .await;
    asked.approval_id()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_console_response_carries_the_security_headers() {
    let gateway = Gateway::start().await;
    let mut browser = Browser::new(&gateway);
    for path in ["/console/sign-in", "/console", "/console/assets/console.js"] {
        let page = browser.get(path).await;
        let csp = page.headers["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(page.headers["x-frame-options"], "DENY", "{path}");
        assert_eq!(page.headers["referrer-policy"], "no-referrer", "{path}");
    }
    let home = browser.get("/console").await;
    assert_eq!(home.status, 303);
    assert_eq!(home.location(), "/console/sign-in");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_signs_in_into_a_strict_cookie_and_an_agent_cannot() {
    let gateway = Gateway::start().await;
    let mut agent = Browser::new(&gateway);
    let refused = agent.sign_in(AGENT).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("an agent token cannot sign in"));
    assert!(agent
        .cookies
        .iter()
        .all(|(name, _)| name != "askgate_console"));
    let unknown = Browser::new(&gateway)
        .sign_in("not-a-token-anyone-has")
        .await;
    assert_eq!(unknown.status, 401);

    let mut approver = Browser::new(&gateway);
    let signed = approver.sign_in(APPROVER).await;
    assert_eq!(signed.status, 303, "{}", signed.body);
    assert_eq!(signed.location(), "/console");
    let cookie = signed
        .headers
        .get_all("set-cookie")
        .iter()
        .map(|value| value.to_str().unwrap().to_string())
        .find(|value| value.starts_with("askgate_console="))
        .expect("the session cookie");
    for attribute in [
        "HttpOnly",
        "Secure",
        "SameSite=Strict",
        "Path=/console",
        "Max-Age=28800",
    ] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    let home = approver.get("/console").await;
    assert_eq!(home.status, 200);
    assert!(home.body.contains("Nothing is waiting for a decision."));
    let csrf = home.csrf();
    let out = approver.post("/console/sign-out", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, 303);
    assert_eq!(approver.get("/console").await.status, 303);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_without_the_sessions_csrf_token_changes_nothing() {
    let gateway = Gateway::start().await;
    let id = ask_for_a_delete(&gateway, &["old.html"]).await;
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    let forged = approver
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", "forged")],
        )
        .await;
    assert_eq!(forged.status, 403, "{}", forged.body);
    let still = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(still.body["status"], "pending");
    let mut stranger = Browser::new(&gateway);
    let form = stranger.get("/console/sign-in").await;
    let _ = form;
    let no_cookie = stranger
        .post(
            "/console/sign-in",
            &[("csrf", "guess"), ("token", APPROVER)],
        )
        .await;
    assert_eq!(no_cookie.status, 403, "{}", no_cookie.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_paths_are_escaped_and_their_invisible_characters_shown() {
    let gateway = Gateway::start().await;
    let id = ask_for_a_delete(
        &gateway,
        &[
            "<script>alert(1)</script>.html",
            "a\u{202e}lmth.exe",
            "\u{421}LAUDE.html",
        ],
    )
    .await;
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    let page = approver.get(&format!("/console/approvals/{id}")).await;
    assert_eq!(page.status, 200);
    assert!(!page.body.contains("<script>alert"), "{}", page.body);
    assert!(page
        .body
        .contains("&lt;script&gt;alert(1)&lt;/script&gt;.html"));
    assert!(page.body.contains("\\u202e"), "{}", page.body);
    assert!(!page.body.contains('\u{202e}'));
    assert!(page.body.contains("U+0421"));
    assert!(page.body.contains("This call only"));
    assert!(page.body.contains("Deletes (3)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_from_the_page_runs_the_call_and_a_second_approver_sees_it_decided() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("console"),
            "write_files",
            write_args("p1", &["site/a.html"]),
        )
        .await;
    assert_eq!(asked.card_kind(), "grant", "{}", asked.body);
    let id = asked.approval_id();
    let mut first = Browser::new(&gateway);
    first.sign_in(APPROVER).await;
    let list = first.get("/console").await;
    assert!(list.body.contains(&id), "{}", list.body);
    let mut second = Browser::new(&gateway);
    second.sign_in(APPROVER).await;
    let second_csrf = second.get("/console").await.csrf();

    let csrf = list.csrf();
    let approved = first
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert!(approved.body.contains("Approved."));
    assert!(approved.body.contains("completed"));
    assert_eq!(
        gateway.read_file("p1", "site/a.html").await.as_deref(),
        Some("<p>site/a.html</p>")
    );

    let late = second
        .post(
            &format!("/console/approvals/{id}/refuse"),
            &[("csrf", &second_csrf)],
        )
        .await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert!(late.body.contains("already completed"), "{}", late.body);
    assert!(
        late.body.contains("decided by demo-approver"),
        "{}",
        late.body
    );
    let page = second.get(&format!("/console/approvals/{id}")).await;
    assert!(page.body.contains("Decided by"), "{}", page.body);
    let history = second.get("/console/history").await;
    assert!(history.body.contains(&id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusing_from_the_page_never_runs_the_call() {
    let gateway = Gateway::start().await;
    let id = ask_for_a_delete(&gateway, &["old.html"]).await;
    let mut approver = Browser::new(&gateway);
    let csrf = {
        approver.sign_in(APPROVER).await;
        approver.get("/console").await.csrf()
    };
    let refused = approver
        .post(
            &format!("/console/approvals/{id}/refuse"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(refused.status, 200, "{}", refused.body);
    assert!(refused.body.contains("refused"));
    assert_eq!(gateway.tool_calls("delete_files").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_console_session_signs_the_approver_out() {
    let gateway = Gateway::start().await;
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    assert_eq!(approver.get("/console").await.status, 200);
    gateway.clock.advance(time::Duration::hours(8));
    let expired = approver.get("/console").await;
    assert_eq!(expired.status, 303);
    assert_eq!(expired.location(), "/console/sign-in");
    let fragment = approver.get("/console/fragments/pending").await;
    assert_eq!(fragment.status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recent_decisions_are_filtered_and_show_their_cedar_requests() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.log_dir = Some(log_dir)).await;
    gateway.record_consent().await;
    let read = gateway
        .design(
            &main_session("reads"),
            "get_project",
            json!({"project_id": "p1"}),
        )
        .await;
    assert_eq!(read.status, 200, "{}", read.body);
    let read_id = read.body["decision_id"].as_str().unwrap().to_string();
    let asked = gateway
        .design(
            &main_session("deletes"),
            "delete_files",
            json!({"project_id": "p1", "paths": ["old.html"]}),
        )
        .await;
    let ask_id = asked.body["decision_id"].as_str().unwrap().to_string();

    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    let all = approver.get("/console/decisions").await;
    assert_eq!(all.status, 200, "{}", all.body);
    assert!(
        all.body.contains(&read_id) && all.body.contains(&ask_id),
        "{}",
        all.body
    );
    assert!(all.body.contains("Cedar requests"), "{}", all.body);
    assert!(all.body.contains("DesignProject"), "{}", all.body);

    let asks = approver.get("/console/decisions?outcome=ask").await;
    assert!(asks.body.contains(&ask_id) && !asks.body.contains(&read_id));
    let by_session = approver.get("/console/decisions?session=reads").await;
    assert!(by_session.body.contains(&read_id) && !by_session.body.contains(&ask_id));
    let by_policy = approver
        .get("/console/decisions?policy=design.destructive-asks")
        .await;
    assert!(by_policy.body.contains(&ask_id) && !by_policy.body.contains(&read_id));
    let by_project = approver.get("/console/decisions?project=p2").await;
    assert!(by_project.body.contains("No decision matches."));
    let bad = approver.get("/console/decisions?outcome=maybe").await;
    assert_eq!(bad.status, 400, "{}", bad.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_log_the_decisions_page_says_so() {
    let gateway = Gateway::start().await;
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    let page = approver.get("/console/decisions").await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("no decision log is configured"),
        "{}",
        page.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approvers_note_is_logged_with_the_approval_or_refusal() {
    let log = tempfile::tempdir().unwrap();
    let log_dir = log.path().to_path_buf();
    let gateway = Gateway::start_with(|raw| raw.log_dir = Some(log_dir)).await;
    let refused = ask_for_a_delete(&gateway, &["a.html"]).await;
    let approved = ask_for_a_delete(&gateway, &["b.html"]).await;
    let mut approver = Browser::new(&gateway);
    approver.sign_in(APPROVER).await;
    let csrf = approver.get("/console").await.csrf();
    let page = approver
        .post(
            &format!("/console/approvals/{refused}/refuse"),
            &[("csrf", &csrf), ("note", "  not this week  ")],
        )
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    let api = gateway
        .post(
            &format!("/v1/approvals/{approved}/approve"),
            Some(APPROVER),
            Some(json!({"note": "ok for the demo"})),
        )
        .await;
    assert!(api.status == 200 || api.status == 202, "{}", api.body);
    let too_long = gateway
        .post(
            &format!("/v1/approvals/{approved}/refuse"),
            Some(APPROVER),
            Some(json!({"note": "x".repeat(501)})),
        )
        .await;
    assert_eq!(too_long.status, 400, "{}", too_long.body);

    let mut notes = Vec::new();
    for entry in std::fs::read_dir(log.path()).unwrap() {
        let path = entry.unwrap().path();
        if !super::hook_log::is_log_file(&path) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            if record["kind"] == "approval" {
                let note = record["note"].as_str().unwrap_or("").to_string();
                notes.push((record["approval_id"].as_str().unwrap().to_string(), note));
            }
        }
    }
    assert!(
        notes.contains(&(refused.clone(), "not this week".to_string())),
        "{notes:?}"
    );
    assert!(
        notes.contains(&(approved.clone(), "ok for the demo".to_string())),
        "{notes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_late_to_a_refusal_sees_who_refused() {
    let gateway = Gateway::start().await;
    let id = ask_for_a_delete(&gateway, &["old.html"]).await;
    let refused = gateway
        .post(&format!("/v1/approvals/{id}/refuse"), Some(APPROVER), None)
        .await;
    assert_eq!(refused.status, 200, "{}", refused.body);
    assert_eq!(refused.body["approved_by"], "demo-approver");
    let mut late = Browser::new(&gateway);
    late.sign_in(APPROVER).await;
    let csrf = late.get("/console").await.csrf();
    let page = late
        .post(
            &format!("/console/approvals/{id}/approve"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(page.status, 409, "{}", page.body);
    assert!(
        page.body
            .contains("already refused, decided by demo-approver"),
        "{}",
        page.body
    );
}
