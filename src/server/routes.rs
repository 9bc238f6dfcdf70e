//! server::routes: the HTTP handlers — thin adapters from requests to the gateway.

use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::caller::Role;
use super::error::ApiError;
use super::gateway::{AppState, Handled};
use super::journal::LogHealth;
use super::wire::{AuthorizeBody, CallBody, DecisionBody};

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|error| ApiError::BadBody(error.to_string()))
}

pub async fn authorize(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    state.inner().callers.require(&headers, Role::Agent)?;
    let body: AuthorizeBody = parse(&body)?;
    let prepared = state.prepare(&body.tool, &body.session, body.input).await?;
    let decision = state.decide_and_record(&prepared).await?;
    let mut out = DecisionBody::new(&prepared.decision_id, &decision);
    out.approval = decision.approval.as_ref().map(|card| json!(card));
    if body.explain {
        out.requests = Some(&decision.requests);
    }
    Ok(Json(out).into_response())
}

pub async fn design_call(
    state: State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    tool_call(state, headers, body, "ClaudeDesign").await
}

pub async fn projects_call(
    state: State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    tool_call(state, headers, body, "Projects").await
}

async fn tool_call(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
    tool: &str,
) -> Result<Response, ApiError> {
    let caller = state.inner().callers.require(&headers, Role::Agent)?;
    let body: CallBody = parse(&body)?;
    let prepared = state.prepare(tool, &body.session, body.input).await?;
    let decision_id = prepared.decision_id.clone();
    let response = match state.handle(&caller, prepared).await? {
        Handled::Allowed { decision, result } => {
            let mut out = DecisionBody::new(&decision_id, &decision);
            out.result = Some(result);
            (StatusCode::OK, Json(out)).into_response()
        }
        Handled::Asked { decision, approval } => {
            let mut out = DecisionBody::new(&decision_id, &decision);
            out.approval = Some(json!(approval));
            (StatusCode::ACCEPTED, Json(out)).into_response()
        }
        Handled::Denied { decision } => (
            StatusCode::FORBIDDEN,
            Json(DecisionBody::new(&decision_id, &decision)),
        )
            .into_response(),
    };
    Ok(response)
}

pub async fn list_approvals(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    state.inner().callers.require(&headers, Role::Approver)?;
    let pending = state.inner().approvals.pending(state.inner().clock.now());
    Ok(Json(json!({"approvals": pending})))
}

#[derive(Debug, Deserialize)]
pub struct WaitQuery {
    wait: Option<String>,
}

/// `?wait=30s` (or `500ms`, `2m`): hold the request until the approval is decided.
fn wait_duration(text: Option<&str>) -> Result<Duration, ApiError> {
    let Some(text) = text else {
        return Ok(Duration::ZERO);
    };
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let value: u64 = number
        .parse()
        .map_err(|_| ApiError::BadBody(format!("`wait` must look like 30s, not `{text}`")))?;
    let duration = match unit {
        "ms" => Duration::from_millis(value),
        "s" | "" => Duration::from_secs(value),
        "m" => Duration::from_secs(value * 60),
        _ => {
            return Err(ApiError::BadBody(format!(
                "`wait` must look like 30s, not `{text}`"
            )))
        }
    };
    Ok(duration.min(Duration::from_secs(120)))
}

pub async fn get_approval(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(query): Query<WaitQuery>,
) -> Result<Json<Value>, ApiError> {
    let caller = state.inner().callers.authenticate(&headers)?;
    let wait = wait_duration(query.wait.as_deref())?;
    let clock = state.inner().clock.clone();
    let view = state
        .inner()
        .approvals
        .wait(&id, wait, move || clock.now())
        .await?;
    if caller.role == Role::Agent && view.requested_by != caller.principal {
        return Err(ApiError::Forbidden(
            "this approval belongs to another agent",
        ));
    }
    Ok(Json(json!(view)))
}

pub async fn approve(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let caller = state.inner().callers.require(&headers, Role::Approver)?;
    let view = state.approve(&caller, &id).await?;
    Ok(Json(json!(view)))
}

pub async fn refuse(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let caller = state.inner().callers.require(&headers, Role::Approver)?;
    let view = state.refuse(&caller, &id).await?;
    Ok(Json(json!(view)))
}

pub async fn consent(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    state.inner().callers.require(&headers, Role::Approver)?;
    let account = &state.inner().account;
    account.design.record_consent().await.map_err(|error| {
        ApiError::Unavailable(format!("Couldn't record Design consent ({error})"))
    })?;
    account.state.consent_granted();
    Ok(Json(
        json!({"consent": "agent_design_projects", "granted": true}),
    ))
}

pub async fn revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    state.inner().callers.require(&headers, Role::Approver)?;
    let account = &state.inner().account;
    account.design.revoke_consent().await.map_err(|error| {
        ApiError::Unavailable(format!("Couldn't revoke Design consent ({error})"))
    })?;
    account.state.consent_revoked();
    Ok(Json(
        json!({"consent": "agent_design_projects", "granted": false, "note": "plans and verified grants were cleared; durable grants are revoked at claude.ai/design settings"}),
    ))
}

pub async fn healthz(State(state): State<AppState>) -> Json<Value> {
    let snapshot = state.inner().snapshot.load();
    let reload = state
        .inner()
        .reloader
        .as_ref()
        .map(|reloader| json!(reloader.status()));
    let shadow = state
        .inner()
        .shadow
        .load()
        .as_ref()
        .map(|shadow| shadow.hash().to_string());
    let log = state.inner().journal.health(state.inner().clock.now());
    let degraded = reload
        .as_ref()
        .is_some_and(|status| !status["last_error"].is_null())
        || log.as_ref().is_some_and(LogHealth::is_failing);
    Json(json!({
        "status": if degraded { "degraded" } else { "ok" },
        "snapshot": snapshot.hash(),
        "policies": snapshot.len(),
        "shadow": shadow,
        "reload": reload,
        "log": log,
    }))
}

pub async fn reload(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    state.inner().callers.require(&headers, Role::Approver)?;
    let report = state.reload().await;
    Ok(Json(json!(report)))
}

pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let text = state
        .inner()
        .metrics
        .render(state.inner().approvals.pending_count());
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        text,
    )
}

/// The HTTP floor for benchmarks: authenticates and parses like `authorize`, then answers a
/// constant decision without gathering facts or evaluating policies.
pub async fn floor(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    state.inner().callers.require(&headers, Role::Agent)?;
    let _body: AuthorizeBody = parse(&body)?;
    Ok(Json(
        json!({"decision": "allow", "reason": "constant", "policies": []}),
    ))
}
