//! server::console::oidc: approvers sign in to the console with the organisation's OpenID
//! Provider (issue 34 §4) — the authorization code flow with PKCE, `state` and `nonce`.
//! `/console/oidc/start` sends the browser to the provider with a new flow in a cookie;
//! `/console/oidc/callback` checks the `state`, exchanges the code, verifies the ID token with
//! the issuer's keys (`server::auth`, for this client and this `nonce`), maps the person's
//! groups to the approver role by the issuer's `approver_groups`, and signs them in as
//! `iss|sub` — the principal their agents' tokens carry, so separation of duties compares the
//! same names — with their groups and email, for no longer than the ID token is valid. The
//! session lives in the console book (every replica of a fleet), the flow in the browser.
//!
//! Map: `flow` (one sign-in's secrets, its cookie, the
//! authorization URL), `provider` (endpoints and the code exchange); the `console.oidc`
//! section is `config::console`.

pub mod flow;
pub mod provider;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::session::{cookie, set_cookie, COOKIE};
use super::{page, pages, ConsoleState};
use crate::server::auth::error::shown;
use crate::server::auth::{TokenError, VerifiedToken};
use crate::server::caller::{Person, Role};
use flow::{Flow, FLOW_COOKIE, FLOW_TTL};

pub use crate::server::config::console::{ConsoleOidc, RawConsole, RawConsoleOidc};
pub use provider::Provider;

/// `GET /console/oidc/start`: a new flow, and the browser sent to the provider.
pub(super) async fn start(State(state): State<ConsoleState>) -> Response {
    let Some(provider) = state.oidc.as_deref() else {
        return not_configured();
    };
    let endpoints = match provider.endpoints().await {
        Ok(endpoints) => endpoints,
        Err(why) => {
            tracing::warn!(%why, "the console's OpenID provider is unavailable");
            return refused(
                &state,
                StatusCode::BAD_GATEWAY,
                &format!("the sign-in provider cannot be reached: {why}"),
            );
        }
    };
    let flow = Flow::begin();
    let to = match flow.authorization_url(&endpoints.authorization, &provider.config) {
        Ok(to) => to,
        Err(why) => return refused(&state, StatusCode::BAD_GATEWAY, &why),
    };
    with_cookies(
        Redirect::to(&to).into_response(),
        &[flow::set_cookie(&flow.cookie_value(), FLOW_TTL)],
    )
}

