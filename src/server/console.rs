//! server::console: `/console`, the approvers' web page. Server-rendered (maud), every asset
//! embedded; sign-in with the IdP (OIDC) or an approver token into a cookie session, a CSRF token on every form,
//! and a strict Content-Security-Policy on every response. Approve and refuse go through the
//! same `Pipeline::approve` / `refuse` as the API (re-decided, exactly-once follow-up).
//!
//! Map: `session` (cookie sessions and CSRF), `sign_in` (the sign-in page and form), `oidc`
//! (sign-in with the organisation's OpenID Provider),
//! `throttle` (failed sign-ins per address), `decisions` (recent decisions from the log),
//! `pages` (the HTML). How an approval and untrusted text are shown to a person is
//! `server::present`, shared with the webhook and the CLI.

pub mod decisions;
pub mod oidc;
pub mod pages;
pub mod session;
mod sign_in;
pub mod throttle;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use axum::{Form, Router};
use maud::Markup;
use serde::Deserialize;

use super::approving::next_approval;
use super::error::ApiError;
use super::gateway::Pipeline;
use crate::store::approvals::{ApprovalStatus, ApprovalView};
use session::{same_token, set_cookie, ConsoleSession, COOKIE};

/// Scripts and styles only from the console's own assets; no inline code, no frames.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The console's own state beside the pipeline.
#[derive(Clone)]
pub struct ConsoleState {
    pub pipeline: Pipeline,
    /// Approvers signed in to `/console`.
    pub sessions: std::sync::Arc<session::ConsoleSessions>,
    /// Where the decision log is written: the console shows recent decisions from it.
    pub log_dir: Option<std::path::PathBuf>,
    /// The IdP approvers sign in with (`console.oidc`), if any.
    pub oidc: Option<std::sync::Arc<oidc::Provider>>,
}

/// `/console…`, served on the console's own state.
pub fn router(state: ConsoleState) -> Router {
    Router::new()
        .route("/console", get(home))
        .route(
            "/console/sign-in",
            get(sign_in::sign_in_page).post(sign_in::sign_in),
        )
        .route("/console/oidc/start", get(oidc::start))
        .route("/console/oidc/callback", get(oidc::callback))
        .route("/console/sign-out", post(sign_out))
        .route("/console/history", get(history))
        .route("/console/decisions", get(recent_decisions))
        .route("/console/fatigue", get(fatigue_page))
        .route("/console/fragments/pending", get(pending_fragment))
        .route("/console/approvals/{id}", get(approval_page))
        .route("/console/approvals/{id}/approve", post(approve))
        .route("/console/approvals/{id}/refuse", post(refuse))
        .route("/console/assets/console.css", get(css))
        .route("/console/assets/console.js", get(script))
        // Any other page under /console: a 404 that carries the headers like every page (a
        // wildcard does not match the empty rest of `/console/`).
        .route("/console/", any(not_found))
        .route("/console/{*unknown}", any(not_found))
        .layer(axum::middleware::map_response(secure_headers))
        .with_state(state)
}

async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let fixed = [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

// A missing field is an empty one, so that a form without `csrf` is refused like a wrong
// `csrf` (403), not as an unreadable form (422).
#[derive(Debug, Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
    /// The approver's optional note (approve and refuse).
    #[serde(default)]
    note: String,
}

impl ConsoleState {
    async fn console_session(&self, headers: &HeaderMap) -> Option<ConsoleSession> {
        let now = self.pipeline.inner().clock.now();
        self.sessions.current(headers, now).await
    }

    /// Approval `id` as it is at `now`.
    async fn view(
        &self,
        id: &str,
        now: time::OffsetDateTime,
    ) -> Result<crate::store::approvals::ApprovalView, crate::store::approvals::ApprovalError> {
        self.pipeline
            .inner()
            .approving
            .approvals
            .view(id, now)
            .await
    }
}

fn page(status: StatusCode, markup: Markup) -> Response {
    (status, markup).into_response()
}

fn to_sign_in() -> Response {
    Redirect::to("/console/sign-in").into_response()
}

async fn home(State(state): State<ConsoleState>, headers: HeaderMap) -> Response {
    let Some(session) = state.console_session(&headers).await else {
        return to_sign_in();
    };
    let now = state.pipeline.inner().clock.now();
    let views = pending_newest_first(&state, &session, now).await;
    page(StatusCode::OK, pages::pending(&session, &views, now))
}

