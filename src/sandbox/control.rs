//! sandbox::control: the `/_sandbox/*` routes (faults, stats, reset, clock) that only tests and
//! demos use. They need no bearer token and are never faulted; they must not exist upstream.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use super::faults::{parse_kind, FaultRequest, ParsedFault};
use super::state::DesignState;
use super::{stats, SharedState};

pub fn router(state: SharedState) -> Router {
    Router::new()
        .route("/_sandbox/faults", post(add_fault).delete(clear_faults))
        .route("/_sandbox/stats", get(read_stats))
        .route("/_sandbox/reset", post(reset))
        .route("/_sandbox/clock", post(advance_clock))
        .with_state(state)
}

fn bad_request(message: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": message}))).into_response()
}

async fn add_fault(State(shared): State<SharedState>, body: Bytes) -> Response {
    let request: FaultRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => return bad_request(format!("invalid fault: {error}")),
    };
    let count = request.count.unwrap_or(1);
    match parse_kind(&request) {
        Ok(ParsedFault::Generic(kind)) => shared.faults.add(kind, &request),
        Ok(ParsedFault::Projects(fault)) => shared.projects.inject(fault, count),
        Err(message) => return bad_request(message),
    }
    Json(json!({"ok": true, "fault": request.fault, "count": count})).into_response()
}

async fn clear_faults(State(shared): State<SharedState>) -> Response {
    shared.faults.clear();
    shared.projects.clear_faults();
    Json(json!({"ok": true})).into_response()
}

async fn read_stats(State(shared): State<SharedState>) -> Response {
    Json(stats::snapshot(&shared)).into_response()
}

/// Back to the seed: Design state, Projects state, credentials, sessions, faults, counters and
/// clock, so one sandbox can serve many tests in a row.
async fn reset(State(shared): State<SharedState>) -> Response {
    shared.design.change(|state| *state = DesignState::seed());
    shared.projects.reset();
    shared.projects.clear_faults();
    shared.credentials.restore(&shared.config);
    shared.sessions.clear();
    shared.faults.clear();
    shared.counters.clear();
    shared.clock.reset();
    Json(json!({"ok": true})).into_response()
}

/// `{"advance_seconds": N}` moves the sandbox clock forward (plan token expiry tests).
async fn advance_clock(State(shared): State<SharedState>, body: Bytes) -> Response {
    let seconds = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|value| value.get("advance_seconds").and_then(Value::as_i64));
    let Some(seconds) = seconds.filter(|seconds| *seconds >= 0) else {
        return bad_request("`advance_seconds` must be a non-negative integer".to_owned());
    };
    shared.clock.advance(seconds);
    Json(json!({"ok": true, "now": shared.clock.now_seconds()})).into_response()
}
