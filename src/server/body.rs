//! server::body: the request body extractor of the JSON routes. It owns the size limit (a
//! JSON 413 in the documented error format, C1) and the body-read deadline (a JSON 408, C10);
//! it must not parse the body (that is `wire`'s).

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use futures_util::StreamExt;

use super::config::HttpLimits;
use super::error::ApiError;

/// The body limits, put on every request by the router's extension layer (`server::run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    pub max_bytes: usize,
    pub read_timeout: Duration,
}

impl From<&HttpLimits> for BodyLimits {
    fn from(limits: &HttpLimits) -> Self {
        Self {
            max_bytes: limits.max_body_bytes,
            read_timeout: limits.body_read_timeout,
        }
    }
}

impl Default for BodyLimits {
    fn default() -> Self {
        Self::from(&HttpLimits::default())
    }
}

/// A whole request body, read within its limits.
#[derive(Debug, Clone)]
pub struct RequestBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RequestBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, ApiError> {
        let limits = limits_of(&request);
        let declared = request
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        if declared.is_some_and(|length| length > limits.max_bytes as u64) {
            return Err(ApiError::TooLarge(limits.max_bytes));
        }
        read_within(request.into_body(), limits)
            .await
            .map(RequestBody)
    }
}

/// The limits a request carries (the router's extension layer puts them on every request).
pub fn limits_of(request: &Request) -> BodyLimits {
    request
        .extensions()
        .get::<BodyLimits>()
        .copied()
        .unwrap_or_default()
}

/// Reads `body` whole within `limits`: its size (413) and its read deadline (408). `/mcp` reads
/// its bodies through here too (P3), before the fast path or rmcp's service sees them.
pub async fn read_within(body: axum::body::Body, limits: BodyLimits) -> Result<Bytes, ApiError> {
    let read = collect(body, limits.max_bytes);
    match tokio::time::timeout(limits.read_timeout, read).await {
        Ok(body) => body,
        Err(_) => Err(ApiError::BodyTimeout(limits.read_timeout)),
    }
}

/// Reads frames until the end, refusing as soon as the total passes `max_bytes`.
async fn collect(body: axum::body::Body, max_bytes: usize) -> Result<Bytes, ApiError> {
    let mut stream = body.into_data_stream();
    let mut collected = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| {
            ApiError::BadBody("the request body could not be read to its end".to_string())
        })?;
        if collected.len().saturating_add(chunk.len()) > max_bytes {
            return Err(ApiError::TooLarge(max_bytes));
        }
        collected.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(collected))
}
