//! The errors of the Design transport, with the texts of client-facts §6. It must not hold a
//! bearer token: every text is redacted before it leaves the client.

use crate::executor::redact::redact_all;

/// Longest response body quoted in an error, in characters.
pub const BODY_EXCERPT_CHARS: usize = 200;

/// What went wrong talking to Claude Design.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesignError {
    #[error("Claude Design needs consent `{consent}` before this call")]
    NeedsConsent { consent: String },
    #[error("Claude Design needs a project write grant for `{project_id}`")]
    NeedsProjectGrant { project_id: String },
    #[error("{0}")]
    Auth(String),
    #[error("Claude Design returned a text/event-stream response; this client only handles JSON.")]
    EventStream,
    #[error("Claude Design response exceeded the response size cap")]
    TooLarge,
    #[error("Claude Design request timed out")]
    Timeout,
    #[error("Claude Design initialize failed: HTTP {0}")]
    Initialize(u16),
    #[error("Claude Design discovery failed: HTTP {0}")]
    Discovery(u16),
    #[error("Claude Design {operation} failed: HTTP {status} {body}")]
    Http {
        operation: String,
        status: u16,
        body: String,
    },
    #[error("Claude Design request failed: {0}")]
    Transport(String),
}

impl DesignError {
    /// A non-2xx answer, its body redacted first and then cut, so no part of a token survives.
    pub fn http(operation: &str, status: u16, body: &str, tokens: &[&str]) -> Self {
        let excerpt: String = redact_all(body, tokens)
            .chars()
            .take(BODY_EXCERPT_CHARS)
            .collect();
        Self::Http {
            operation: operation.to_owned(),
            status,
            body: excerpt,
        }
    }

    /// The same error with every one of `tokens` redacted from its texts.
    pub fn redacted(self, tokens: &[&str]) -> Self {
        let scrub = |text: String| redact_all(&text, tokens);
        match self {
            Self::NeedsConsent { consent } => Self::NeedsConsent {
                consent: scrub(consent),
            },
            Self::NeedsProjectGrant { project_id } => Self::NeedsProjectGrant {
                project_id: scrub(project_id),
            },
            Self::Auth(text) => Self::Auth(scrub(text)),
            Self::Http {
                operation,
                status,
                body,
            } => Self::Http {
                operation: scrub(operation),
                status,
                body: scrub(body),
            },
            Self::Transport(text) => Self::Transport(scrub(text)),
            other => other,
        }
    }
}
