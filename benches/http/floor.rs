//! The HTTP floor for `benches/http/run.sh`, a bench-only binary (not in the production
//! router): checks the demo agent's bearer, reads and parses the body as `/v1/authorize` does
//! (the same extractor and duplicate-key-checking parse), and answers a constant decision
//! without gathering facts or evaluating policies. It is served by the same accept loop
//! (`server::listen`, same limits) as `askgate serve`, so the floor pays the same transport.
//!
//!   cargo run --release --example http_floor -- 127.0.0.1:18182

use askgate::server::body::{BodyLimits, RequestBody};
use askgate::server::config::{HttpLimits, DEMO_AGENT_TOKEN};
use askgate::server::error::ApiError;
use askgate::server::hook::wire::{HookInput, HookOutput};
use askgate::server::listen::{serve, Services};
use askgate::server::wire::{parse_body, AuthorizeBody};
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

fn require_agent(headers: &HeaderMap) -> Result<(), ApiError> {
    let expected = format!("Bearer {DEMO_AGENT_TOKEN}");
    let authorized = headers
        .get(axum::http::header::AUTHORIZATION)
        .is_some_and(|value| value.as_bytes() == expected.as_bytes());
    if !authorized {
        return Err(ApiError::Unauthenticated("missing or unknown bearer token"));
    }
    Ok(())
}

async fn floor(
    headers: HeaderMap,
    RequestBody(body): RequestBody,
) -> Result<Json<Value>, ApiError> {
    require_agent(&headers)?;
    let _body: AuthorizeBody = parse_body(&body)?;
    Ok(Json(
        json!({"decision": "allow", "reason": "constant", "policies": []}),
    ))
}

/// The hook's floor: the hook answers every 2xx, a parse failure as a deny, as the service does.
async fn floor_hook(
    headers: HeaderMap,
    RequestBody(body): RequestBody,
) -> Result<Json<HookOutput>, ApiError> {
    require_agent(&headers)?;
    Ok(Json(match parse_body::<HookInput>(&body) {
        Ok(_input) => HookOutput::ask("constant"),
        Err(error) => HookOutput::deny(&format!("could not read the hook input: {error}")),
    }))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18182".to_string());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("http floor listening on http://{address}");
    let limits = HttpLimits::default();
    let app = Router::new()
        .route("/_bench/floor", post(floor))
        .route("/_bench/floor/hook", post(floor_hook))
        .layer(axum::Extension(BodyLimits::from(&limits)));
    let services = Services {
        health: app.clone(),
        app,
    };
    serve(listener, services, limits, std::future::pending()).await
}
