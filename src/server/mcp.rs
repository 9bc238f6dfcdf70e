//! server::mcp: the MCP front door — `serve` is an MCP server over Streamable HTTP at `/mcp`
//! (rmcp's `StreamableHttpService` mounted in the axum router). Agents connect with their
//! bearer token and see two tools, `ClaudeDesign` and `Projects`, decided by the same
//! pipeline as the HTTP API.
//!
//! Map: `auth` (the layer: bearer token, role, session ownership and quotas), `owners` (who
//! opened each MCP session), `session` (the caller and the session facts of a request), `handler` (the rmcp `ServerHandler`), `schema` (the tools'
//! shapes), `listing` (which tools the policies leave open), `link` (the 2026-07-28 approval link:
//! `input_required` with a sealed `requestState`), `call` (one `tools/call`
//! through the pipeline), `held` (the quota on held calls), `hold` (an asked call waiting for an approver), `outcome` (tool
//! results), `settings` (the `"mcp"` configuration).

pub mod auth;
pub mod call;
pub mod handler;
pub mod held;
pub mod hold;
pub mod link;
pub mod listing;
pub mod outcome;
pub mod owners;
pub mod schema;
pub mod session;
pub mod settings;

use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::gateway::AppState;

pub use settings::{McpSettings, RawMcp};

/// The path the front door is mounted at.
pub const PATH: &str = "/mcp";

/// `/mcp` with the auth layer in front of rmcp's service.
pub fn router(state: AppState) -> Router<AppState> {
    let sessions = Arc::new(LocalSessionManager::default());
    let settings = &state.inner().mcp;
    // Origins are validated even when none is listed (N4): no browser page is accepted
    // unless configured. Bodies obey the service's `http.max_body_bytes`.
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(settings.allowed_hosts.clone())
        .with_allowed_origins(settings.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(settings.max_body_bytes)
        .with_json_response(true);
    let owners = Arc::new(owners::SessionOwners::new(
        settings.max_sessions,
        settings.max_sessions_per_caller,
    ));
    let front = handler::Front {
        state: state.clone(),
        held: Arc::new(held::HeldCalls::new(
            settings.max_held,
            settings.max_held_per_caller,
        )),
        links: Arc::new(link::ApprovalLinks::new(
            state.inner().approvals.limits().max_pending,
        )),
    };
    let service =
        StreamableHttpService::new(move || Ok(front.clone()), Arc::clone(&sessions), config);
    let gate = auth::Gate {
        state,
        sessions,
        owners,
    };
    Router::new()
        .route_service(PATH, service)
        .route_layer(axum::middleware::from_fn_with_state(
            gate,
            auth::require_agent,
        ))
}
