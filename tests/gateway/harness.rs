//! The end-to-end harness: one service plus its sandbox per test (`support::in_process`), a
//! manual clock, and small HTTP helpers for the agent, the approver and the sandbox controls.
//! It only talks HTTP (`support::reply`).

use std::sync::Arc;

use askgate::server::clock::{Clock, ManualClock};
use askgate::server::config::{RawConfig, DEMO_AGENT_TOKEN, DEMO_APPROVER_TOKEN};
use serde_json::{json, Value};

use crate::support::in_process::InProcess;

pub const AGENT: &str = DEMO_AGENT_TOKEN;
pub const APPROVER: &str = DEMO_APPROVER_TOKEN;

pub use crate::support::reply::{session as main_session, Reply};

/// The decision was determined by (among others) the policy `id`.
pub fn assert_policy(reply: &Reply, id: &str) {
    let policies = reply.policies();
    assert!(
        policies.iter().any(|policy| policy == id),
        "expected `{id}` in {policies:?}: {}",
        reply.body
    );
}

/// A running service, its sandbox and its clock; dropped with the test's runtime.
pub struct Gateway {
    pub url: String,
    pub sandbox_url: String,
    pub clock: Arc<ManualClock>,
    pub http: reqwest::Client,
    pub spill: tempfile::TempDir,
    _service: InProcess,
}

pub fn subagent_session(id: &str) -> Value {
    json!({"id": id, "agent": "subagent", "agent_id": "sub-1", "mode": "default", "interactive": true})
}

pub fn non_interactive_session(id: &str) -> Value {
    json!({"id": id, "agent": "main", "mode": "default", "interactive": false})
}

pub fn write_args(project: &str, paths: &[&str]) -> Value {
    let files: Vec<Value> = paths
        .iter()
        .map(|path| json!({"path": path, "data": format!("<p>{path}</p>")}))
        .collect();
    json!({"project_id": project, "files": files})
}

pub fn covered_write_args(project: &str, token: &str, paths: &[&str]) -> Value {
    let mut arguments = write_args(project, paths);
    arguments["plan_token"] = json!(token);
    arguments
}

/// Every text block of a result, joined.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

impl Gateway {
    pub async fn start() -> Gateway {
        Gateway::start_with(|_| {}).await
    }

    /// Like [`Gateway::start`], with `adjust` applied to the raw configuration first (e.g. a
    /// test's own upstream, credentials or working directory).
    pub async fn start_with(adjust: impl FnOnce(&mut RawConfig)) -> Gateway {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        Gateway::start_on(listener, adjust).await
    }

