//! server::mcp::call: one `tools/call` through exactly the pipeline of `/v1/design/call` and
//! `/v1/projects/call` — `AppState::prepare` (parse, observe, facts) then `AppState::handle`
//! (decide, decision log, metrics, executor or a pending approval) — with the outcome turned
//! into a tool result. An ask holds the call ([`super::hold`]).

use rmcp::model::{CallToolRequestParams, CallToolResult, RequestMetaObject};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::Value;
use std::sync::Arc;

use super::held::{HeldCalls, HeldLimit};

use super::hold::Hold;
use super::outcome;
use super::schema::{DESIGN, PROJECTS};
use super::session::McpSession;
use crate::server::approvals::{ApprovalStatus, ApprovalView};
use crate::server::gateway::{AppState, Handled};

pub async fn call(
    state: &AppState,
    held: &Arc<HeldCalls>,
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
    let input = Value::Object(request.arguments.unwrap_or_default());
    let prepared = state
        .prepare(session.key.clone(), session.facts.clone(), tool, input)
        .await;
    let mut prepared = match prepared {
        Ok(prepared) => prepared,
        Err(error) => return outcome::refused_input(&error),
    };
    prepared.tool_use_id = tool_use_id(&context.meta);
    let decision_id = prepared.decision_id.clone();
    match state.handle_held_open(&session.caller, prepared).await {
        Err(error) => outcome::error(&format!(
            "askgate refused this call: {error} (decision {decision_id})"
        )),
        Ok(Handled::Allowed { result, .. }) => outcome::upstream(result),
        Ok(Handled::Denied { decision }) => outcome::denied(&decision_id, &decision),
        Ok(Handled::Asked { approval, .. }) if approval.status != ApprovalStatus::Pending => {
            outcome::not_approved(&approval, &decision_id)
        }
        Ok(Handled::Asked { approval, .. }) => {
            let _permit = match held.try_hold(&session.caller.principal) {
                Ok(permit) => permit,
                Err(limit) => return not_held(state, &approval, &decision_id, &limit).await,
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

/// Past `mcp.max_held` (or the caller's `mcp.max_held_per_caller`) the call is answered at
/// once, so its approval is withdrawn: nobody would receive the result of approving it.
async fn not_held(
    state: &AppState,
    approval: &ApprovalView,
    decision_id: &str,
    limit: &HeldLimit,
) -> CallToolResult {
    let why = format!(
        "withdrawn by askgate: {limit}, so the call from `{}` was not held and nobody would \
         receive its result",
        approval.requested_by
    );
    let status = match state.withdraw(&approval.id, &why).await {
        Ok(view) => view.status,
        Err(_) => {
            let now = state.inner().clock.now();
            let view = state.inner().approvals.view(&approval.id, now).await;
            view.map_or(approval.status, |view| view.status)
        }
    };
    outcome::error(&format!(
        "askgate holds too many calls for approval to hold this one: approval `{}` is {} \
         (decision {decision_id})",
        approval.id,
        status.as_str()
    ))
}

/// The `_meta` key Claude Code puts its id for the tool call under.
const TOOL_USE_ID: &str = "claudecode/toolUseId";

/// The longest tool-use id logged, in bytes (Claude Code's are `toolu_` and 24 characters).
const TOOL_USE_ID_BYTES: usize = 128;

/// The client's id for this call, for the decision log only: it decides nothing. One that is
/// not a short printable string is not logged (the call goes on; the log stays clean).
fn tool_use_id(meta: &RequestMetaObject) -> Option<String> {
    meta.get(TOOL_USE_ID)
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty() && id.len() <= TOOL_USE_ID_BYTES)
        .filter(|id| !id.chars().any(char::is_control))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(value: Value) -> RequestMetaObject {
        let mut meta = RequestMetaObject::new();
        meta.insert(TOOL_USE_ID.to_string(), value);
        meta
    }

    #[test]
    fn the_tool_use_id_is_taken_only_as_a_short_printable_string() {
        let id = tool_use_id(&meta(Value::from("toolu_01ABC")));
        assert_eq!(id.as_deref(), Some("toolu_01ABC"));
        assert_eq!(tool_use_id(&RequestMetaObject::new()), None);
        assert_eq!(tool_use_id(&meta(Value::from(7))), None);
        assert_eq!(tool_use_id(&meta(Value::from("a\nb"))), None);
        assert_eq!(tool_use_id(&meta(Value::from("x".repeat(129)))), None);
    }
}
