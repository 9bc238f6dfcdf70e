//! server::routes: the HTTP API on the pipeline — `/v1/authorize`, the tool calls, the
//! approvals (list, show and wait, approve, refuse) and Design consent — thin adapters from
//! requests to the gateway.

use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::auth::resource::insufficient_scope;
use super::body::RequestBody;
use super::caller::{Caller, Role};
use super::error::ApiError;
use super::gateway::{retry_after, Arrival, FrontDoor, Handled, Pipeline};
use super::intake::{Agent, Anyone, Approver};
use super::wire::{AuthorizeBody, CallBody, DecisionBody, SessionBody};
use crate::facts::Session;
use crate::state::SessionKey;
use crate::store::approvals::ApprovalStatus;

/// The HTTP API's routes.
pub fn router(state: Pipeline) -> Router {
    Router::new()
        .route("/v1/authorize", post(authorize))
        .route("/v1/design/call", post(design_call))
        .route("/v1/projects/call", post(projects_call))
        .route("/v1/approvals", get(list_approvals))
        .route("/v1/approvals/{id}", get(get_approval))
        .route("/v1/approvals/{id}/approve", post(approve))
        .route("/v1/approvals/{id}/refuse", post(refuse))
        .route("/v1/design/consent", post(consent))
        .route("/v1/design/revoke", post(revoke))
        .with_state(state)
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    super::wire::parse_body(body)
}

/// An HTTP call's session: its ids checked, filed under the caller's principal (N2), the facts
/// it states beside what the caller may claim (the gates deny a claim beyond it, P1).
fn http_session(caller: &Caller, body: &SessionBody) -> Result<(SessionKey, Session), ApiError> {
    body.checked().map_err(ApiError::BadSession)?;
    let key = SessionKey::new(caller.principal.clone(), body.id.clone());
    Ok((key, caller.stating(body.facts())))
}

/// The trace of a call on the HTTP API, under the client's `traceparent` if it sent one.
fn call_trace(headers: &HeaderMap, tool: &str) -> crate::trace::Door {
    let tool = match tool {
        "ClaudeDesign" | "Projects" => tool,
        _ => "unknown",
    };
    let name = format!("execute_tool {tool}");
    crate::trace::call(&name, "http", tool, crate::trace::Carrier::Headers(headers))
}

pub async fn authorize(
    headers: HeaderMap,
    agent: Agent,
    state: State<Pipeline>,
    RequestBody(body): RequestBody,
) -> Result<Response, ApiError> {
    let body: AuthorizeBody = parse(&body)?;
    let trace = call_trace(&headers, &body.tool);
    trace.run(authorized(agent, state, body)).await
}

async fn authorized(
    Agent(caller): Agent,
    State(state): State<Pipeline>,
    body: AuthorizeBody,
) -> Result<Response, ApiError> {
    let (key, session) = http_session(&caller, &body.session)?;
    let arrival = Arrival::at(FrontDoor::Http);
    let prepared = state
        .prepare(key, session, (&body.tool, body.input), arrival)
        .await?;
    let decision = state.decide_and_record(&prepared).await?;
    state.count_usage(&prepared, &decision);
    let mut out = DecisionBody::new(&prepared.decision_id, &decision);
    out.approval = decision.approval.as_ref().map(|card| json!(card));
    if body.explain {
        out.requests = Some(&decision.requests);
    }
    let mut response = Json(out).into_response();
    if decision.rate_limited {
        rate_limited(&mut response, retry_after(&prepared));
    }
    Ok(response)
}

pub async fn design_call(
    headers: HeaderMap,
    agent: Agent,
    state: State<Pipeline>,
    RequestBody(body): RequestBody,
) -> Result<Response, ApiError> {
    let trace = call_trace(&headers, "ClaudeDesign");
    trace
        .run(tool_call(agent, state, RequestBody(body), "ClaudeDesign"))
        .await
}

pub async fn projects_call(
    headers: HeaderMap,
    agent: Agent,
    state: State<Pipeline>,
    RequestBody(body): RequestBody,
) -> Result<Response, ApiError> {
    let trace = call_trace(&headers, "Projects");
    trace
        .run(tool_call(agent, state, RequestBody(body), "Projects"))
        .await
}

