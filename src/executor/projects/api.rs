//! Owns the HTTP side of one Projects call: the org route and the CCR session route of
//! client-facts §10.2, their headers, the 401 → one refresh → one retry rule and the timeout;
//! it must not interpret results. The route table is `action`'s; the body cap and the
//! `Projects API: … failed (HTTP …)` errors are `answer`'s.

mod action;
mod answer;

use std::sync::{Mutex, PoisonError};

use reqwest::{RequestBuilder, Response};
use serde_json::Value;
use tracing::Instrument;

use super::error::ProjectsError;
use super::{ProjectsConfig, ProjectsRoute, TokenSource};
use answer::read_answer;

pub(crate) use action::Action;

const CCR_PATH: &str = "/v2/ccr-sessions/-/chat-project";
const ANTHROPIC_VERSION: &str = "2023-06-01";
const ANTHROPIC_BETA: &str = "oauth-2025-04-20";
const CLIENT_PLATFORM: &str = "askgate";

/// The upstream of one `execute`: the client, the configuration, the credential, and every
/// token used so far (so errors can redact them all, refreshed ones included).
pub(crate) struct Upstream<'a> {
    pub(crate) client: &'a reqwest::Client,
    pub(crate) config: &'a ProjectsConfig,
    pub(crate) tokens: &'a dyn TokenSource,
    used_tokens: Mutex<Vec<String>>,
}

impl<'a> Upstream<'a> {
    pub(crate) fn new(
        client: &'a reqwest::Client,
        config: &'a ProjectsConfig,
        tokens: &'a dyn TokenSource,
    ) -> Self {
        Upstream {
            client,
            config,
            tokens,
            used_tokens: Mutex::new(Vec::new()),
        }
    }

    /// Every token this call used or could have used, for redaction.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut secrets = self
            .used_tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        secrets.push(self.tokens.access_token());
        secrets.extend(self.tokens.session_token());
        secrets
    }

    fn remember(&self, token: &str) {
        self.used_tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(token.to_owned());
    }

    /// Sends `action` on the configured route and returns the JSON body of a success answer.
    pub(crate) async fn send(&self, action: &Action<'_>) -> Result<Value, ProjectsError> {
        let response = match self.config.route {
            ProjectsRoute::Org => self.send_org(action).await?,
            ProjectsRoute::Session => self.send_session(action).await?,
        };
        read_answer(action, response).await
    }

    async fn send_org(&self, action: &Action<'_>) -> Result<Response, ProjectsError> {
        let token = self.tokens.access_token();
        self.remember(&token);
        let response = self
            .transmit(action, self.org_request(action, &token))
            .await?;
        if response.status() != reqwest::StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        // One refresh and one retry; a second 401 is reported as is.
        let fresh =
            self.tokens
                .refresh(&token)
                .await
                .map_err(|message| ProjectsError::Refresh {
                    action: action.name(),
                    message,
                })?;
        self.remember(&fresh);
        self.transmit(action, self.org_request(action, &fresh))
            .await
    }

    fn org_request(&self, action: &Action<'_>, token: &str) -> RequestBuilder {
        let (method, path, body) = action.org_request();
        let config = self.config;
        let url = format!(
            "{}/api/organizations/{}/projects/{}{path}",
            config.base_url.trim_end_matches('/'),
            config.org_uuid,
            config.project_uuid
        );
        let mut request = self
            .client
            .request(method, url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("anthropic-version", ANTHROPIC_VERSION)
            .header("anthropic-client-platform", CLIENT_PLATFORM)
            .header("x-organization-uuid", &config.org_uuid)
            .header("anthropic-beta", ANTHROPIC_BETA);
        if let Action::Search { query, n } = action {
            request = request.query(&[("query", (*query).to_owned()), ("n", n.to_string())]);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        request
    }

    async fn send_session(&self, action: &Action<'_>) -> Result<Response, ProjectsError> {
        let token = self
            .tokens
            .session_token()
            .ok_or(ProjectsError::NoSessionToken)?;
        self.remember(&token);
        let body = action
            .session_body()
            .ok_or_else(|| ProjectsError::Transport {
                action: action.name(),
                message: "the session route has no update op".to_owned(),
            })?;
        let url = format!("{}{CCR_PATH}", self.config.base_url.trim_end_matches('/'));
        let request = self.client.post(url).bearer_auth(&token).json(&body);
        self.transmit(action, request).await
    }

    async fn transmit(
        &self,
        action: &Action<'_>,
        request: RequestBuilder,
    ) -> Result<Response, ProjectsError> {
        let mut request = request
            .timeout(self.config.timeout)
            .build()
            .map_err(|error| transport_error(action, &error, self.config))?;
        let span = crate::trace::upstream_span(request.method().as_str(), request.url().as_str());
        let sent = async {
            crate::trace::inject_headers(request.headers_mut());
            let response = self.client.execute(request).await;
            if let Ok(response) = &response {
                let status = response.status().as_u16();
                tracing::Span::current().record("http.response.status_code", status);
            }
            response
        };
        sent.instrument(span)
            .await
            .map_err(|error| transport_error(action, &error, self.config))
    }
}

fn transport_error(
    action: &Action<'_>,
    error: &reqwest::Error,
    config: &ProjectsConfig,
) -> ProjectsError {
    let message = if error.is_timeout() {
        format!("timed out after {} ms", config.timeout.as_millis())
    } else {
        error.to_string()
    };
    ProjectsError::Transport {
        action: action.name(),
        message,
    }
}
