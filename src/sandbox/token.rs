//! sandbox::token: `POST /v1/oauth/token`, the refresh grant. It owns the wire shape only; the
//! rotation itself is `auth::Credentials::refresh`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::SharedState;

/// Lifetime announced for a fresh access token, in seconds.
pub const EXPIRES_IN_SECONDS: u64 = 3600;

#[derive(Debug, Deserialize)]
pub struct TokenRequest {
    grant_type: String,
    refresh_token: String,
    #[serde(default)]
    scope: Option<String>,
}

fn invalid(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": error}))).into_response()
}

pub async fn refresh(
    State(shared): State<SharedState>,
    body: Result<Json<TokenRequest>, axum::extract::rejection::JsonRejection>,
) -> Response {
    shared.counters.token_refreshes.increment();
    let Ok(Json(request)) = body else {
        return invalid("invalid_request");
    };
    if request.grant_type != "refresh_token" {
        return invalid("unsupported_grant_type");
    }
    let requested = request.scope.unwrap_or_default();
    let Some(issued) = shared
        .credentials
        .refresh(&request.refresh_token, &requested)
    else {
        return invalid("invalid_grant");
    };
    Json(json!({
        "access_token": issued.access_token,
        "refresh_token": issued.refresh_token,
        "expires_in": EXPIRES_IN_SECONDS,
        "scope": issued.scopes.join(" "),
        "token_type": "Bearer",
    }))
    .into_response()
}
