//! Owns the HTTP side of one Projects call: the org route and the CCR session route of
//! client-facts §10.2, their headers, the 401 → one refresh → one retry rule, the timeout, the
//! body cap and the `Projects API: … failed (HTTP …)` errors; it must not interpret results.

use std::sync::{Mutex, PoisonError};

use reqwest::{Method, RequestBuilder, Response};
use serde_json::{json, Map, Value};

use super::error::ProjectsError;
use super::{ProjectsConfig, ProjectsRoute, TokenSource};

/// `maxContentLength` of a raw download: ceil(20,971,520 × 4 / 3) + 65,536 bytes.
pub(crate) const RAW_MAX_RESPONSE_BYTES: usize = 28_027_563;
/// How many characters of an error body go into the message.
const ERROR_DETAIL_CHARS: usize = 200;
const CCR_PATH: &str = "/v2/ccr-sessions/-/chat-project";
const ANTHROPIC_VERSION: &str = "2023-06-01";
const ANTHROPIC_BETA: &str = "oauth-2025-04-20";
const CLIENT_PLATFORM: &str = "askgate";

/// One upstream request, named by the action of the route table.
#[derive(Debug, Clone)]
pub(crate) enum Action<'a> {
    Detail,
    ReadDoc {
        doc_uuid: &'a str,
    },
    ReadFileText {
        file_uuid: &'a str,
    },
    RawDownload {
        file_uuid: &'a str,
    },
    CreateDoc {
        file_name: &'a str,
        content: &'a str,
    },
    ReplaceDoc {
        doc_uuid: &'a str,
        content: &'a str,
    },
    DeleteDoc {
        doc_uuid: &'a str,
    },
    Search {
        query: &'a str,
        n: u8,
    },
}

impl Action<'_> {
    /// The action's name in error texts.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Action::Detail => "detail",
            Action::ReadDoc { .. } => "read doc",
            Action::ReadFileText { .. } => "read file text",
            Action::RawDownload { .. } => "raw download",
            Action::CreateDoc { .. } => "create doc",
            Action::ReplaceDoc { .. } => "replace doc",
            Action::DeleteDoc { .. } => "delete doc",
            Action::Search { .. } => "search",
        }
    }

    /// Method, path below the project, and JSON body on the org route.
    fn org_request(&self) -> (Method, String, Option<Value>) {
        match self {
            Action::Detail => (Method::GET, "/detail".to_owned(), None),
            Action::ReadDoc { doc_uuid } => (Method::GET, format!("/docs/{doc_uuid}"), None),
            Action::ReadFileText { file_uuid } => {
                (Method::GET, format!("/files/{file_uuid}/extracted"), None)
            }
            Action::RawDownload { file_uuid } => {
                (Method::GET, format!("/files/{file_uuid}/raw"), None)
            }
            Action::CreateDoc { file_name, content } => (
                Method::POST,
                "/docs".to_owned(),
                Some(json!({"file_name": file_name, "content": content})),
            ),
            Action::ReplaceDoc { doc_uuid, content } => (
                Method::PATCH,
                format!("/docs/{doc_uuid}"),
                Some(json!({"content": content})),
            ),
            Action::DeleteDoc { doc_uuid } => (Method::DELETE, format!("/docs/{doc_uuid}"), None),
            Action::Search { .. } => (Method::GET, "/kb/search".to_owned(), None),
        }
    }

    /// The `{op, …}` body on the session route; `None` for a replace, which has no op there.
    fn session_body(&self) -> Option<Value> {
        let body = match self {
            Action::Detail => json!({"op": "detail"}),
            Action::ReadDoc { doc_uuid } => json!({"op": "read-doc", "doc_uuid": doc_uuid}),
            Action::ReadFileText { file_uuid } => {
                json!({"op": "read-file", "file_uuid": file_uuid})
            }
            Action::RawDownload { file_uuid } => {
                json!({"op": "read-file-raw", "file_uuid": file_uuid})
            }
            Action::CreateDoc { file_name, content } => {
                json!({"op": "write-doc", "file_name": file_name, "content": content})
            }
            Action::DeleteDoc { doc_uuid } => json!({"op": "delete-doc", "doc_uuid": doc_uuid}),
            Action::Search { query, n } => json!({"op": "kb-search", "query": query, "n": n}),
            Action::ReplaceDoc { .. } => return None,
        };
        Some(body)
    }
}

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
        request
            .timeout(self.config.timeout)
            .send()
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

/// Reads the body (capped), then turns a non-success status into the reference error and a
/// success into JSON.
async fn read_answer(action: &Action<'_>, mut response: Response) -> Result<Value, ProjectsError> {
    let status = response.status();
    // One cap for every answer: the largest legitimate one is a raw download.
    let limit = RAW_MAX_RESPONSE_BYTES;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| ProjectsError::Transport {
            action: action.name(),
            message: error.to_string(),
        })?
    {
        if body.len().saturating_add(chunk.len()) > limit {
            return Err(ProjectsError::Transport {
                action: action.name(),
                message: format!("the response is larger than {limit} bytes"),
            });
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        return Err(ProjectsError::Api {
            action: action.name(),
            status: status.as_u16(),
            detail: error_detail(&body),
        });
    }
    serde_json::from_slice(&body).map_err(|error| ProjectsError::InvalidResponse {
        action: action.name(),
        message: error.to_string(),
    })
}

/// `: <first 200 characters of the error string or the body>`, or nothing for an empty body.
fn error_detail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let parsed: Option<Map<String, Value>> = serde_json::from_slice(body).ok();
    let error_string = parsed
        .as_ref()
        .and_then(|object| match object.get("error") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Object(inner)) => inner
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        });
    let detail: String = error_string
        .unwrap_or_else(|| text.trim().to_owned())
        .chars()
        .take(ERROR_DETAIL_CHARS)
        .collect();
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

    use super::*;

    #[test]
    fn error_detail_prefers_the_error_string() {
        assert_eq!(error_detail(br#"{"error":"not_found"}"#), ": not_found");
        assert_eq!(
            error_detail(br#"{"error":{"type":"x","message":"nope"}}"#),
            ": nope"
        );
        assert_eq!(error_detail(b"plain text"), ": plain text");
        assert_eq!(error_detail(b""), "");
    }

    #[test]
    fn error_detail_keeps_200_characters() {
        let body = "é".repeat(201);
        let detail = error_detail(body.as_bytes());
        assert_eq!(detail.chars().count(), 202, "\": \" plus 200 characters");
        let exact = "x".repeat(200);
        assert_eq!(error_detail(exact.as_bytes()), format!(": {exact}"));
    }

    #[test]
    fn session_route_has_no_replace_op() {
        let replace = Action::ReplaceDoc {
            doc_uuid: "d",
            content: "c",
        };
        assert!(replace.session_body().is_none());
        let search = Action::Search { query: "q", n: 3 };
        assert_eq!(
            search.session_body().unwrap(),
            json!({"op": "kb-search", "query": "q", "n": 3})
        );
    }
}
