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
    #[error("{0}")]
    Forbidden(&'static str),
    #[error("{}", .0.message)]
    BadCall(CallError),
    #[error("invalid request body: {0}")]
    BadBody(String),
    #[error("no approval `{0}`")]
    UnknownApproval(String),
    #[error("approval `{id}` is already {status}")]
    ApprovalClosed { id: String, status: String },
    #[error("{0}")]
    Unavailable(String),
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::BadCall(_) | Self::BadBody(_) => StatusCode::BAD_REQUEST,
            Self::UnknownApproval(_) => StatusCode::NOT_FOUND,
            Self::ApprovalClosed { .. } => StatusCode::CONFLICT,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn field(&self) -> Option<String> {
        match self {
            Self::BadCall(error) => Some(format!("call.input.{}", error.field)),
            Self::BadBody(_) => Some("body".to_string()),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"message": self.to_string(), "field": self.field()}});
        (self.status(), Json(body)).into_response()
    }
}
