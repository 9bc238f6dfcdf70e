//! sandbox::grants: `GET/POST /v1/design/grants`, durable per-project write grants. A project
//! that cannot hold a grant (not grantable, or unknown) gets 404. It must not touch consent.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::SharedState;

pub async fn list(State(shared): State<SharedState>) -> Response {
    let grants: Vec<Value> = shared.design.read(|state| {
        state
            .grants
            .iter()
            .map(|(project_id, created_at)| json!({"project_id": project_id, "created_at": created_at}))
            .collect()
    });
    Json(json!({"grants": grants})).into_response()
}

/// Records a grant (keeping the first `created_at` when one exists already).
pub async fn create(State(shared): State<SharedState>, body: Bytes) -> Response {
    shared.counters.grant_posts.increment();
    let project_id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|value| {
            value
                .get("project_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    let Some(project_id) = project_id else {
        let body = json!({"error": "invalid_request", "field": "project_id"});
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    };
    let now = shared.clock.now_rfc3339();
    let created_at = shared.design.change(|state| {
        let grantable = state.projects.get(&project_id).is_some_and(|p| p.grantable);
        grantable.then(|| {
            state
                .grants
                .entry(project_id.clone())
                .or_insert(now)
                .clone()
        })
    });
    match created_at {
        Some(created_at) => {
            Json(json!({"project_id": project_id, "created_at": created_at})).into_response()
        }
        None => (
            StatusCode::NOT_FOUND,
            Json(json!({"error": "not_grantable"})),
        )
            .into_response(),
    }
}
