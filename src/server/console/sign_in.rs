//! server::console::sign_in: signing in to the console — the sign-in page with its
//! double-submit CSRF cookie, and the form's answer: a session cookie for an approver token,
//! a refusal for anything else, and a wait for an address that failed too often (`throttle`).
//! Agent tokens never sign in.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Form};
use serde::Deserialize;

use super::session::{self, same_token, set_cookie, COOKIE, SESSION_TTL, SIGN_IN_COOKIE};
use super::ConsoleState;
use super::{page, pages, throttle};
use crate::server::caller::{Person, Role};
use crate::server::listen::Peer;

// As in `CsrfForm`: a missing field is an empty one (a form without `csrf` is a 403).
#[derive(Debug, Deserialize)]
pub(super) struct SignInForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    token: String,
}

pub(super) async fn sign_in_page(State(state): State<ConsoleState>) -> Response {
    sign_in_with(StatusCode::OK, None, idp(&state))
}

/// The words of the "Sign in with …" button, when approvers sign in with the IdP.
pub(super) fn idp(state: &ConsoleState) -> Option<&str> {
    state
        .oidc
        .as_deref()
        .map(|provider| provider.config.label.as_str())
}

pub(super) async fn sign_in(
    State(state): State<ConsoleState>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    let peer = peer.map_or_else(throttle::unknown_peer, |Extension(Peer(peer))| peer);
    let console = &state.sessions;
    let now = state.pipeline.inner().clock.now();
    let attempt = throttle::Attempt::of(form.token.trim());
    // Checked before anything else, so that a waiting address learns nothing about a token.
    let idp = idp(&state);
    let refused_sign_in = |status, problem: &str| refused_page(status, problem, idp);
    if let Err(wait) = console.sign_ins.admit(peer, attempt, now) {
        return throttled_sign_in(wait, idp);
    }
    let expected = session::cookie(&headers, SIGN_IN_COOKIE).unwrap_or_default();
    if !same_token(&form.csrf, &expected) {
        return refused_sign_in(StatusCode::FORBIDDEN, "the sign-in form expired: try again");
    }
    let caller = match state.pipeline.inner().callers.by_token(form.token.trim()) {
        Some(caller) if caller.role == Role::Approver => caller,
        Some(_) => {
            console.sign_ins.failed(peer, attempt, now);
            return refused_sign_in(
                StatusCode::FORBIDDEN,
                "an agent token cannot sign in: only approvers decide",
            );
        }
        None => {
            console.sign_ins.failed(peer, attempt, now);
            return refused_sign_in(StatusCode::UNAUTHORIZED, "unknown token");
        }
    };
    console.sign_ins.succeeded(peer, attempt);
    let (token, _) = match console
        .signed_in(&caller.principal, &Person::default(), None, now)
        .await
    {
        Ok(signed_in) => signed_in,
        Err(error) => return refused_sign_in(StatusCode::SERVICE_UNAVAILABLE, &error.to_string()),
    };
    let mut response = Redirect::to("/console").into_response();
    for cookie in [
        set_cookie(COOKIE, &token, SESSION_TTL),
        set_cookie(SIGN_IN_COOKIE, "", time::Duration::ZERO),
    ] {
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

/// 429 with `Retry-After`, for an address that failed too often.
fn throttled_sign_in(wait: time::Duration, idp: Option<&str>) -> Response {
    let seconds = wait.whole_seconds().max(1);
    let problem = format!(
        "too many failed sign-ins from your address: try again in {seconds} s (after {} failures with one token, or {} with any, one try per {} s)",
        throttle::FREE_FAILURES,
        throttle::PEER_FREE_FAILURES,
        throttle::LOCKOUT.whole_seconds()
    );
    let mut response = refused_page(StatusCode::TOO_MANY_REQUESTS, &problem, idp);
    if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// The sign-in page saying `problem`, with a new form (and its CSRF cookie).
pub(super) fn refused_page(status: StatusCode, problem: &str, idp: Option<&str>) -> Response {
    sign_in_with(status, Some(problem), idp)
}

fn sign_in_with(status: StatusCode, problem: Option<&str>, idp: Option<&str>) -> Response {
    let csrf = crate::server::caller::random_token();
    let cookie = set_cookie(SIGN_IN_COOKIE, &csrf, time::Duration::minutes(30));
    let mut response = page(status, pages::sign_in(&csrf, problem, idp));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
