//! server::mcp::outcome: what a `tools/call` answers, as an MCP tool result — the executor's
//! upstream result as it is (caps and notices already applied), or an `isError` result that
//! names why: a deny (reason, determining policies, decision id), bad input (the field), a
//! refused, expired or withdrawn approval, or a failure on the way. Never a JSON-RPC error.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Value};

use crate::authz::Decision;
use crate::server::error::ApiError;
use crate::store::approvals::{ApprovalStatus, ApprovalView};

/// The executor's result is already an MCP result (`content`, `isError`, maybe
/// `structuredContent`); anything else is passed on as its JSON text.
/// The result is taken apart, not copied: its content moves into the tool result.
pub fn upstream(result: Value) -> CallToolResult {
    let Value::Object(mut fields) = result else {
        return error(&result.to_string());
    };
    let is_error = fields.get("isError").and_then(Value::as_bool) == Some(true);
    let Some(raw) = fields.remove("content") else {
        return error(&Value::Object(fields).to_string());
    };
    let content = match serde_json::from_value::<Vec<ContentBlock>>(raw) {
        Ok(content) => content,
        Err(problem) => {
            return error(&format!(
                "askgate: the upstream answered content that is not MCP content ({problem})"
            ))
        }
    };
    let mut out = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = fields.remove("structuredContent");
    out
}

pub fn denied(decision_id: &str, decision: &Decision) -> CallToolResult {
    let text = format!(
        "askgate denied this call: {} (policies: {}; decision {decision_id})",
        decision.reason,
        decision.policies.join(", ")
    );
    let mut out = error(&text);
    out.structured_content = Some(json!({
        "decision": "deny", "reason": decision.reason, "policies": decision.policies,
        "decision_id": decision_id
    }));
    out
}

/// Input the pipeline refused before deciding: it names the field.
pub fn refused_input(error: &ApiError) -> CallToolResult {
    match error {
        ApiError::BadCall(call) => self::error(&format!(
            "invalid input `{}`: {} (nothing was decided or run)",
            call.field, call.message
        )),
        other => self::error(&format!("askgate could not take this call: {other}")),
    }
}

/// What a held call answers once its approval settled: the call's result when it ran
/// (followed by a line naming the approval), or why it did not run. Both name the approval's
/// page, where the approver decided.
pub fn settled(view: &ApprovalView, decision_id: &str, url: &str) -> CallToolResult {
    if view.status != ApprovalStatus::Completed {
        return not_approved(view, decision_id, Some(url));
    }
    let Some(result) = view.result.clone() else {
        return error("the approved call finished without a result");
    };
    let mut out = upstream(result);
    let by = view.approved_by.as_deref().unwrap_or("an approver");
    out.content.push(ContentBlock::text(format!(
        "askgate: this call ran once `{by}` approved approval `{}` ({url})",
        view.id
    )));
    out
}

/// The approval ended without running the call (`url`: its page, when the caller knows it).
pub fn not_approved(view: &ApprovalView, decision_id: &str, url: Option<&str>) -> CallToolResult {
    let why = match view.status {
        ApprovalStatus::Refused => "an approver refused it",
        ApprovalStatus::Expired => "it expired before an approver answered",
        ApprovalStatus::Withdrawn => {
            "no approver answered while the call waited, so askgate withdrew the approval and \
             it will never run; make the call again to ask again"
        }
        ApprovalStatus::Running => {
            "an approver approved it as the wait ended; it is running, and its result is the \
             approval's"
        }
        _ => "askgate lost track of it",
    };
    let said = approver_said(view);
    let at = url.map(|url| format!(" at {url}")).unwrap_or_default();
    let mut out = error(&format!(
        "askgate held this call for approval `{}`{at} ({}), and it did not run: {why}{said} \
         (decision {decision_id})",
        view.id,
        view.status.as_str()
    ));
    out.structured_content = Some(json!({
        "decision": "ask", "approval_id": view.id, "status": view.status,
        "decision_id": decision_id
    }));
    out
}

/// A refusal's words (who refused, their note) as the agent should read them.
fn approver_said(view: &ApprovalView) -> String {
    if view.status != ApprovalStatus::Refused {
        return String::new();
    }
    let message = view
        .result
        .as_ref()
        .and_then(|result| result.pointer("/content/0/text"))
        .and_then(Value::as_str);
    message.map(|text| format!(" — {text}")).unwrap_or_default()
}

pub fn error(text: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