async fn pending_fragment(State(state): State<ConsoleState>, headers: HeaderMap) -> Response {
    let Some(session) = state.console_session(&headers).await else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let now = state.pipeline.inner().clock.now();
    let views = pending_newest_first(&state, &session, now).await;
    page(StatusCode::OK, pages::pending_list(&session, &views, now))
}

/// The most approvals one page shows (pending, and history).
const PENDING: usize = 200;
const HISTORY: usize = 200;

/// The pending approvals the session's approver may answer (the approving policies), newest
/// first.
async fn pending_newest_first(
    state: &ConsoleState,
    session: &ConsoleSession,
    now: time::OffsetDateTime,
) -> Vec<crate::store::approvals::ApprovalView> {
    let page = state
        .pipeline
        .inner()
        .approving
        .approvals
        .page(now, None, PENDING)
        .await;
    let views = page.map(|page| page.approvals).unwrap_or_default();
    let approver = session::approver(session);
    let mut views = state.pipeline.answerable(&approver, views);
    views.reverse();
    views
}

async fn not_found() -> Response {
    page(
        StatusCode::NOT_FOUND,
        pages::message(
            None,
            "Not found",
            "there is no console page at this address",
        ),
    )
}

async fn sign_out(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    if let Some(session) = state.console_session(&headers).await {
        if !same_token(&form.csrf, &session.csrf) {
            return csrf_refused(Some(&session));
        }
        state.sessions.signed_out(&headers).await;
    }
    let mut response = to_sign_in();
    if let Ok(value) = HeaderValue::from_str(&set_cookie(COOKIE, "", time::Duration::ZERO)) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

fn csrf_refused(session: Option<&ConsoleSession>) -> Response {
    page(
        StatusCode::FORBIDDEN,
        pages::message(
            session,
            "Refused",
            "this form's CSRF token does not match your session: reload the page and try again",
        ),
    )
}

async fn approval_page(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let Some(session) = state.console_session(&headers).await else {
        return to_sign_in();
    };
    let now = state.pipeline.inner().clock.now();
    match state.view(&id, now).await {
        Ok(view) => page(StatusCode::OK, pages::approval(&session, &view, now, None)),
        Err(error) => error_page(&session, &error.into()),
    }
}

async fn history(State(state): State<ConsoleState>, headers: HeaderMap) -> Response {
    let Some(session) = state.console_session(&headers).await else {
        return to_sign_in();
    };
    let now = state.pipeline.inner().clock.now();
    let views = match state
        .pipeline
        .inner()
        .approving
        .approvals
        .decided(now, HISTORY)
        .await
    {
        Ok(views) => views,
        Err(error) => return error_page(&session, &error.into()),
    };
    page(StatusCode::OK, pages::history(&session, &views, now))
}

async fn recent_decisions(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Query(query): Query<decisions::DecisionQuery>,
) -> Response {
    let Some(session) = state.console_session(&headers).await else {
        return to_sign_in();
    };
    let Some(dir) = state.log_dir.clone() else {
        let text = "no decision log is configured (start serve with --log-dir DIR)";
        return page(StatusCode::OK, pages::decisions(&session, Err(text)));
    };
    let filter = match query.filter() {
        Ok(filter) => filter,
        Err(problem) => {
            return page(
                StatusCode::BAD_REQUEST,
                pages::message(Some(&session), "Not a filter", &problem),
            );
        }
    };
    let read = tokio::task::spawn_blocking(move || decisions::recent(&dir, &filter)).await;
    let records = match read {
        Ok(Ok(records)) => records,
        Ok(Err(problem)) => return error_text(&session, &problem),
        Err(join) => return error_text(&session, &join.to_string()),
    };
    let snapshot = state.pipeline.inner().policies.live();
    let body = decisions::list(&query, &records, &snapshot);
    page(StatusCode::OK, pages::decisions(&session, Ok(body)))
}

/// How many approvals, none refused, make a kind of ask "approved every time" on the page.
const FATIGUE_MIN: usize = 5;

async fn fatigue_page(State(state): State<ConsoleState>, headers: HeaderMap) -> Response {
    let Some(session) = state.console_session(&headers).await else {
        return to_sign_in();
    };
    let Some(dir) = state.log_dir.clone() else {
        let text = "no decision log is configured (start serve with --log-dir DIR)";
        return page(StatusCode::OK, pages::fatigue(&session, Err(text)));
    };
    let read = tokio::task::spawn_blocking(move || {
        decisions::newest(&dir)
            .map(|records| crate::audit::fatigue::fatigue(&records, None, FATIGUE_MIN))
    })
    .await;
    let groups = match read {
        Ok(Ok(groups)) => groups,
        Ok(Err(problem)) => return error_text(&session, &problem),
        Err(join) => return error_text(&session, &join.to_string()),
    };
    let body = decisions::fatigue_list(&groups, FATIGUE_MIN);
    page(StatusCode::OK, pages::fatigue(&session, Ok(body)))
}

fn error_text(session: &ConsoleSession, problem: &str) -> Response {
    page(
        StatusCode::SERVICE_UNAVAILABLE,
        pages::message(Some(session), "The decision log cannot be read", problem),
    )
}

async fn approve(
    state: State<ConsoleState>,
    headers: HeaderMap,
    id: Path<String>,
    form: Form<CsrfForm>,
) -> Response {
    decide(state, headers, id, form, true).await
}

async fn refuse(
    state: State<ConsoleState>,
    headers: HeaderMap,
    id: Path<String>,
    form: Form<CsrfForm>,
) -> Response {
    decide(state, headers, id, form, false).await
}

async fn decide(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
    approving: bool,
) -> Response {
    let Some(session) = state.console_session(&headers).await else {
        return page(
            StatusCode::UNAUTHORIZED,
            pages::message(None, "Signed out", "sign in again to decide"),
        );
    };
    if !same_token(&form.csrf, &session.csrf) {
        return csrf_refused(Some(&session));
    }
    // Approving reads only who approves; session defaults are an agent's (MCP) concern.
    let caller = session::approver(&session);
    let note = match super::approving::approval_note(Some(&form.note)) {
        Ok(note) => note,
        Err(error) => return error_page(&session, &error),
    };
    let decided = if approving {
        state.pipeline.approve(&caller, &id, note).await
    } else {
        state.pipeline.refuse(&caller, &id, note).await
    };
    let now = state.pipeline.inner().clock.now();
    match decided {
        Ok(view) if approving && next_approval(view.result.as_ref()).is_some() => {
            next_card(&state, &session, &view, now).await
        }
        Ok(view) => {
            let notice = if !approving {
                "Refused: the call will not run.".to_string()
            } else if view.status == ApprovalStatus::Pending {
                format!(
                    "Your approval is counted: {}; waiting for another approver.",
                    view.tally()
                )
            } else {
                "Approved.".to_string()
            };
            page(
                StatusCode::OK,
                pages::approval(&session, &view, now, Some(&notice)),
            )
        }
        Err(ApiError::ApprovalClosed { status, .. }) => {
            // Someone else decided first: show the approval as it is now, and who decided.
            match state.view(&id, now).await {
                Ok(view) => {
                    let by = match (&view.approved_by, view.withdrawn_because()) {
                        (Some(by), _) => by.as_str(),
                        (None, Some(_)) => "askgate",
                        (None, None) => "nobody (it expired)",
                    };
                    let notice = format!("This approval is already {status}, decided by {by}.");
                    page(
                        StatusCode::CONFLICT,
                        pages::approval(&session, &view, now, Some(&notice)),
                    )
                }
                Err(error) => error_page(&session, &error.into()),
            }
        }
        Err(error) => error_page(&session, &error),
    }
}

/// An approved consent card handed its call on to the next approval (A2): that card is shown
/// at once, with its forms, for the approver to decide.
async fn next_card(
    state: &ConsoleState,
    session: &ConsoleSession,
    approved: &ApprovalView,
    now: time::OffsetDateTime,
) -> Response {
    let Some(next) = next_approval(approved.result.as_ref()) else {
        return page(
            StatusCode::OK,
            pages::approval(session, approved, now, None),
        );
    };
    match state
        .pipeline
        .inner()
        .approving
        .approvals
        .view(next, now)
        .await
    {
        Ok(view) => {
            let notice = format!(
                "Approved {}: Claude Design is connected. The same call now needs this approval \
                 before it runs.",
                approved.id
            );
            page(
                StatusCode::OK,
                pages::approval(session, &view, now, Some(&notice)),
            )
        }
        Err(error) => error_page(session, &error.into()),
    }
}

fn error_page(session: &ConsoleSession, error: &ApiError) -> Response {
    let status = error.status();
    page(
        status,
        pages::message(Some(session), "Not done", &error.to_string()),
    )
}

async fn css() -> Response {
    asset(
        "text/css; charset=utf-8",
        include_str!("console/assets/console.css"),
    )
}

async fn script() -> Response {
    asset(
        "text/javascript; charset=utf-8",
        include_str!("console/assets/console.js"),
    )
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}
