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
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]
    use super::*;
    use axum::{extract::State, http::StatusCode, routing::post, Json, Router};
    use std::sync::atomic::{AtomicU64, Ordering};

    #[derive(Default)]
    struct TokenServer {
        hits: AtomicU64,
        refuse: bool,
    }

    async fn token(
        State(server): State<Arc<TokenServer>>,
        Json(body): Json<Value>,
    ) -> (StatusCode, Json<Value>) {
        let hit = server.hits.fetch_add(1, Ordering::SeqCst) + 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
        if server.refuse
            || body["refresh_token"] != "refresh-0"
                && body["refresh_token"] != format!("refresh-{}", hit - 1)
        {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": "invalid_grant"})),
            );
        }
        (
            StatusCode::OK,
            Json(
                json!({"access_token": format!("access-{hit}"), "refresh_token": format!("refresh-{hit}")}),
            ),
        )
    }

    async fn serve(server: Arc<TokenServer>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let router = Router::new()
            .route("/v1/oauth/token", post(token))
            .with_state(server);
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://{address}/v1/oauth/token")
    }

    #[tokio::test]
    async fn concurrent_refreshes_share_one_request() {
        let server = Arc::new(TokenServer::default());
        let url = serve(Arc::clone(&server)).await;
        let credentials = Arc::new(Credentials::new(
            reqwest::Client::new(),
            url,
            "access-0".into(),
            Some("refresh-0".into()),
        ));
        let calls = (0..20).map(|_| {
            let credentials = Arc::clone(&credentials);
            tokio::spawn(async move { credentials.refresh("access-0").await })
        });
        for outcome in futures_util::future::join_all(calls).await {
            assert_eq!(outcome.unwrap().unwrap(), "access-1");
        }
        assert_eq!(server.hits.load(Ordering::SeqCst), 1);
        assert_eq!(credentials.access_token(), "access-1");
    }

    #[tokio::test]
    async fn a_stale_token_already_replaced_needs_no_request() {
        let server = Arc::new(TokenServer::default());
        let url = serve(Arc::clone(&server)).await;
        let credentials = Credentials::new(
            reqwest::Client::new(),
            url,
            "access-0".into(),
            Some("refresh-0".into()),
        );
        assert_eq!(credentials.refresh("access-0").await.unwrap(), "access-1");
        assert_eq!(credentials.refresh("access-0").await.unwrap(), "access-1");
        assert_eq!(server.hits.load(Ordering::SeqCst), 1);
        // The rotated refresh token is used for the next refresh.
        assert_eq!(credentials.refresh("access-1").await.unwrap(), "access-2");
    }

    #[tokio::test]
    async fn a_refused_refresh_keeps_the_token_and_allows_a_later_attempt() {
        let server = Arc::new(TokenServer {
            refuse: true,
            ..TokenServer::default()
        });
        let url = serve(Arc::clone(&server)).await;
        let credentials = Credentials::new(
            reqwest::Client::new(),
            url,
            "access-0".into(),
            Some("refresh-0".into()),
        );
        assert_eq!(
            credentials.refresh("access-0").await,
            Err(CredentialError::Rejected(400))
        );
        assert_eq!(
            credentials.refresh("access-0").await,
            Err(CredentialError::Rejected(400))
        );
        assert_eq!(server.hits.load(Ordering::SeqCst), 2);
        assert_eq!(credentials.access_token(), "access-0");
    }

    #[tokio::test]
    async fn without_a_refresh_token_nothing_is_sent() {
        let credentials = Credentials::new(
            reqwest::Client::new(),
            "http://127.0.0.1:9/".into(),
            "a".into(),
            None,
        );
        assert_eq!(
            credentials.refresh("a").await,
            Err(CredentialError::NoRefreshToken)
        );
    }

    #[tokio::test]
    async fn a_cancelled_caller_does_not_lose_the_new_token() {
        let server = Arc::new(TokenServer::default());
        let url = serve(Arc::clone(&server)).await;
        let credentials = Credentials::new(
            reqwest::Client::new(),
            url,
            "access-0".into(),
            Some("refresh-0".into()),
        );
        let raced =
            tokio::time::timeout(Duration::from_millis(5), credentials.refresh("access-0")).await;
        assert!(raced.is_err());
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(credentials.access_token(), "access-1");
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_is_a_transport_error() {
        let credentials = Credentials::new(
            reqwest::Client::new(),
            "http://127.0.0.1:9/token".into(),
            "a".into(),
            Some("r".into()),
        );
        assert!(matches!(
            credentials.refresh("a").await,
            Err(CredentialError::Transport(_))
        ));
    }
}
