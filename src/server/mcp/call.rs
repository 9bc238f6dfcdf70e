//! server::mcp::call: one `tools/call` through exactly the pipeline of `/v1/design/call` and
//! `/v1/projects/call` — `AppState::prepare` (parse, observe, facts) then `AppState::handle`
//! (decide, decision log, metrics, executor or a pending approval) — with the outcome turned
//! into a tool result. An ask holds the call ([`super::hold`]).

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::Value;
use tokio::sync::Semaphore;

use super::hold::Hold;
use super::outcome;
use super::schema::{DESIGN, PROJECTS};
use super::session::McpSession;
use crate::server::approvals::ApprovalStatus;
use crate::server::gateway::{AppState, Handled};

pub async fn call(
    state: &AppState,
    held: &Semaphore,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let public_url = state.inner().mcp.public_url.as_deref();
    let Some(session) = McpSession::of(context, public_url) else {
        // INVARIANT: the auth layer puts the caller on every `/mcp` request.
        return outcome::error("askgate: this request carries no authenticated caller");
    };
    let tool = request.name.as_ref();
    if !matches!(tool, DESIGN | PROJECTS) {
        return outcome::error(&format!(
            "invalid input `name`: unknown tool `{tool}`; use `{DESIGN}` or `{PROJECTS}`"
        ));
    }
    let input = Value::Object(request.arguments.clone().unwrap_or_default());
    let prepared = match state.prepare(tool, &session.facts, input).await {
        Ok(prepared) => prepared,
        Err(error) => return outcome::refused_input(&error),
    };
    let decision_id = prepared.decision_id.clone();
    match state.handle(&session.caller, prepared).await {
        Err(error) => outcome::error(&format!(
            "askgate refused this call: {error} (decision {decision_id})"
        )),
        Ok(Handled::Allowed { result, .. }) => outcome::upstream(result),
        Ok(Handled::Denied { decision }) => outcome::denied(&decision_id, &decision),
        Ok(Handled::Asked { approval, .. }) if approval.status != ApprovalStatus::Pending => {
            outcome::not_approved(&approval, &decision_id)
        }
        Ok(Handled::Asked { approval, .. }) => {
            let Ok(_permit) = held.try_acquire() else {
                return outcome::error(&format!(
                    "askgate holds too many calls for approval to hold this one: approval `{}` \
                     stays pending (decision {decision_id})",
                    approval.id
                ));
            };
            Hold {
                state,
                approval: &approval,
                decision_id: &decision_id,
                peer: &context.peer,
                progress: context.meta.get_progress_token(),
                cancelled: context.ct.clone(),
                base_url: session.base_url,
            }
            .result()
            .await
        }
    }
}
