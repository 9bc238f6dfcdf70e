//! server::app: the service's state as `serve` runs it — the decision pipeline and each
//! feature's own state beside it — and the one router made of the features' routers.

use axum::Router;

use super::admin::AdminState;
use super::console::ConsoleState;
use super::gateway::Pipeline;
use super::hook::HookState;
use super::mcp::McpState;

/// The whole service's state; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pipeline: Pipeline,
    pub console: ConsoleState,
    pub admin: AdminState,
    pub hook: HookState,
    /// The MCP front door's settings and parts (`server::mcp`).
    pub mcp: McpState,
}

impl AppState {
    /// The pipeline's own state (snapshots, stores, journal, metrics, clock).
    pub fn inner(&self) -> &super::gateway::Inner {
        self.pipeline.inner()
    }

    /// Every route: the HTTP API, the hook, MCP, the console and the admin routes, each on its
    /// own state.
    pub fn router(&self) -> Router {
        Router::new()
            .merge(super::routes::router(self.pipeline.clone()))
            .merge(super::hook::router(self.hook.clone()))
            .merge(super::mcp::router(self.pipeline.clone(), self.mcp.clone()))
            .merge(super::console::router(self.console.clone()))
            .merge(super::admin::router(self.admin.clone()))
    }
}