async fn tool_call(
    Agent(caller): Agent,
    State(state): State<Pipeline>,
    RequestBody(body): RequestBody,
    tool: &str,
) -> Result<Response, ApiError> {
    let body: CallBody = parse(&body)?;
    let (key, session) = http_session(&caller, &body.session)?;
    let arrival = Arrival::at(FrontDoor::Http);
    let prepared = state
        .prepare(key, session, (tool, body.input), arrival)
        .await?;
    let decision_id = prepared.decision_id.clone();
    let wait = retry_after(&prepared);
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
        Handled::Denied { decision } => {
            let mut response = (
                StatusCode::FORBIDDEN,
                Json(DecisionBody::new(&decision_id, &decision)),
            )
                .into_response();
            if !decision.step_up.is_empty() {
                step_up(&mut response, &state, &decision.step_up);
            }
            if decision.rate_limited {
                rate_limited(&mut response, wait);
            }
            response
        }
    };
    Ok(response)
}

/// A deny only the caller's rate limit makes (`@rate_limit`): 429 with `Retry-After`.
fn rate_limited(response: &mut Response, wait: i64) {
    *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
    if let Ok(value) = axum::http::HeaderValue::from_str(&wait.to_string()) {
        response
            .headers_mut()
            .insert(axum::http::header::RETRY_AFTER, value);
    }
}

/// A 403 that OAuth's step-up challenge answers (`@step_up`): the scopes and, with issuers
/// configured, where askgate's protected-resource metadata is.
pub fn step_up(response: &mut Response, state: &Pipeline, scopes: &[String]) {
    let challenge = insufficient_scope(state.inner().callers.resource(), scopes);
    if let Ok(value) = axum::http::HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(axum::http::header::WWW_AUTHENTICATE, value);
    }
}

#[derive(Debug, Deserialize)]
pub struct PageQuery {
    limit: Option<String>,
    cursor: Option<String>,
}

/// At most this many approvals per page of `GET /v1/approvals` (and the default).
const MAX_PAGE: usize = 200;

/// `GET /v1/approvals?limit=N&cursor=C`: the pending approvals the caller may answer, oldest
/// first, a page at a time.
pub async fn list_approvals(
    Approver(caller): Approver,
    State(state): State<Pipeline>,
    Query(query): Query<PageQuery>,
) -> Result<Json<Value>, ApiError> {
    let limit = match query.limit.as_deref() {
        None => MAX_PAGE,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|limit| (1..=MAX_PAGE).contains(limit))
            .ok_or_else(|| ApiError::BadQuery {
                name: "limit",
                message: format!("must be a whole number in 1..={MAX_PAGE}, not `{text}`"),
            })?,
    };
    let cursor = match query.cursor.as_deref() {
        None => None,
        Some(text) => Some(text.parse::<u64>().map_err(|_| ApiError::BadQuery {
            name: "cursor",
            message: format!("`{text}` is not a cursor this service gave out"),
        })?),
    };
    let page = state
        .inner()
        .approving
        .approvals
        .page(state.inner().clock.now(), cursor, limit)
        .await?;
    // Only what this approver may answer (the approving policies); the cursor still walks
    // every pending approval, so a page may hold fewer than `limit`.
    let approvals = state.answerable(&caller, page.approvals);
    Ok(Json(
        json!({"approvals": approvals, "next_cursor": page.next_cursor}),
    ))
}

#[derive(Debug, Deserialize)]
pub struct WaitQuery {
    wait: Option<String>,
}

/// Longest `?wait=`; longer values are clamped to it.
const WAIT_MAX: Duration = Duration::from_secs(120);

/// `?wait=30s` (or `500ms`, `2m`): hold the request until the approval is decided. Errors name
/// the query parameter (C16); the arithmetic saturates, so no value can overflow, and any
/// value above [`WAIT_MAX`] is clamped to it.
fn wait_duration(text: Option<&str>) -> Result<Duration, ApiError> {
    let Some(text) = text else {
        return Ok(Duration::ZERO);
    };
    let bad = || ApiError::BadQuery {
        name: "wait",
        message: format!(
            "`{}` is not a duration like 30s, 500ms or 2m",
            shown_query(text)
        ),
    };
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at_checked(digits).ok_or_else(bad)?;
    if number.is_empty() {
        return Err(bad());
    }
    // Digits beyond u64 are only ever a huge wait: clamp rather than refuse.
    let value: u64 = number.parse().unwrap_or(u64::MAX);
    let duration = match unit {
        "ms" => Duration::from_millis(value),
        "s" | "" => Duration::from_secs(value),
        "m" => Duration::from_secs(value.saturating_mul(60)),
        _ => return Err(bad()),
    };
    Ok(duration.min(WAIT_MAX))
}

/// A query value as messages show it: at most 64 characters.
fn shown_query(text: &str) -> String {
    const SHOWN: usize = 64;
    if text.chars().count() <= SHOWN {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(SHOWN).collect::<String>())
    }
}

