//! Tests for `credentials`.
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

/// Credentials holding `access-0` / `refresh-0` against a running `server`.
async fn started(server: TokenServer) -> (Arc<TokenServer>, Credentials) {
    let server = Arc::new(server);
    let url = serve(Arc::clone(&server)).await;
    let credentials = Credentials::new(
        reqwest::Client::new(),
        url,
        "access-0".into(),
        Some("refresh-0".into()),
    );
    (server, credentials)
}

#[tokio::test]
async fn concurrent_refreshes_share_one_request() {
    let (server, credentials) = started(TokenServer::default()).await;
    let credentials = Arc::new(credentials);
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
    let (server, credentials) = started(TokenServer::default()).await;
    assert_eq!(credentials.refresh("access-0").await.unwrap(), "access-1");
    assert_eq!(credentials.refresh("access-0").await.unwrap(), "access-1");
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
    // The rotated refresh token is used for the next refresh.
    assert_eq!(credentials.refresh("access-1").await.unwrap(), "access-2");
}

#[tokio::test]
async fn a_refused_refresh_keeps_the_token_and_allows_a_later_attempt() {
    let (server, credentials) = started(TokenServer {
        refuse: true,
        ..TokenServer::default()
    })
    .await;
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
    let (_server, credentials) = started(TokenServer::default()).await;
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