    /// Like [`Gateway::start_with`], on a listener the test bound (it knows the address first,
    /// e.g. to configure a URL that points at the service itself).
    pub async fn start_on(
        listener: tokio::net::TcpListener,
        adjust: impl FnOnce(&mut RawConfig),
    ) -> Gateway {
        let spill = tempfile::tempdir().expect("spill dir");
        let mut raw = RawConfig {
            listen: Some("127.0.0.1:0".into()),
            spill_dir: Some(spill.path().to_path_buf()),
            ..RawConfig::default()
        };
        adjust(&mut raw);
        let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
        let shared: Arc<dyn Clock> = clock.clone();
        let service = InProcess::start(listener, raw, shared).await;
        Gateway {
            url: service.url.clone(),
            sandbox_url: service.upstream_url.clone(),
            clock,
            http: reqwest::Client::new(),
            spill,
            _service: service,
        }
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        url: String,
        token: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Reply {
        crate::support::reply::send(&self.http, method, url, token, body)
            .await
            .expect("request answered")
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: Option<Value>) -> Reply {
        let body = body.map(|body| body.to_string().into_bytes());
        self.send(
            reqwest::Method::POST,
            format!("{}{path}", self.url),
            token,
            body,
        )
        .await
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        self.send(
            reqwest::Method::GET,
            format!("{}{path}", self.url),
            token,
            None,
        )
        .await
    }

    pub async fn design(&self, session: &Value, operation: &str, arguments: Value) -> Reply {
        let body =
            json!({"session": session, "input": {"operation": operation, "arguments": arguments}});
        self.post("/v1/design/call", Some(AGENT), Some(body)).await
    }

    pub async fn projects(&self, session: &Value, input: Value) -> Reply {
        let body = json!({"session": session, "input": input});
        self.post("/v1/projects/call", Some(AGENT), Some(body))
            .await
    }

    pub async fn approve(&self, id: &str) -> Reply {
        self.post(&format!("/v1/approvals/{id}/approve"), Some(APPROVER), None)
            .await
    }

    pub async fn refuse(&self, id: &str) -> Reply {
        self.post(&format!("/v1/approvals/{id}/refuse"), Some(APPROVER), None)
            .await
    }

    /// Approves and returns the completed approval's result.
    pub async fn approved_result(&self, asked: &Reply) -> Value {
        let approved = self.approve(&asked.approval_id()).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
        assert_eq!(approved.body["status"], "completed", "{}", approved.body);
        approved.body["result"].clone()
    }

    /// Approves and returns the result of an approval whose work failed (`failed`: the
    /// follow-up or the call did not succeed, or the re-decision refused it).
    pub async fn failed_result(&self, asked: &Reply) -> Value {
        let approved = self.approve(&asked.approval_id()).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
        assert_eq!(approved.body["status"], "failed", "{}", approved.body);
        approved.body["result"].clone()
    }

    /// The approver records consent through the service (`POST /v1/design/consent`).
    pub async fn record_consent(&self) {
        let reply = self.post("/v1/design/consent", Some(APPROVER), None).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }

    pub async fn stats(&self) -> Value {
        let url = format!("{}/_sandbox/stats", self.sandbox_url);
        self.send(reqwest::Method::GET, url, None, None).await.body
    }

    pub async fn tool_calls(&self, tool: &str) -> u64 {
        self.stats().await["tools_call"][tool].as_u64().unwrap_or(0)
    }

    pub async fn fault(&self, fault: Value) {
        let url = format!("{}/_sandbox/faults", self.sandbox_url);
        let reply = self
            .send(
                reqwest::Method::POST,
                url,
                None,
                Some(fault.to_string().into_bytes()),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
}

/// The sandbox's seed access token (valid until a refresh replaces it).
pub const SANDBOX_TOKEN: &str = "sandbox-access-token";

impl Gateway {
    /// A Design file's data read through the gateway (an allowed read once consent is recorded).
    pub async fn read_file(&self, project: &str, path: &str) -> Option<String> {
        let reply = self
            .design(
                &main_session("reader"),
                "read_file",
                json!({"project_id": project, "path": path}),
            )
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let text = text_of(&reply.body["result"]);
        let file: Value = serde_json::from_str(&text).ok()?;
        file["data"].as_str().map(str::to_string)
    }
}

/// Asks for a plan over `writes` in p1, approves it, and returns the minted token.
pub async fn approved_plan(gateway: &Gateway, session: &Value, writes: &[&str]) -> String {
    let asked = gateway
        .design(
            session,
            "finalize_plan",
            json!({"project_id": "p1", "writes": writes, "scope": "paths"}),
        )
        .await;
    assert_eq!(asked.status, 202, "{}", asked.body);
    assert_eq!(asked.card_kind(), "plan");
    assert_eq!(asked.body["approval"]["card"]["writes"], json!(writes));
    assert_eq!(asked.body["approval"]["card"]["expires_in_seconds"], 900);
    let result = gateway.approved_result(&asked).await;
    assert_eq!(result["isError"], false, "{result}");
    let text = text_of(&result);
    let body: Value = serde_json::from_str(&text).expect("plan JSON");
    body["plan_token"].as_str().expect("plan token").to_string()
}
