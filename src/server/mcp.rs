//! server::mcp: the MCP front door — `serve` is an MCP server over Streamable HTTP at `/mcp`
//! (rmcp's `StreamableHttpService` mounted in the axum router). Agents connect with their
//! bearer token and see two tools, `ClaudeDesign` and `Projects`, decided by the same
//! pipeline as the HTTP API.
//!
//! Map: `auth` (the layer: bearer token, role, session ownership and quotas), `owners` (who
//! opened each MCP session), `session` (the caller and the session facts of a request),
//! `handler` (the rmcp `ServerHandler`), `lean` (the stateless fast path: a 2026-07-28
//! `tools/call` served from rmcp's model types without its per-request service loop; all else
//! goes to rmcp's service), `request` (what a call knows of its request on either path),
//! `schema` (the tools' shapes), `listing` (which tools the policies leave open), `link` (the
//! 2026-07-28 approval link: `input_required` with a sealed `requestState`), `call` (one
//! `tools/call` through the pipeline), `held` (the quota on held calls), `hold` (an asked call
//! waiting for an approver), `outcome` (tool results); the `"mcp"` configuration is `server::config::mcp`.

pub mod auth;
pub mod call;
pub mod handler;
pub mod held;
pub mod hold;
pub mod lean;
pub mod link;
pub mod listing;
pub mod outcome;
pub mod owners;
pub mod request;
pub mod schema;
pub mod session;

use std::sync::Arc;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::gateway::Pipeline;

pub use super::config::mcp::{McpSettings, RawMcp};

/// The path the front door is mounted at.
pub const PATH: &str = "/mcp";

/// `/mcp` (the fast path, then rmcp's service) with the auth layer in front, `/register`, and
/// the RFC 9728 metadata of askgate as a protected resource.
/// The MCP front door's own parts: its settings, the hook attestations it takes (the same
/// books as `hook::HookState::attestations`) and the fleet its approval links are shared in.
#[derive(Clone)]
pub struct McpState {
    pub settings: Arc<McpSettings>,
    pub attestations: crate::store::attestations::Attestations,
    pub fleet: Option<Arc<crate::store::postgres::Fleet>>,
}

pub fn router(state: Pipeline, mcp: McpState) -> Router {
    let McpState {
        settings,
        attestations,
        fleet,
    } = mcp;
    let sessions = Arc::new(LocalSessionManager::default());
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
        settings: Arc::clone(&settings),
        attestations,
        held: Arc::new(held::HeldCalls::new(
            settings.max_held,
            settings.max_held_per_caller,
        )),
        // Room for every open approval, and always more than the retries held at once (P2).
        links: Arc::new({
            let bound = state
                .inner()
                .approving
                .approvals
                .limits()
                .max_pending
                .max(settings.max_held.saturating_add(1));
            match &fleet {
                Some(fleet) => link::ApprovalLinks::for_fleet(Arc::clone(fleet), bound),
                None => link::ApprovalLinks::new(bound),
            }
        }),
    };
    let allowed_hosts = settings.allowed_hosts.clone().into();
    let max_body_bytes = settings.max_body_bytes;
    let service = {
        let front = front.clone();
        StreamableHttpService::new(move || Ok(front.clone()), Arc::clone(&sessions), config)
    };
    let entry = lean::Entry {
        front,
        full: service,
        allowed_hosts,
        max_body_bytes,
    };
    let metadata = Router::new()
        .route(
            crate::server::auth::resource::WELL_KNOWN,
            axum::routing::get(auth::protected_resource),
        )
        .route(
            &format!("{}{PATH}", crate::server::auth::resource::WELL_KNOWN),
            axum::routing::get(auth::protected_resource),
        )
        .with_state(state.clone());
    let gate = auth::Gate {
        state,
        sessions,
        owners,
    };
    Router::new()
        .route_service(PATH, axum::routing::any(lean::entry).with_state(entry))
        .route_layer(axum::middleware::from_fn_with_state(
            gate,
            auth::require_agent,
        ))
        .route(
            auth::REGISTER_PATH,
            axum::routing::post(auth::no_registration).with_state(settings.public_url.clone()),
        )
        .merge(metadata)
}