pub async fn get_approval(
    Anyone(caller): Anyone,
    State(state): State<Pipeline>,
    Path(id): Path<String>,
    Query(query): Query<WaitQuery>,
) -> Result<Json<Value>, ApiError> {
    let wait = wait_duration(query.wait.as_deref())?;
    let clock = state.inner().clock.clone();
    // Another agent's approval is answered as an unknown one, before any wait (C6).
    let owner = state
        .inner()
        .approving
        .approvals
        .owner(&id, clock.now())
        .await?;
    if caller.role == Role::Agent && owner.as_deref() != Some(caller.principal.as_str()) {
        return Err(ApiError::UnknownApproval(id));
    }
    let view = state
        .inner()
        .approving
        .approvals
        .wait(&id, wait, move || clock.now())
        .await?;
    Ok(Json(json!(view)))
}

/// The optional body of approve and refuse: `{"note": "..."}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideBody {
    #[serde(default)]
    note: Option<String>,
}

fn note_of(body: &[u8]) -> Result<Option<String>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let body: DecideBody = parse(body)?;
    super::approving::approval_note(body.note.as_deref())
}

pub async fn approve(
    headers: HeaderMap,
    Approver(caller): Approver,
    State(state): State<Pipeline>,
    Path(id): Path<String>,
    RequestBody(body): RequestBody,
) -> Result<Response, ApiError> {
    let note = note_of(&body)?;
    let trace = crate::trace::answer(&id, &caller.principal, &headers);
    let view = trace.run(state.approve(&caller, &id, note)).await?;
    if view.status == ApprovalStatus::Running {
        // The work goes on without this request; say where to follow it.
        let poll = format!("/v1/approvals/{id}?wait=30s");
        let mut body = json!(view);
        if let Some(fields) = body.as_object_mut() {
            fields.insert("poll".to_string(), json!(poll));
        }
        return Ok((StatusCode::ACCEPTED, Json(body)).into_response());
    }
    Ok(Json(json!(view)).into_response())
}

pub async fn refuse(
    Approver(caller): Approver,
    State(state): State<Pipeline>,
    Path(id): Path<String>,
    RequestBody(body): RequestBody,
) -> Result<Json<Value>, ApiError> {
    let note = note_of(&body)?;
    let view = state.refuse(&caller, &id, note).await?;
    Ok(Json(json!(view)))
}

pub async fn consent(
    Approver(_caller): Approver,
    State(state): State<Pipeline>,
) -> Result<Json<Value>, ApiError> {
    let account = &state.inner().account;
    account.design.record_consent().await.map_err(|error| {
        ApiError::Unavailable(format!("Couldn't record Design consent ({error})"))
    })?;
    account
        .record([crate::state::AccountEvent::ConsentGranted])
        .await
        .map_err(ApiError::Store)?;
    Ok(Json(
        json!({"consent": "agent_design_projects", "granted": true}),
    ))
}

pub async fn revoke(
    Approver(_caller): Approver,
    State(state): State<Pipeline>,
) -> Result<Json<Value>, ApiError> {
    let account = &state.inner().account;
    account.design.revoke_consent().await.map_err(|error| {
        ApiError::Unavailable(format!("Couldn't revoke Design consent ({error})"))
    })?;
    account
        .record([crate::state::AccountEvent::ConsentRevoked])
        .await
        .map_err(ApiError::Store)?;
    Ok(Json(
        json!({"consent": "agent_design_projects", "granted": false, "note": "plans and verified grants were cleared; durable grants are revoked at claude.ai/design settings"}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c16_wait_parsing_saturates_and_names_the_parameter() {
        assert_eq!(wait_duration(None).unwrap(), Duration::ZERO);
        assert_eq!(
            wait_duration(Some("500ms")).unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(wait_duration(Some("30")).unwrap(), Duration::from_secs(30));
        assert_eq!(wait_duration(Some("2m")).unwrap(), WAIT_MAX);
        for huge in [
            "18446744073709551615m",
            "307445734561825861m",
            "99999999999999999999s",
        ] {
            assert_eq!(wait_duration(Some(huge)).unwrap(), WAIT_MAX, "{huge}");
        }
        for bad in ["1h", "", "m", "-1s", "1.5s", "1 s"] {
            let error = wait_duration(Some(bad)).unwrap_err();
            assert!(
                matches!(error, ApiError::BadQuery { name: "wait", .. }),
                "{bad}: {error:?}"
            );
        }
    }
}
