//! The bearer token used upstream and its refresh, at most one refresh at a time (client-facts §6,
//! `koS`/`V0f`). It must not decide when to refresh; callers do that on a 401.

use futures_util::future::{BoxFuture, FutureExt, Shared};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// A refresh that outlives every waiter still ends: the server has already retired the old token.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(15);

type RefreshFlight = Shared<BoxFuture<'static, Result<String, CredentialError>>>;

/// Why a token could not be refreshed; never carries a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("no refresh token is available")]
    NoRefreshToken,
    #[error("the token endpoint refused the refresh: HTTP {0}")]
    Rejected(u16),
    #[error("the token endpoint answered without an access token")]
    Shape,
    #[error("the token refresh did not complete: {0}")]
    Transport(String),
}

/// The bearer token, refreshed at most once at a time; concurrent callers share one request.
pub struct Credentials {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    token_url: String,
    state: Mutex<TokenState>,
}

/// INVARIANT: the tokens and the in-flight refresh change under one lock, so a caller never sees
/// the stale token after the flight that replaced it has been cleared.
struct TokenState {
    access: String,
    refresh: Option<String>,
    flight: Option<(String, RefreshFlight)>,
}

impl Credentials {
    pub fn new(
        client: reqwest::Client,
        token_url: String,
        access: String,
        refresh: Option<String>,
    ) -> Self {
        let state = Mutex::new(TokenState {
            access,
            refresh,
            flight: None,
        });
        Self {
            inner: Arc::new(Inner {
                client,
                token_url,
                state,
            }),
        }
    }

    /// The access token currently in use.
    pub fn access_token(&self) -> String {
        self.inner.lock().access.clone()
    }

    /// Refreshes unless another refresh already replaced `stale`; concurrent callers share one request.
    pub async fn refresh(&self, stale: &str) -> Result<String, CredentialError> {
        let flight = {
            let mut state = self.inner.lock();
            if state.access != stale {
                return Ok(state.access.clone());
            }
            match &state.flight {
                Some((flight_stale, flight)) if flight_stale == stale => flight.clone(),
                _ => {
                    let refresh = state
                        .refresh
                        .clone()
                        .ok_or(CredentialError::NoRefreshToken)?;
                    let flight = start_refresh(Arc::clone(&self.inner), refresh);
                    state.flight = Some((stale.to_owned(), flight.clone()));
                    flight
                }
            }
        };
        flight.await
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, TokenState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores the outcome and ends the flight in one step.
    fn finish(&self, outcome: &Result<(String, Option<String>), CredentialError>) {
        let mut state = self.lock();
        if let Ok((access, refresh)) = outcome {
            state.access.clone_from(access);
            if refresh.is_some() {
                state.refresh.clone_from(refresh);
            }
        }
        state.flight = None;
    }
}

/// Spawned so that a caller giving up (the 5 s race) does not drop a refresh the server has
/// already performed, which would lose both the old and the new token.
fn start_refresh(inner: Arc<Inner>, refresh: String) -> RefreshFlight {
    let task = tokio::spawn(async move {
        let outcome = request_tokens(&inner, &refresh).await;
        inner.finish(&outcome);
        outcome.map(|(access, _)| access)
    });
    async move {
        task.await
            .unwrap_or_else(|error| Err(CredentialError::Transport(error.to_string())))
    }
    .boxed()
    .shared()
}

async fn request_tokens(
    inner: &Inner,
    refresh: &str,
) -> Result<(String, Option<String>), CredentialError> {
    let body = json!({"grant_type": "refresh_token", "refresh_token": refresh});
    let response = inner
        .client
        .post(&inner.token_url)
        .json(&body)
        .timeout(REFRESH_TIMEOUT)
        .send()
        .await
        .map_err(|error| CredentialError::Transport(error.without_url().to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(CredentialError::Rejected(status.as_u16()));
    }
    let answer: Value = response
        .json()
        .await
        .map_err(|error| CredentialError::Transport(error.without_url().to_string()))?;
    let access = answer
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|token| !token.is_empty())
        .ok_or(CredentialError::Shape)?;
    let refresh = answer
        .get("refresh_token")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok((access.to_owned(), refresh))
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
