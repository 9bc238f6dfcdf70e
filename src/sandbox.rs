//! sandbox: the upstream sandbox, a real loopback HTTP server that behaves like claude.ai for
//! Design and Projects, with state in memory. It owns routing, wiring and the public handle; it
//! must never be used as a mock inside the decision core, and never talks to the real claude.ai.
//!
//! Map: [`state`] (projects, consent, grants, plan tokens, state file), [`auth`] (bearer
//! tokens and scopes), [`token`] (the refresh endpoint), [`faults`] (scripted faults),
//! [`connection`] (connections that can be dropped), [`mcp`] (JSON-RPC and sessions),
//! [`catalog`] (`tools/list`), [`design`], [`design_writes`] and [`design_members`] (the operations), [`enforce`]
//! (consent, grants and plan tokens on `tools/call`), [`consent`], [`grants`], [`stats`],
//! [`control`] (`/_sandbox/*`), [`projects`] (the Projects side).

mod arguments;
mod auth;
mod catalog;
mod connection;
mod consent;
mod control;
mod design;
mod design_members;
mod design_writes;
mod enforce;
mod faults;
mod grants;
mod mcp;
pub mod projects;
mod state;
mod stats;
mod token;

#[cfg(test)]
mod testing;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use axum::routing::{get, post};
use axum::Router;

use self::auth::Credentials;
use self::faults::FaultBook;
use self::mcp::SessionBook;
use self::projects::ProjectsSandbox;
use self::state::{DesignStore, SandboxClock};
use self::stats::Counters;

/// The credentials the sandbox starts with, and where its state lives on disk (if anywhere).
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    pub access_token: String,
    pub refresh_token: String,
    pub scopes: Vec<String>,
    /// The bearer token accepted on the session (CCR) route of Projects.
    pub session_token: String,
    /// Loaded at start when it exists, written after every change of the Design state.
    pub state_file: Option<PathBuf>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            access_token: "sandbox-access-token".to_owned(),
            refresh_token: "sandbox-refresh-token".to_owned(),
            scopes: [
                "user:design:read",
                "user:design:write",
                "user:projects:read",
                "user:projects:write",
            ]
            .iter()
            .map(|scope| (*scope).to_owned())
            .collect(),
            session_token: "sandbox-session-token".to_owned(),
            state_file: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot read the state file `{path}`: {message}")]
    StateFileUnreadable { path: String, message: String },
    #[error("invalid state file `{path}`: {message}")]
    StateFileInvalid { path: String, message: String },
}

/// Everything the handlers share; one per sandbox.
pub(crate) struct Shared {
    pub(crate) config: SandboxConfig,
    pub(crate) design: DesignStore,
    pub(crate) credentials: Credentials,
    pub(crate) sessions: SessionBook,
    pub(crate) faults: FaultBook,
    pub(crate) counters: Counters,
    pub(crate) clock: SandboxClock,
    pub(crate) projects: ProjectsSandbox,
}

pub(crate) type SharedState = Arc<Shared>;

/// A running sandbox's handle; clones share the same state.
#[derive(Clone)]
pub struct Sandbox {
    shared: SharedState,
}

impl Sandbox {
    /// Builds a sandbox on the seed state, or on the state file when one is given and exists.
    pub fn new(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        let design = DesignStore::open(config.state_file.clone())?;
        let credentials = Credentials::new(&config);
        let shared = Shared {
            design,
            credentials,
            sessions: SessionBook::default(),
            faults: FaultBook::default(),
            counters: Counters::default(),
            clock: SandboxClock::default(),
            projects: ProjectsSandbox::seeded(),
            config,
        };
        Ok(Sandbox {
            shared: Arc::new(shared),
        })
    }

    /// Every route: Design, Projects, the token endpoint and the `/_sandbox/*` controls.
    pub fn router(&self) -> Router {
        let state = self.shared.clone();
        let design = Router::new()
            .route("/v1/design/mcp", post(mcp::handle))
            .route(
                "/v1/design/consent",
                get(consent::read)
                    .post(consent::record)
                    .delete(consent::revoke),
            )
            .route("/v1/design/grants", get(grants::list).post(grants::create))
            .with_state(state.clone());
        let upstream = design
            .merge(self.shared.projects.router())
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                auth::require_bearer,
            ))
            .merge(
                Router::new()
                    .route("/v1/oauth/token", post(token::refresh))
                    .with_state(state.clone()),
            )
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                faults::apply,
            ));
        upstream
            .merge(control::router(state.clone()))
            .layer(axum::middleware::from_fn_with_state(state, stats::count))
    }

    /// Serves on a bound listener until `shutdown` resolves (tests bind 127.0.0.1:0).
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let service = self
            .router()
            .into_make_service_with_connect_info::<connection::ConnectionHandle>();
        axum::serve(connection::DroppableListener::new(listener), service)
            .with_graceful_shutdown(shutdown)
            .await
    }

    /// The counters, as `GET /_sandbox/stats` returns them.
    pub fn stats(&self) -> serde_json::Value {
        stats::snapshot(&self.shared)
    }
}

#[cfg(test)]
mod design_tests;
#[cfg(test)]
mod tests;
