//! One HTTP exchange with claude.ai for the Design client: the headers, the timeout, the body cap,
//! the SSE refusal, redaction and the one refresh-and-retry on a 401 (client-facts §6). It must
//! not interpret JSON-RPC, sessions or 403 bodies.

use super::error::DesignError;
use crate::executor::credentials::{CredentialError, Credentials};
use crate::executor::redact::redact_all;
use reqwest::header::{HeaderMap, CONTENT_TYPE};
use reqwest::Method;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

/// How long a 401 waits for a fresh token before giving up (`V0f`).
const REFRESH_RACE: Duration = Duration::from_secs(5);
/// Consent and grant calls use the client's default timeout (client-facts §4).
const CONTROL_TIMEOUT: Duration = Duration::from_secs(15);
const MCP_ACCEPT: &str = "application/json, text/event-stream";

/// One request: the MCP endpoint (with its session) or a consent / grant route.
pub struct Exchange<'a> {
    pub method: Method,
    pub path: &'static str,
    pub body: Option<&'a Value>,
    pub session_id: Option<&'a str>,
    pub mcp: bool,
}

/// A response read in full under the cap, its text already redacted.
pub struct Reply {
    pub status: u16,
    pub session_id: Option<String>,
    pub text: String,
    /// The token the successful attempt used, for redacting what the caller builds from it.
    pub token: String,
}

pub struct Transport {
    pub http: reqwest::Client,
    pub base_url: String,
    pub timeout: Duration,
    pub max_response_bytes: usize,
    pub client_platform: String,
    pub credentials: Arc<Credentials>,
}

impl Transport {
    /// Sends `request`; on a 401 refreshes once (raced against 5 s) and retries once.
    pub async fn exchange(&self, request: &Exchange<'_>) -> Result<Reply, DesignError> {
        let token = self.credentials.access_token();
        let reply = self.attempt(request, &token).await?;
        if reply.status != 401 {
            return Ok(reply);
        }
        let fresh = match tokio::time::timeout(REFRESH_RACE, self.credentials.refresh(&token)).await
        {
            Ok(Ok(fresh)) if fresh != token => fresh,
            Ok(Ok(_)) => return Err(auth_error("the credential was not renewed")),
            Ok(Err(error)) => return Err(auth_error(&refresh_failure(&error))),
            Err(_) => return Err(auth_error("the token refresh did not finish within 5 s")),
        };
        let retry = self.attempt(request, &fresh).await?;
        if retry.status == 401 {
            return Err(DesignError::Auth(
                "Claude Design rejected the refreshed credential too (HTTP 401); sign in to claude.ai again".to_owned(),
            ));
        }
        Ok(retry)
    }

    async fn attempt(&self, request: &Exchange<'_>, token: &str) -> Result<Reply, DesignError> {
        let timeout = if request.mcp {
            self.timeout
        } else {
            self.timeout.min(CONTROL_TIMEOUT)
        };
        let url = format!("{}{}", self.base_url.trim_end_matches('/'), request.path);
        let span = crate::trace::upstream_span(request.method.as_str(), &url);
        let exchange = async {
            let response = crate::trace::inject(self.build(request, token))
                .send()
                .await
                .map_err(transport_error)?;
            let status = response.status().as_u16();
            tracing::Span::current().record("http.response.status_code", status);
            let session_id = header_text(response.headers(), "mcp-session-id");
            let body = self.read_capped(response).await?;
            Ok::<_, DesignError>((status, session_id, body))
        };
        let (status, session_id, body) = tokio::time::timeout(timeout, exchange.instrument(span))
            .await
            .map_err(|_| DesignError::Timeout)?
            .map_err(|error| error.redacted(&[token]))?;
        let text = redact_all(&String::from_utf8_lossy(&body), &[token]);
        Ok(Reply {
            status,
            session_id,
            text,
            token: token.to_owned(),
        })
    }

    fn build(&self, request: &Exchange<'_>, token: &str) -> reqwest::RequestBuilder {
        let url = format!("{}{}", self.base_url.trim_end_matches('/'), request.path);
        let accept = if request.mcp {
            MCP_ACCEPT
        } else {
            "application/json"
        };
        let mut builder = self
            .http
            .request(request.method.clone(), url)
            .bearer_auth(token)
            .header(CONTENT_TYPE, "application/json")
            .header("anthropic-version", "2023-06-01")
            .header("anthropic-client-platform", &self.client_platform)
            .header("Accept", accept)
            .header("X-Anthropic-Client", "claude-cli-design-tool");
        if let Some(session_id) = request.session_id {
            builder = builder.header("Mcp-Session-Id", session_id);
        }
        if let Some(body) = request.body {
            builder = builder.body(body.to_string());
        }
        builder
    }

    /// Refuses SSE before reading, and stops reading as soon as the body passes the cap.
    async fn read_capped(&self, mut response: reqwest::Response) -> Result<Vec<u8>, DesignError> {
        let is_event_stream =
            header_text(response.headers(), CONTENT_TYPE.as_str()).is_some_and(|kind| {
                kind.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("text/event-stream")
            });
        if is_event_stream {
            return Err(DesignError::EventStream);
        }
        let declared = response
            .content_length()
            .and_then(|length| usize::try_from(length).ok());
        if declared.is_some_and(|length| length > self.max_response_bytes) {
            return Err(DesignError::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
            if body.len().saturating_add(chunk.len()) > self.max_response_bytes {
                return Err(DesignError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

fn transport_error(error: reqwest::Error) -> DesignError {
    if error.is_timeout() {
        return DesignError::Timeout;
    }
    DesignError::Transport(error.to_string())
}

fn refresh_failure(error: &CredentialError) -> String {
    format!("it could not be refreshed ({error})")
}

fn auth_error(why: &str) -> DesignError {
    DesignError::Auth(format!(
        "Claude Design rejected the credential (HTTP 401) and {why}; sign in to claude.ai again"
    ))
}
