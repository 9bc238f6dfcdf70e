//! server: `askgate serve` — the HTTP JSON service. An adapter over the decision core and the
//! executor: `router(state)` is testable in process; `run(listener, state, shutdown)` takes a
//! bound listener so tests bind port 0.
//!
//! Map: `boot` (a running service from a validated `Config`), `config` (file < env < flags,
//! validated), `listen` (accept loop, connection cap, timeouts), `body` (size limit and read
//! deadline), `caller` (bearer tokens and roles), `wire` (bodies), `gateway` (decide → execute
//! / hold / refuse), `approving` (what an ask becomes here: holding the call, the approver's
//! answer; the approval books themselves are `store::approvals`), `observe` (upstream facts
//! before a decision), `execute` (follow-ups and state events after), `account` (per-account
//! and per-session state over the store), `journal` (writing the decision log), `reload`
//! (hot policy reload), `metrics`, `clock`, `error`, `routes`, `mcp` (the MCP front door at
//! `/mcp`), `hook` (Claude Code's `PreToolUse` hook, tightening only), `attest` (the hook's
//! attestations of MCP calls), `console` (the approvers' web page at `/console`), `notify` (the
//! approval webhook).

pub mod account;
pub mod approving;
pub mod attest;
pub mod body;
pub mod boot;
pub mod caller;
pub mod clock;
pub mod config;
pub mod console;
pub mod error;
pub mod execute;
pub mod gateway;
pub mod hook;
pub mod journal;
pub mod listen;
pub mod mcp;
pub mod metrics;
pub mod notify;
pub mod observe;
pub mod reload;
pub mod routes;
pub mod wire;

use std::future::Future;

use axum::routing::{get, post};
use axum::Router;

pub use gateway::AppState;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/authorize", post(routes::authorize))
        .route("/v1/design/call", post(routes::design_call))
        .route("/v1/projects/call", post(routes::projects_call))
        .route("/v1/approvals", get(routes::list_approvals))
        .route("/v1/approvals/{id}", get(routes::get_approval))
        .route("/v1/approvals/{id}/approve", post(routes::approve))
        .route("/v1/approvals/{id}/refuse", post(routes::refuse))
        .route("/v1/design/consent", post(routes::consent))
        .route("/v1/design/revoke", post(routes::revoke))
        .route("/v1/hooks/claude-code", post(hook::claude_code))
        .route("/v1/admin/reload", post(routes::reload))
        .route("/healthz", get(routes::healthz))
        .route("/metrics", get(routes::metrics))
        .merge(console::router())
        .merge(mcp::router(state.clone()))
        .with_state(state)
}

/// What a reserved connection (past the connection cap) may ask: `/healthz`, nothing else.
fn health_router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(routes::healthz))
        .fallback(|| async { error::ApiError::Busy })
        .with_state(state)
}

/// What the separate health listener (`health_listen`) answers: `/healthz`, and a JSON 404
/// naming it for anything else.
fn health_listener_router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(routes::healthz))
        .fallback(|| async { error::ApiError::HealthOnly })
        .with_state(state)
}

/// Serves the health listener on its own `listener` (own pool, own deadlines: see
/// [`config::HttpLimits::for_health_listener`]) until `shutdown` resolves.
pub async fn run_health(
    listener: tokio::net::TcpListener,
    state: AppState,
    limits: config::HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = health_listener_router(state);
    let services = listen::Services {
        app: router.clone(),
        health: router,
    };
    listen::serve(listener, services, limits.for_health_listener(), shutdown).await
}

/// Serves with the default [`config::HttpLimits`] until `shutdown` resolves, then drains
/// in-flight requests.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    run_with(listener, state, config::HttpLimits::default(), shutdown).await
}

/// Serves under `limits`: timeouts, the connection cap and its `/healthz` reserve (`listen`),
/// and the body limits every JSON route reads through `body::RequestBody`.
pub async fn run_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    limits: config::HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let services = listen::Services {
        app: router(state.clone()).layer(axum::Extension(body::BodyLimits::from(&limits))),
        health: health_router(state),
    };
    listen::serve(listener, services, limits, shutdown).await
}