/// What the provider sends back: a code and the flow's state, or an error.
#[derive(Debug, Deserialize)]
pub(super) struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /console/oidc/callback`: the person signed in at the provider, or why not.
pub(super) async fn callback(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Query(answer): Query<Callback>,
) -> Response {
    match signed_in(&state, &headers, answer).await {
        Ok(signed_in) => signed_in,
        Err(Stopped::NotConfigured) => not_configured(),
        Err(Stopped::Refused(status, problem)) => refused(&state, status, &problem),
    }
}

/// Why a sign-in stopped short of a session.
enum Stopped {
    /// No `console.oidc` section, or no issuers to verify its ID token with.
    NotConfigured,
    /// The sign-in page is shown again with this status and problem.
    Refused(StatusCode, String),
}

/// The flow's answer checked, its code exchanged, the ID token verified as an approver's, and
/// a console session opened for them: the page that moves on to `/console`.
async fn signed_in(
    state: &ConsoleState,
    headers: &HeaderMap,
    answer: Callback,
) -> Result<Response, Stopped> {
    let provider = state.oidc.as_deref().ok_or(Stopped::NotConfigured)?;
    let (flow, code) = answered(headers, answer)?;
    let id_token = provider.exchange(&code, &flow).await.map_err(|why| {
        tracing::warn!(%why, "a console sign-in's code exchange failed");
        Stopped::Refused(StatusCode::BAD_GATEWAY, why)
    })?;
    let now = state.pipeline.inner().clock.now();
    let person = approver(state, &provider.config, &id_token, &flow, now).await?;
    let who = Person {
        groups: person.groups.clone(),
        email: person.email.clone().unwrap_or_default(),
    };
    let principal = person.principal();
    let (token, session) = state
        .sessions
        .signed_in(&principal, &who, Some(person.expires_at), now)
        .await
        .map_err(|error| Stopped::Refused(StatusCode::SERVICE_UNAVAILABLE, error.to_string()))?;
    tracing::info!(principal = %shown(&principal), "an approver signed in to the console with the IdP");
    let max_age = session.expires_at - now;
    // A page that moves on to /console by itself: the session cookie is `SameSite=Strict`, and
    // a redirect still inside the provider's cross-site navigation would not send it.
    Ok(with_cookies(
        page(StatusCode::OK, pages::signed_in(&session)),
        &[
            set_cookie(COOKIE, &token, max_age),
            flow::set_cookie("", time::Duration::ZERO),
        ],
    ))
}

/// The flow this browser started (its cookie) and the code the provider answered it with:
/// refused when the flow is gone, the `state` differs, or the provider answered an error.
fn answered(headers: &HeaderMap, answer: Callback) -> Result<(Flow, String), Stopped> {
    let Some(flow) = cookie(headers, FLOW_COOKIE).and_then(|value| Flow::from_cookie(&value))
    else {
        return Err(Stopped::Refused(
            StatusCode::BAD_REQUEST,
            "this sign-in expired or was not started in this browser: sign in again".into(),
        ));
    };
    if !answer
        .state
        .as_deref()
        .is_some_and(|sent| flow.answers(sent))
    {
        return Err(Stopped::Refused(
            StatusCode::FORBIDDEN,
            "the provider's answer does not belong to this browser's sign-in (`state` differs): sign in again".into(),
        ));
    }
    if let Some(error) = answer.error {
        let described = answer
            .error_description
            .map(|text| format!(" — {}", shown(&text)))
            .unwrap_or_default();
        return Err(Stopped::Refused(
            StatusCode::UNAUTHORIZED,
            format!(
                "the provider did not sign you in: {}{described}",
                shown(&error)
            ),
        ));
    }
    match answer.code.filter(|code| !code.is_empty()) {
        Some(code) => Ok((flow, code)),
        None => Err(Stopped::Refused(
            StatusCode::BAD_REQUEST,
            "the provider sent no code".into(),
        )),
    }
}

/// The ID token verified with the issuer's keys for this client and this flow's `nonce`, of
/// a person the IdP names an approver.
async fn approver(
    state: &ConsoleState,
    config: &ConsoleOidc,
    id_token: &str,
    flow: &Flow,
    now: time::OffsetDateTime,
) -> Result<VerifiedToken, Stopped> {
    let issuers = state
        .pipeline
        .inner()
        .callers
        .issuers()
        .ok_or(Stopped::NotConfigured)?;
    let person = match issuers
        .verify_id_token(id_token, &config.client_id, &flow.nonce, now)
        .await
    {
        Ok(person) => person,
        Err(TokenError::NoRole) => {
            return Err(Stopped::Refused(
                StatusCode::FORBIDDEN,
                format!(
                    "the account you signed in with is not an approver: none of its groups is an approver group of `{}`",
                    config.issuer
                ),
            ))
        }
        Err(why) => {
            return Err(Stopped::Refused(
                StatusCode::UNAUTHORIZED,
                format!("the provider's ID token was refused: {why}"),
            ))
        }
    };
    if person.role != Role::Approver {
        return Err(Stopped::Refused(
            StatusCode::FORBIDDEN,
            format!(
                "{} is not an approver: the IdP names it an agent of `{}`",
                shown(&person.principal()),
                config.issuer
            ),
        ));
    }
    Ok(person)
}

fn not_configured() -> Response {
    page(
        StatusCode::NOT_FOUND,
        pages::message(
            None,
            "Not found",
            "sign-in with an identity provider is not configured (`console.oidc`)",
        ),
    )
}

/// The sign-in page with `problem`, the flow cookie cleared.
fn refused(state: &ConsoleState, status: StatusCode, problem: &str) -> Response {
    with_cookies(
        super::sign_in::refused_page(status, problem, super::sign_in::idp(state)),
        &[flow::set_cookie("", time::Duration::ZERO)],
    )
}

fn with_cookies(mut response: Response, cookies: &[String]) -> Response {
    for cookie in cookies {
        if let Ok(value) = HeaderValue::from_str(cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}
