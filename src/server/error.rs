//! server::error: the one place that maps errors to HTTP statuses and JSON bodies. Internal
//! details are logged, not leaked; upstream text is already token-redacted by the executor.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::call::CallError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    Unauthenticated(&'static str),
    /// A JWT access token the verifier refused; the reason never holds the token.
    #[error("{0}")]
    BadToken(String),
    #[error("{0}")]
    Forbidden(&'static str),
    #[error("{}", .0.message)]
    BadCall(CallError),
    #[error("invalid request body: {0}")]
    BadBody(String),
    /// A session identifier that is refused, named by its field (`session.id`).
    #[error("invalid {0}")]
    BadSession(crate::facts::session::SessionTextError),
    /// A key sent twice in the body; `path` names it (`input.arguments.project_id`) (C5).
    #[error("duplicate key `{key}` in the request body: send each key once")]
    DuplicateKey { key: String, path: String },
    #[error("the request body is larger than the limit of {0} bytes")]
    TooLarge(usize),
    #[error("the request body was not received within {} ms", .0.as_millis())]
    BodyTimeout(std::time::Duration),
    /// A reserved (health-only) connection asked for anything but `/healthz`.
    #[error("too many connections: only /healthz is answered until some close")]
    Busy,
    /// The health listener (`health_listen`) was asked for anything but `/healthz`.
    #[error("this address answers only /healthz")]
    HealthOnly,
    /// An approver's note that cannot be logged as written; its field is `note`.
    #[error("{0}")]
    BadNote(String),
    #[error("no approval `{0}`")]
    UnknownApproval(String),
    #[error("approval `{id}` is already {status}")]
    ApprovalClosed { id: String, status: String },
    /// The approver already approved this approval, which waits for others (issue 35).
    #[error("{0}")]
    AlreadyApproved(String),
    /// The approving policies do not let this approver give this answer (issue 35 §1).
    #[error("you may not {vote} approval `{id}`: {reason}")]
    NotEligible {
        id: String,
        vote: &'static str,
        reason: String,
    },
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    TooManyApprovals(String),
    /// The shared store could not serve what the request needs (named, never its password).
    #[error("{0}")]
    Store(crate::store::StoreError),
    /// A bad query parameter, named by `name`; its field is `query.<name>` (C16).
    #[error("invalid query parameter `{name}`: {message}")]
    BadQuery { name: &'static str, message: String },
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthenticated(_) | Self::BadToken(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) | Self::NotEligible { .. } => StatusCode::FORBIDDEN,
            Self::BadCall(_)
            | Self::BadBody(_)
            | Self::BadSession(_)
            | Self::DuplicateKey { .. }
            | Self::BadQuery { .. }
            | Self::BadNote(_) => StatusCode::BAD_REQUEST,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Self::UnknownApproval(_) | Self::HealthOnly => StatusCode::NOT_FOUND,
            Self::ApprovalClosed { .. } | Self::AlreadyApproved(_) => StatusCode::CONFLICT,
            Self::Unavailable(_) | Self::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::TooManyApprovals(_) => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    fn field(&self) -> Option<String> {
        match self {
            Self::BadCall(error) => Some(format!("call.input.{}", error.field)),
            Self::BadBody(_) | Self::TooLarge(_) | Self::BodyTimeout(_) => Some("body".to_string()),
            Self::DuplicateKey { path, .. } => Some(path.clone()),
            Self::BadSession(error) => Some(error.field().to_string()),
            Self::BadQuery { name, .. } => Some(format!("query.{name}")),
            Self::BadNote(_) => Some("note".to_string()),
            _ => None,
        }
    }
}

/// What a caller is told when the shared store failed: never the store's user, host, port or
/// database, nor the driver's text (P4); the operator reads those in the service's log and in
/// `/healthz`.
pub const STORE_UNAVAILABLE: &str =
    "askgate's shared store is unavailable: try again shortly (the service's log and /healthz say why)";

impl ApiError {
    /// The message a caller reads: a store failure is logged and said without the store's
    /// details (P4); everything else as displayed.
    pub fn public_message(&self) -> String {
        match self {
            Self::Store(error) => {
                tracing::warn!(%error, "a request failed on the shared store");
                STORE_UNAVAILABLE.to_string()
            }
            other => other.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"message": self.public_message(), "field": self.field()}});
        (self.status(), Json(body)).into_response()
    }
}

impl From<crate::store::approvals::ApprovalError> for ApiError {
    fn from(error: crate::store::approvals::ApprovalError) -> Self {
        use crate::store::approvals::ApprovalError;
        match error {
            ApprovalError::Unknown(id) => Self::UnknownApproval(id),
            ApprovalError::Closed { id, status } => Self::ApprovalClosed { id, status },
            already @ ApprovalError::AlreadyApproved { .. } => {
                Self::AlreadyApproved(already.to_string())
            }
            ApprovalError::Store(error) => Self::Store(error),
        }
    }
}
