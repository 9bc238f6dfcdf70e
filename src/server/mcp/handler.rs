//! server::mcp::handler: askgate as an rmcp `ServerHandler` — it advertises the tools
//! capability, lists the tools the policies leave open ([`super::listing`]) and hands every
//! `tools/call` to [`super::call`]. One handler serves one MCP session.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use std::sync::Arc;

use axum::http::request::Parts;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::request::{CallRequest, Notices};
use super::session::McpSession;
use super::{call, listing, outcome};
use crate::server::gateway::Pipeline;

#[derive(Clone)]
pub struct Front {
    pub state: Pipeline,
    /// The `"mcp"` configuration.
    pub settings: Arc<crate::server::config::mcp::McpSettings>,
    /// The hook attestations a `tools/call` takes.
    pub attestations: crate::store::attestations::Attestations,
    /// The slots of calls held for an approver, shared by every session.
    pub held: Arc<super::held::HeldCalls>,
    /// The 2026-07-28 approval links (sealed `requestState`s and their redemptions).
    pub links: Arc<super::link::ApprovalLinks>,
}

impl Front {
    /// The `tools/call` path over this front's state, quota and links.
    pub fn calls(&self) -> call::Front<'_> {
        call::Front {
            state: &self.state,
            settings: &self.settings,
            attestations: &self.attestations,
            held: &self.held,
            links: &self.links,
        }
    }
}

const INSTRUCTIONS: &str = "askgate decides every call to Claude Design and Projects with its \
    policies: an allowed call runs, a denied one comes back as an error naming the reason, and \
    one that needs a person is held until an approver decides.";

impl ServerHandler for Front {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("askgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        tracing::info!(
            client = ?request.client_info,
            capabilities = ?request.capabilities,
            protocol = %request.protocol_version,
            "mcp client initialized"
        );
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let public_url = self.settings.public_url.as_deref();
        let parts = context.extensions.get::<Parts>();
        let Some(session) =
            parts.and_then(|parts| McpSession::of(parts, &context.meta, public_url))
        else {
            return Err(ErrorData::invalid_request(
                "this request carries no authenticated caller",
                None,
            ));
        };
        let tools = listing::listed(&self.state, &session).await;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let metrics = &self.state.inner().metrics;
        metrics.mcp_call(crate::server::metrics::McpPath::Service);
        let Some(parts) = context.extensions.get::<Parts>() else {
            // INVARIANT: rmcp puts the HTTP request's parts on every request it serves.
            let error = outcome::error("askgate: this request carries no authenticated caller");
            return Ok(error.into());
        };
        let request_of_call = CallRequest {
            meta: &context.meta,
            parts,
            cancelled: context.ct.clone(),
            notices: Notices::Peer(&context.peer),
        };
        Ok(self.calls().call(request, &request_of_call).await)
    }
}
