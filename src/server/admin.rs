//! server::admin: the operator's side of the service — `/healthz` (also the only route of a
//! connection past the cap and of the separate health listener), `/metrics`, `/v1/admin/reload`,
//! and the reloads that a changed policy directory or `SIGHUP` start; `/metrics`' text is also
//! what is pushed as OTLP metrics when export is on.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use super::error::ApiError;
use super::gateway::Pipeline;
use super::intake::Approver;
use super::journal::LogHealth;
use super::telemetry::push;

/// The operator's state beside the pipeline.
#[derive(Clone)]
pub struct AdminState {
    pub pipeline: Pipeline,
    /// The bearer token `GET /metrics` requires, if one is configured.
    pub metrics_token: Option<String>,
    /// What rebuilds the policy generation from its directories (`None`: reload is not
    /// configured, as in tests that build a service from policy text).
    pub reloader: Option<Arc<super::reload::Reloader>>,
    /// This replica's place in the fleet (`serve --store postgres://…`); `None` in memory.
    pub fleet: Option<Arc<crate::store::postgres::Fleet>>,
}

impl AdminState {
    /// Rebuilds the policy generation from its directories and swaps it if valid.
    pub async fn reload(&self) -> super::reload::ReloadReport {
        let policies = &self.pipeline.inner().policies;
        let current = policies.current();
        let Some(reloader) = &self.reloader else {
            return super::reload::ReloadReport {
                reloaded: false,
                snapshot: current.live.hash().to_string(),
                problems: vec!["reload is not configured".to_string()],
            };
        };
        reloader
            .reload(&current, |generation| policies.swap(generation))
            .await
    }
}

impl axum::extract::FromRef<AdminState> for Pipeline {
    fn from_ref(state: &AdminState) -> Pipeline {
        state.pipeline.clone()
    }
}

/// `/healthz`, `/metrics` and `/v1/admin/reload`.
pub fn router(state: AdminState) -> Router {
    Router::new()
        .route("/v1/admin/reload", post(reload))
        .route("/v1/admin/log-key", get(log_key))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .with_state(state)
}

/// What a reserved connection (past the connection cap) may ask: `/healthz`, nothing else.
pub fn health_router(state: AdminState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .fallback(|| async { ApiError::Busy })
        .with_state(state)
}

/// What the separate health listener (`health_listen`) answers: `/healthz`, and a JSON 404
/// naming it for anything else.
pub fn health_listener_router(state: AdminState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .fallback(|| async { ApiError::HealthOnly })
        .with_state(state)
}

/// `GET /v1/admin/log-key`: the public key the decision log's checkpoints are signed with
/// (public, so no token), for `askgate log verify --key`; 404 without a log.
async fn log_key(State(admin): State<AdminState>) -> axum::response::Response {
    let inner = admin.pipeline.inner();
    match inner.journal.checkpoint_key() {
        Some(key) => Json(json!({
            "key": key,
            "algorithm": "ed25519",
            "replica": admin.fleet.as_ref().map(|fleet| fleet.replica().to_string()),
        }))
        .into_response(),
        None => (
            axum::http::StatusCode::NOT_FOUND,
            Json(json!({"error": "no_log", "message": "this service keeps no decision log (--log-dir DIR)"})),
        )
            .into_response(),
    }
}

pub async fn healthz(State(admin): State<AdminState>) -> Json<Value> {
    let state = &admin.pipeline;
    let generation = state.inner().policies.current();
    let snapshot = &generation.live;
    let reload = (admin.reloader.as_ref()).map(|reloader| json!(reloader.status()));
    let shadow = generation
        .shadow
        .as_ref()
        .map(|shadow| shadow.hash().to_string());
    let log = state.inner().journal.health(state.inner().clock.now());
    let store = match &admin.fleet {
        Some(fleet) => fleet.health(),
        None => crate::store::account::memory_health(),
    };
    let degraded = reload
        .as_ref()
        .is_some_and(|status| !status["last_error"].is_null())
        || log.as_ref().is_some_and(LogHealth::is_failing)
        || !store.ready;
    Json(json!({
        "status": if degraded { "degraded" } else { "ok" },
        "snapshot": snapshot.hash(),
        "policies": snapshot.len(),
        "shadow": shadow,
        "reload": reload,
        "log": log,
        "store": store,
    }))
}

pub async fn reload(
    Approver(_caller): Approver,
    State(admin): State<AdminState>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(json!(admin.reload().await)))
}

/// `GET /metrics`: open unless `metrics_token` is configured, then that bearer token only.
pub async fn metrics(
    State(admin): State<AdminState>,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    let state = &admin.pipeline;
    if let Some(expected) = &admin.metrics_token {
        super::caller::require_token(&headers, expected)?;
    }
    let text = metrics_text(state).await;
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    ))
}

/// `/metrics`' text: the pipeline's metrics and what this reading asks of the others (also
/// what is pushed as OTLP metrics, `telemetry::push`).
pub async fn metrics_text(state: &Pipeline) -> String {
    let pending = state
        .inner()
        .approving
        .approvals
        .pending_count(state.inner().clock.now())
        .await;
    let mut scraped =
        super::metrics::scraped::registry(pending, &state.inner().approving.notifier.deliveries);
    state.inner().journal.scraped(&mut scraped);
    state.inner().metrics.render(&scraped)
}

/// Pushes `pipeline`'s `/metrics` as OTLP metrics when `exporting` exports them: read now,
/// then every [`push::REFRESH`] for as long as the runtime runs.
pub async fn push_metrics(exporting: &super::telemetry::Exporting, pipeline: Pipeline) {
    let Some(meters) = &exporting.meters else {
        return;
    };
    let first = metrics_text(&pipeline).await;
    let mut pushed = push::Push::start(meters, push::Reading::parse(&first));
    tokio::spawn(async move {
        let mut every = tokio::time::interval(push::REFRESH);
        loop {
            every.tick().await;
            let text = metrics_text(&pipeline).await;
            pushed.update(push::Reading::parse(&text));
        }
    });
}

/// Polls the directories every `every` and reloads when their fingerprint changes.
pub fn spawn_watcher(state: AdminState, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(reloader) = state.reloader.clone() else {
            return;
        };
        loop {
            // Compared with what the running set was loaded from, so a change made before the
            // watcher started (or during a load) is applied too.
            if reloader.fingerprint() != reloader.loaded_from() {
                state.reload().await;
            }
            tokio::time::sleep(every).await;
        }
    })
}

/// Reloads on SIGHUP (Unix).
pub fn spawn_sighup(state: AdminState) {
    tokio::spawn(async move {
        let Ok(mut hangups) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            return;
        };
        while hangups.recv().await.is_some() {
            state.reload().await;
        }
    });
}
