//! sandbox::consent: `GET/POST/DELETE /v1/design/consent` for the one bit
//! `agent_design_projects`. It must not touch grants or plans.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::enforce::CONSENT_BIT;
use super::SharedState;

pub async fn read(State(shared): State<SharedState>) -> Response {
    let consent = shared.design.read(|state| state.consent);
    Json(json!({CONSENT_BIT: consent})).into_response()
}

/// The body must name the known bit.
fn names_the_bit(body: &Bytes) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| {
            value
                .get("consent")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .is_some_and(|bit| bit == CONSENT_BIT)
}

fn unknown_bit() -> Response {
    let body = json!({"error": "unknown_consent", "expected": CONSENT_BIT});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

pub async fn record(State(shared): State<SharedState>, body: Bytes) -> Response {
    shared.counters.consent_posts.increment();
    if !names_the_bit(&body) {
        return unknown_bit();
    }
    shared.design.change(|state| state.consent = true);
    Json(json!({"ok": true})).into_response()
}

/// 404 when consent was not recorded. The client sends the bit in the body; an empty body is
/// accepted too, as there is only one bit.
pub async fn revoke(State(shared): State<SharedState>, body: Bytes) -> Response {
    if !body.is_empty() && !names_the_bit(&body) {
        return unknown_bit();
    }
    let was_set = shared
        .design
        .change(|state| std::mem::replace(&mut state.consent, false));
    if was_set {
        Json(json!({"ok": true})).into_response()
    } else {
        (StatusCode::NOT_FOUND, Json(json!({"error": "not_found"}))).into_response()
    }
}
