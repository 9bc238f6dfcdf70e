//! server: `askgate serve` — the HTTP JSON service. An adapter over the decision core and the
//! executor: `router(state)` is testable in process; `run(listener, state, shutdown)` takes a
//! bound listener so tests bind port 0.
//!
//! The pipeline is at the bottom; each feature sits above it on its own state, with its own
//! router, and `app` joins them. Nothing here imports a module above it.
//!
//! Map — the pipeline and what it stands on: `gateway` (the [`gateway::Pipeline`]: decide →
//! execute / hold / refuse), `prepared` (a call ready to decide, and its front door),
//! `observe` (upstream facts before a decision), `execute` (follow-ups and state events after),
//! `approving` (what an ask becomes: holding the call, the approver's answer, the sweeper; the
//! books themselves are `store::approvals`), `account` (per-account and per-session state over
//! the store), `journal` (writing the decision log), `notify` (the approval webhook),
//! `present` (approvals and untrusted text as a person reads them), `policies` (the policy sets
//! in force, one generation), `reload` (rebuilding them), `metrics`, `caller` (bearer
//! tokens and roles), `wire` (bodies), `clock`, `error`. The features: `routes` (the HTTP
//! API), `hook` (Claude Code's `PreToolUse` hook, tightening only), `mcp` (the MCP front door
//! at `/mcp`), `console` (the approvers' web page at `/console`), `admin` (`/healthz`,
//! `/metrics`, reload). Around them: `app` (the service's state and its one router), `boot`
//! (a running service from a validated `Config`), `config` (file < env < flags, validated),
//! `telemetry` (the service's own log lines on stderr),
//! `listen` (accept loop, connection cap, timeouts), `body` (size limit and read deadline).

pub mod account;
pub mod admin;
pub mod app;
pub mod approving;
pub mod auth;
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
pub mod intake;
pub mod journal;
pub mod listen;
pub mod mcp;
pub mod metrics;
pub mod notify;
pub mod observe;
pub mod policies;
pub mod prepared;
pub mod present;
pub mod reload;
pub mod routes;
pub mod telemetry;
pub mod wire;

use std::future::Future;

use axum::Router;

pub use app::AppState;

pub fn router(state: AppState) -> Router {
    state.router()
}

/// Serves the health listener on its own `listener` (own pool, own deadlines: see
/// [`config::HttpLimits::for_health_listener`]) until `shutdown` resolves.
pub async fn run_health(
    listener: tokio::net::TcpListener,
    state: AppState,
    limits: config::HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = admin::health_listener_router(state.admin);
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
        health: admin::health_router(state.admin),
    };
    listen::serve(listener, services, limits, shutdown).await
}
