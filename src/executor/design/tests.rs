//! Transport tests against the in-test claude.ai over real loopback HTTP.
use super::fake::{Fake, Fault, ACCESS, REFRESH};
use super::*;
use std::sync::atomic::Ordering;

pub fn client_with(
    fake: &Fake,
    refresh: Option<&str>,
    tweak: impl FnOnce(&mut DesignConfig),
) -> DesignClient {
    let http = reqwest::Client::new();
    let token_url = format!("{}/v1/oauth/token", fake.base_url);
    let credentials = Credentials::new(
        http.clone(),
        token_url,
        ACCESS.to_owned(),
        refresh.map(str::to_owned),
    );
    let mut config = DesignConfig::new(fake.base_url.clone());
    tweak(&mut config);
    DesignClient::new(http, config, Arc::new(credentials))
}

pub fn client(fake: &Fake) -> DesignClient {
    client_with(fake, Some(REFRESH), |_| {})
}

fn text_of(result: &MappedResult) -> String {
    result.content[0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn fifty_concurrent_first_calls_share_one_initialize() {
    let fake = Fake::start().await;
    fake.state.initialize_delay_ms.store(100, Ordering::SeqCst);
    let design = client(&fake);
    let calls = (0..50).map(|n| {
        let design = design.clone();
        tokio::spawn(async move { design.call_tool("echo", &json!({"n": n})).await })
    });
    for outcome in futures_util::future::join_all(calls).await {
        assert!(!outcome.unwrap().unwrap().is_error);
    }
    assert_eq!(Fake::count(&fake.state.initialize), 1);
    assert_eq!(design.initialize_count(), 1);
    assert_eq!(Fake::count(&fake.state.tools_call), 50);
}

#[tokio::test]
async fn the_request_carries_the_reference_headers() {
    let fake = Fake::start().await;
    let design = client(&fake);
    let result = design.call_tool("echo", &json!({"k": "v"})).await.unwrap();
    let echoed: Value = serde_json::from_str(&text_of(&result)).unwrap();
    assert_eq!(echoed["arguments"], json!({"k": "v"}));
    // The echoed bearer token comes back redacted, as every body text does.
    assert_eq!(echoed["authorization"], "Bearer [redacted-oauth-token]");
}

#[tokio::test]
async fn an_expired_session_reinitializes_once_then_succeeds() {
    let fake = Fake::start().await;
    let design = client(&fake);
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::SessionExpired);
    let result = design.call_tool("echo", &json!({})).await.unwrap();
    assert!(!result.is_error);
    assert_eq!(Fake::count(&fake.state.initialize), 2);
}

#[tokio::test]
async fn a_second_404_after_reinitializing_is_an_error() {
    let fake = Fake::start().await;
    let design = client(&fake);
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::SessionExpired);
    fake.fault(Fault::SessionExpired);
    let error = design.call_tool("echo", &json!({})).await.unwrap_err();
    assert!(
        matches!(error, DesignError::Http { status: 404, .. }),
        "{error:?}"
    );
    assert_eq!(Fake::count(&fake.state.initialize), 2);
}

#[tokio::test]
async fn a_failed_initialize_names_its_status() {
    let fake = Fake::start().await;
    fake.fault(Fault::Status(503, json!({"error": "down"})));
    let error = client(&fake)
        .call_tool("echo", &json!({}))
        .await
        .unwrap_err();
    assert_eq!(error, DesignError::Initialize(503));
    assert_eq!(
        error.to_string(),
        "Claude Design initialize failed: HTTP 503"
    );
}

#[tokio::test]
async fn a_401_refreshes_once_and_retries() {
    let fake = Fake::start().await;
    let design = client(&fake);
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::TokenExpired);
    let result = design.call_tool("echo", &json!({})).await.unwrap();
    assert!(!result.is_error);
    assert_eq!(Fake::count(&fake.state.token_refreshes), 1);
    assert_eq!(Fake::count(&fake.state.tools_call), 2);
}

#[tokio::test]
async fn a_401_on_the_first_initialize_also_refreshes() {
    let fake = Fake::start().await;
    fake.fault(Fault::TokenExpired);
    let design = client(&fake);
    assert!(!design.call_tool("echo", &json!({})).await.unwrap().is_error);
    assert_eq!(Fake::count(&fake.state.token_refreshes), 1);
}

#[tokio::test]
async fn a_second_401_is_a_clear_auth_error_without_the_token() {
    let fake = Fake::start().await;
    let design = client(&fake);
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::TokenExpired);
    fake.fault(Fault::TokenExpired);
    let error = design.call_tool("echo", &json!({})).await.unwrap_err();
    let DesignError::Auth(text) = &error else {
        panic!("{error:?}")
    };
    assert!(
        text.contains("rejected the refreshed credential too"),
        "{text}"
    );
    assert!(!text.contains("sk-ant"), "{text}");
    assert_eq!(Fake::count(&fake.state.token_refreshes), 1);
}

#[tokio::test]
async fn a_401_without_a_refresh_token_says_so() {
    let fake = Fake::start().await;
    let design = client_with(&fake, None, |_| {});
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::TokenExpired);
    let error = design.call_tool("echo", &json!({})).await.unwrap_err();
    assert!(
        error.to_string().contains("no refresh token is available"),
        "{error}"
    );
    assert!(!error.to_string().contains(ACCESS));
}

#[tokio::test]
async fn an_event_stream_is_refused() {
    let fake = Fake::start().await;
    let design = client(&fake);
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::Sse);
    let error = design.call_tool("echo", &json!({})).await.unwrap_err();
    assert_eq!(error, DesignError::EventStream);
    assert_eq!(
        error.to_string(),
        "Claude Design returned a text/event-stream response; this client only handles JSON."
    );
}

async fn oversized(bytes: usize, chunked: bool) -> Result<MappedResult, DesignError> {
    let fake = Fake::start().await;
    let design = client_with(&fake, Some(REFRESH), |config| {
        config.max_response_bytes = 5_000
    });
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::Oversized { bytes, chunked });
    design.call_tool("echo", &json!({})).await
}

#[tokio::test]
async fn a_body_at_the_cap_is_read_and_one_byte_over_is_refused() {
    for chunked in [false, true] {
        // A JSON string body is not an object with a result: the call maps to an empty result.
        let at_cap = oversized(5_000, chunked).await.unwrap();
        assert_eq!(at_cap.content[0]["text"], "(empty result)");
        assert_eq!(
            oversized(5_001, chunked).await.unwrap_err(),
            DesignError::TooLarge
        );
    }
}

#[tokio::test]
async fn the_reference_cap_refuses_a_three_megabyte_body() {
    let fake = Fake::start().await;
    let design = client(&fake);
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::Oversized {
        bytes: 3_000_000,
        chunked: true,
    });
    assert_eq!(
        design.call_tool("echo", &json!({})).await.unwrap_err(),
        DesignError::TooLarge
    );
}

#[tokio::test]
async fn a_slow_answer_times_out() {
    let fake = Fake::start().await;
    let design = client_with(&fake, Some(REFRESH), |config| {
        config.timeout = Duration::from_millis(200)
    });
    design.call_tool("echo", &json!({})).await.unwrap();
    fake.fault(Fault::Delay(1_000));
    assert_eq!(
        design.call_tool("echo", &json!({})).await.unwrap_err(),
        DesignError::Timeout
    );
}
