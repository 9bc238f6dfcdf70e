//! Approvals and a failing decision log (C15): approving or refusing while the log cannot be
//! written answers 503 and leaves the approval pending, to be answered once the log works;
//! every approval, refusal and expiry is logged (an expiry once, by the sweeper); a vote
//! toward a quorum whose record cannot be written is taken back (issue 35).
//!
//! The log is made to fail under a running service by lowering the real binary's file-size
//! limit to 0 (`prlimit`, with SIGXFSZ ignored): every append then fails with EFBIG, and
//! raising the limit again lets the writer go on in a new file.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use askgate::audit::ApprovalAction;
use serde_json::json;

use super::approval_work::{linked_decisions, records};
use super::harness::{main_session, Gateway, AGENT, APPROVER};

/// `askgate serve --log-dir logs` as a child, with SIGXFSZ ignored; killed when dropped.
struct Serve {
    child: Child,
    url: String,
    http: reqwest::Client,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    async fn start(logs: &Path, work: &Path) -> Serve {
        Serve::start_with(logs, work, &[]).await
    }

    /// [`Serve::start`] with `extra` arguments for `serve`.
    async fn start_with(logs: &Path, work: &Path, extra: &[&str]) -> Serve {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("sh")
            .arg("-c")
            .arg(r#"trap "" XFSZ; listen=$1; logs=$2; shift 2; exec "$0" serve --listen "$listen" --log-dir "$logs" "$@""#)
            .arg(env!("CARGO_BIN_EXE_askgate"))
            .arg(format!("127.0.0.1:{port}"))
            .arg(logs)
            .args(extra)
            .current_dir(work)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("askgate starts");
        let serve = Serve {
            child,
            url: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        while serve
            .http
            .get(format!("{}/healthz", serve.url))
            .send()
            .await
            .is_err()
        {
            assert!(Instant::now() < deadline, "askgate did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        serve
    }

    /// Sets the service's soft file-size limit (`0` or `unlimited`); the hard limit stays
    /// unlimited, so no privilege is needed to raise it again.
    fn file_size_limit(&self, limit: &str) {
        let status = Command::new("prlimit")
            .arg("--pid")
            .arg(self.child.id().to_string())
            .arg(format!("--fsize={limit}:unlimited"))
            .status()
            .expect("prlimit runs");
        assert!(status.success());
    }

    async fn post(
        &self,
        path: &str,
        token: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut request = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or_default())
    }

    /// Posts as the approver until the log takes the write again (a 503 is retried for 5 s).
    async fn until_logged(&self, path: &str) -> (u16, serde_json::Value) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let (status, body) = self.post(path, APPROVER, None).await;
            if status != 503 || std::time::Instant::now() > deadline {
                return (status, body);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    async fn status_of(&self, id: &str) -> String {
        let response = self
            .http
            .get(format!("{}/v1/approvals/{id}", self.url))
            .bearer_auth(APPROVER)
            .send()
            .await
            .unwrap();
        let body: serde_json::Value = response.json().await.unwrap();
        body["status"].as_str().unwrap_or("").to_string()
    }

    async fn ask(&self, path: &str) -> String {
        let body = json!({"session": main_session("s-c15"), "input": {"operation": "read_file",
            "arguments": {"project_id": "p1", "path": path}}});
        let (status, body) = self.post("/v1/design/call", AGENT, Some(body)).await;
        assert_eq!(status, 202, "{body}");
        body["approval"]["id"].as_str().unwrap().to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c15_a_failing_log_on_approve_or_refuse_leaves_the_approval_pending() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let serve = Serve::start(&logs, work.path()).await;
    let approved = serve.ask("index.html").await;
    let refused = serve.ask("styles.css").await;

    serve.file_size_limit("0");
    for (action, id) in [("approve", &approved), ("refuse", &refused)] {
        let (status, body) = serve
            .post(&format!("/v1/approvals/{id}/{action}"), APPROVER, None)
            .await;
        assert_eq!(status, 503, "{action}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("decision log"), "{action}: {message}");
        assert_eq!(serve.status_of(id).await, "pending", "{action}");
    }

    serve.file_size_limit("unlimited");
    // The log retries a failed disk at a paced interval (at most 1 s): until then it still
    // refuses, and each refusal leaves the approval pending.
    let (status, body) = serve
        .until_logged(&format!("/v1/approvals/{approved}/approve"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "completed", "{body}");
    let (status, body) = serve
        .until_logged(&format!("/v1/approvals/{refused}/refuse"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "refused", "{body}");

    let records = records(&logs);
    let refusals = linked_decisions(&records, &refused);
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0].1, ApprovalAction::Refused);
    assert!(linked_decisions(&records, &approved)
        .iter()
        .all(|(_, action)| *action == ApprovalAction::Approved));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c15_every_expiry_is_logged_once_by_the_sweeper() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let log_dir = logs.clone();
    let gateway = Gateway::start_with(move |raw| {
        raw.log_dir = Some(log_dir);
        raw.approvals = Some(serde_json::from_value(json!({"sweep_interval_ms": 20})).unwrap());
    })
    .await;
    let asked = gateway
        .design(
            &main_session("s-expire"),
            "read_file",
            json!({"project_id": "p1", "path": "index.html"}),
        )
        .await;
    let id = asked.approval_id();
    gateway.clock.advance(time::Duration::seconds(300));
    // Reading it applies the expiry; the sweeper logs it, once.
    let view = gateway
        .get(&format!("/v1/approvals/{id}"), Some(APPROVER))
        .await;
    assert_eq!(view.body["status"], "expired", "{}", view.body);
    let deadline = Instant::now() + Duration::from_secs(5);
    let expiries = loop {
        let expiries: Vec<_> = linked_decisions(&records(&logs), &id)
            .into_iter()
            .filter(|(_, action)| *action == ApprovalAction::Expired)
            .collect();
        if !expiries.is_empty() || Instant::now() > deadline {
            break expiries;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let again = linked_decisions(&records(&logs), &id);
    assert_eq!(expiries.len(), 1, "{again:?}");
    assert_eq!(again.len(), 1, "logged once: {again:?}");
}

/// Issue 35: a vote toward a quorum of two while the log cannot be written answers 503 and is
/// not counted; once the log works the same vote counts (`1 of 2`) and is logged as `voted`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_a_vote_whose_record_cannot_be_written_is_not_counted() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let policies = work.path().join("policies");
    std::fs::create_dir(&policies).unwrap();
    std::fs::write(
        policies.join("two.cedar"),
        r#"@id("org.reads-need-two")
@ask("batch")
@quorum("2")
@reason("reads need two approvers here")
forbid (principal, action == Action::"read_file", resource)
unless { context.approvals.contains("batch") };
"#,
    )
    .unwrap();
    let serve = Serve::start_with(
        &logs,
        work.path(),
        &["--policies", policies.to_str().unwrap()],
    )
    .await;
    let id = serve.ask("index.html").await;

    serve.file_size_limit("0");
    let path = format!("/v1/approvals/{id}/approve");
    let (status, body) = serve
        .post(&path, APPROVER, Some(json!({"note": "lost?"})))
        .await;
    assert_eq!(status, 503, "{body}");
    let view: serde_json::Value = serve
        .http
        .get(format!("{}/v1/approvals/{id}", serve.url))
        .bearer_auth(APPROVER)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(view["status"], "pending", "{view}");
    assert_eq!(view["votes"], json!([]), "not counted: {view}");

    serve.file_size_limit("unlimited");
    let (status, body) = serve.until_logged(&path).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "pending", "{body}");
    assert_eq!(body["votes"].as_array().map(Vec::len), Some(1), "{body}");
    let linked = linked_decisions(&records(&logs), &id);
    assert_eq!(linked.len(), 1, "{linked:?}");
    assert_eq!(linked[0].1, ApprovalAction::Voted);
}
