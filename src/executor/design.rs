//! The Design client: JSON-RPC over `POST /v1/design/mcp` plus the consent and grant routes, for
//! one account (client-facts §4–§7). It runs only after the decision allowed a call and must hold
//! no policy logic.

mod consent;
mod error;
mod grants;
mod identity;
mod session;
mod transport;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_control;

pub use error::DesignError;
pub use grants::{GrantProbe, GrantRecord};

use crate::executor::credentials::Credentials;
use crate::executor::result::{map_result, map_rpc_error, MappedResult};
use reqwest::Method;
use serde_json::{json, Value};
use session::Session;
use std::sync::Arc;
use std::time::Duration;
use transport::{Exchange, Reply, Transport};

const MCP_PATH: &str = "/v1/design/mcp";
/// A project id the server may name in `needs_project_grant` (`SoS`).
const MAX_PROJECT_ID: usize = 78;

/// Where and how to reach Claude Design.
#[derive(Debug, Clone)]
pub struct DesignConfig {
    pub base_url: String,
    /// 60 s in the reference.
    pub timeout: Duration,
    /// 2,080,000 bytes in the reference (16 × 130,000).
    pub max_response_bytes: usize,
    /// Sent as `anthropic-client-platform`, e.g. `claude_code_cli`.
    pub client_platform: String,
}

impl DesignConfig {
    /// The reference limits for `base_url`.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            timeout: Duration::from_secs(60),
            max_response_bytes: 2_080_000,
            client_platform: "claude_code_cli".to_owned(),
        }
    }
}

/// One account's Design client; clones share the session, credentials and in-flight probes.
#[derive(Clone)]
pub struct DesignClient {
    inner: Arc<ClientState>,
}

struct ClientState {
    transport: Transport,
    session: Session,
    grant_probe: grants::ProbeFlight,
}

impl DesignClient {
    pub fn new(
        client: reqwest::Client,
        config: DesignConfig,
        credentials: Arc<Credentials>,
    ) -> Self {
        let transport = Transport {
            http: client,
            base_url: config.base_url,
            timeout: config.timeout,
            max_response_bytes: config.max_response_bytes,
            client_platform: config.client_platform,
            credentials,
        };
        let state = ClientState {
            transport,
            session: Session::default(),
            grant_probe: Default::default(),
        };
        Self {
            inner: Arc::new(state),
        }
    }

    /// Runs one tool; a tool-level or JSON-RPC error is an `is_error` result, not an `Err`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &Value,
    ) -> Result<MappedResult, DesignError> {
        let params = json!({"name": name, "arguments": arguments});
        let (_, answer) = self.scrubbed(self.rpc(name, "tools/call", params)).await?;
        if let Some(error) = answer.get("error") {
            return Ok(map_rpc_error(error));
        }
        Ok(map_result(answer.get("result").unwrap_or(&Value::Null)))
    }

    /// The live catalog as `{"tools": [...]}`.
    pub async fn discover(&self) -> Result<Value, DesignError> {
        let outcome = self
            .scrubbed(self.rpc("discovery", "tools/list", json!({})))
            .await;
        let (status, answer) = match outcome {
            Ok(answered) => answered,
            Err(DesignError::Http { status, .. }) => return Err(DesignError::Discovery(status)),
            Err(other) => return Err(other),
        };
        match answer.pointer("/result/tools") {
            Some(Value::Array(tools)) => Ok(json!({"tools": tools})),
            _ => Err(DesignError::Discovery(status)),
        }
    }

    /// How many `initialize` handshakes this client started.
    pub fn initialize_count(&self) -> u64 {
        self.inner.session.initialize_count()
    }

    /// One JSON-RPC request in the session; a 404 on a held session resets it and retries once.
    async fn rpc(
        &self,
        operation: &str,
        method: &str,
        params: Value,
    ) -> Result<(u16, Value), DesignError> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut retried = false;
        loop {
            let session = self.inner.session.ensure(&self.inner.transport).await?;
            let exchange = Exchange {
                method: Method::POST,
                path: MCP_PATH,
                body: Some(&body),
                session_id: session.id.as_deref(),
                mcp: true,
            };
            let reply = self.inner.transport.exchange(&exchange).await?;
            if reply.status == 404 && session.id.is_some() && !retried {
                self.inner.session.reset(session.epoch).await;
                retried = true;
                continue;
            }
            return interpret(operation, &reply).map(|answer| (reply.status, answer));
        }
    }

    /// One consent or grant request (no session), with the same headers, limits and 401 handling.
    async fn control(
        &self,
        method: Method,
        path: &'static str,
        body: Option<&Value>,
    ) -> Result<Reply, DesignError> {
        let exchange = Exchange {
            method,
            path,
            body,
            session_id: None,
            mcp: false,
        };
        self.scrubbed(self.inner.transport.exchange(&exchange))
            .await
    }

    /// Redacts the tokens in use from any error, whatever produced it.
    async fn scrubbed<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, DesignError>>,
    ) -> Result<T, DesignError> {
        let before = self.inner.transport.credentials.access_token();
        let outcome = work.await;
        let after = self.inner.transport.credentials.access_token();
        outcome.map_err(|error| error.redacted(&[&before, &after]))
    }
}

/// 403 signals first, then any other non-2xx, then the JSON body.
fn interpret(operation: &str, reply: &Reply) -> Result<Value, DesignError> {
    let parsed: Option<Value> = serde_json::from_str(&reply.text).ok();
    if reply.status == 403 {
        if let Some(signal) = parsed.as_ref().and_then(permission_signal) {
            return Err(signal);
        }
    }
    if !(200..300).contains(&reply.status) {
        return Err(DesignError::http(
            operation,
            reply.status,
            &reply.text,
            &[&reply.token],
        ));
    }
    parsed.ok_or_else(|| DesignError::Transport(format!("the `{operation}` answer is not JSON")))
}

/// `needs_consent` with a bit name, or `needs_project_grant` with a well-formed project id.
fn permission_signal(body: &Value) -> Option<DesignError> {
    match body.get("error").and_then(Value::as_str)? {
        "needs_consent" => {
            let consent = body
                .get("consent")
                .and_then(Value::as_str)
                .filter(|bit| is_consent_bit(bit))?;
            Some(DesignError::NeedsConsent {
                consent: consent.to_owned(),
            })
        }
        "needs_project_grant" => {
            let project_id = body
                .get("project_id")
                .and_then(Value::as_str)
                .filter(|id| is_grant_project_id(id))?;
            Some(DesignError::NeedsProjectGrant {
                project_id: project_id.to_owned(),
            })
        }
        _ => None,
    }
}

/// `^[A-Za-z0-9._-]{1,78}$`.
fn is_grant_project_id(id: &str) -> bool {
    (1..=MAX_PROJECT_ID).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A consent bit name is shown to a human, so only short snake_case names are trusted.
fn is_consent_bit(bit: &str) -> bool {
    (1..=64).contains(&bit.len())
        && bit
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
