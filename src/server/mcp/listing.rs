//! server::mcp::listing: which tools `tools/list` shows, decided by the policies rather than by
//! Rust conditions. For each tool a representative read (`ClaudeDesign` `list_projects`,
//! `Projects` `project_info`) is prepared with the session's facts and decided on the live
//! snapshot; the tool is listed unless that probe is denied by an availability gate (a policy
//! whose id starts with [`GATE_PREFIX`], as in `policies/gates.cedar`). Other outcomes (an ask
//! for consent, a deny by some other rule) still list the tool: its calls are decided one by
//! one. A probe is not a call: it is neither logged nor counted, and nothing runs upstream.

use rmcp::model::Tool;
use serde_json::json;

use super::schema::{design_tool, projects_tool, DESIGN, PROJECTS};
use super::session::McpSession;
use crate::authz::{decide, Decision, Outcome};
use crate::server::gateway::{Arrival, FrontDoor, Pipeline};

/// Policies named `gates.*` close a tool for the whole deployment or session.
pub const GATE_PREFIX: &str = "gates.";

pub async fn listed(state: &Pipeline, session: &McpSession) -> Vec<Tool> {
    let mut tools = Vec::new();
    if open(state, session, DESIGN).await {
        tools.push(design_tool());
    }
    if open(state, session, PROJECTS).await {
        tools.push(projects_tool());
    }
    tools
}

/// The tool's probe is not closed by a gate; any error on the way closes it (fail closed).
async fn open(state: &Pipeline, session: &McpSession, tool: &str) -> bool {
    let probe = match tool {
        DESIGN => json!({"operation": "list_projects", "arguments": {}}),
        _ => json!({"method": "project_info"}),
    };
    let prepared = state
        .prepare(
            session.key.clone(),
            session.facts.clone(),
            (tool, probe),
            Arrival::at(FrontDoor::Mcp),
        )
        .await;
    let Ok(prepared) = prepared else {
        return false;
    };
    let snapshot = state.inner().policies.live();
    !gate_closed(&decide(&prepared.facts, &snapshot))
}

pub fn gate_closed(decision: &Decision) -> bool {
    decision.decision == Outcome::Deny
        && decision
            .policies
            .iter()
            .any(|policy| policy.starts_with(GATE_PREFIX))
}
