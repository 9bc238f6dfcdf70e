//! server::mcp::outcome: what a `tools/call` answers, as an MCP tool result — the executor's
//! upstream result as it is (caps and notices already applied), or an `isError` result that
//! names why: a deny (reason, determining policies, decision id), bad input (the field), a
//! refused, expired or withdrawn approval, an approved call that failed (the approval's own
//! result and error kind, and whether the call ran), or a failure on the way. Never a
//! JSON-RPC error.

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
    let mut structured = json!({
        "decision": "deny", "reason": decision.reason, "policies": decision.policies,
        "decision_id": decision_id
    });
    if let (false, Some(fields)) = (decision.step_up.is_empty(), structured.as_object_mut()) {
        // What `lean` answers with OAuth's step-up challenge (2026-07-28).
        fields.insert("step_up".to_string(), json!(decision.step_up));
    }
    out.structured_content = Some(structured);
    out
}

/// The scopes a denied result asks a token to step up to (its `step_up`), if any.
pub fn step_up_of(result: &CallToolResult) -> Option<Vec<String>> {
    let scopes: Vec<String> = result
        .structured_content
        .as_ref()?
        .get("step_up")?
        .as_array()?
        .iter()
        .filter_map(|scope| scope.as_str().map(str::to_string))
        .collect();
    (!scopes.is_empty()).then_some(scopes)
}

/// Input the pipeline refused before deciding: it names the field.
pub fn refused_input(error: &ApiError) -> CallToolResult {
    match error {
        ApiError::BadCall(call) => self::error(&format!(
            "invalid input `{}`: {} (nothing was decided or run)",
            call.field, call.message
        )),
        other => self::error(&format!(
            "askgate could not take this call: {}",
            other.public_message()
        )),
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

/// The approval ended without a result for the call (`url`: its page, when the caller knows
/// it): refused, expired or withdrawn (it never ran), still running when the wait ended, or
/// approved and failed — then the approval's own result says why, with its error kind, and
/// whether the call ran: "it did not run" only when it did not.
pub fn not_approved(view: &ApprovalView, decision_id: &str, url: Option<&str>) -> CallToolResult {
    let at = url.map(|url| format!(" at {url}")).unwrap_or_default();
    let head = format!(
        "askgate held this call for approval `{}`{at} ({})",
        view.id,
        view.status.as_str()
    );
    let failure = Failure::of(view);
    let text = match view.status {
        ApprovalStatus::Failed => failure.sentence(view),
        status => format!("{}{}", unrun(status), approver_said(view)),
    };
    let mut out = error(&format!("{head}, {text} (decision {decision_id})"));
    let structured = if view.status == ApprovalStatus::Failed {
        json!({
            "decision": "ask", "approval_id": view.id, "status": view.status,
            "decision_id": decision_id, "error": failure.kind, "ran": failure.ran.as_str(),
            "result": failure.text
        })
    } else {
        json!({
            "decision": "ask", "approval_id": view.id, "status": view.status,
            "decision_id": decision_id
        })
    };
    out.structured_content = Some(structured);
    out
}

/// Why an approval that is not failed (and not completed) has no result for the call.
fn unrun(status: ApprovalStatus) -> &'static str {
    match status {
        ApprovalStatus::Refused => "and it did not run: an approver refused it",
        ApprovalStatus::Expired => "and it did not run: it expired before an approver answered",
        ApprovalStatus::Withdrawn => {
            "and it did not run: no approver answered while the call waited, so askgate \
             withdrew the approval and it will never run; make the call again to ask again"
        }
        ApprovalStatus::Running => {
            "and an approver approved it as the wait ended: it is still running, and askgate \
             stopped waiting for it; its result will be on the approval's page, so read it there \
             before making the call again"
        }
        ApprovalStatus::Pending => "and it has not run: nobody answered yet",
        ApprovalStatus::Completed | ApprovalStatus::Failed => "and it ended",
    }
}

/// Whether an approved call that failed reached the upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    /// It ran and the upstream (or its follow-up) answered with an error.
    Yes,
    /// It never left askgate: decided again and refused, or a step before the call failed.
    No,
    /// The run deadline passed: it may or may not have reached the upstream.
    Unknown,
}

impl Ran {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::No => "no",
            Self::Unknown => "unknown",
        }
    }
}

/// A failed approval's result as the agent reads it: its error kind, its text, and whether the
/// call ran (from the kind: the steps that fail before the call goes upstream are known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: String,
    pub text: String,
    pub ran: Ran,
}

impl Failure {
    pub fn of(view: &ApprovalView) -> Failure {
        let result = view.result.as_ref();
        let kind = result
            .and_then(|result| result.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        let text = result
            .and_then(|result| result.get("content"))
            .and_then(Value::as_array)
            .map(|blocks| {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter_map(|block| block.get("text").and_then(Value::as_str))
                    .collect();
                texts.join(" ")
            })
            .filter(|text| !text.is_empty())
            .unwrap_or_else(|| "the approval recorded no reason".to_string());
        let ran = match kind.as_str() {
            // Decided again at approval and refused; or the consent POST, or the state
            // recorded before the call, failed: nothing of the call went upstream.
            "denied_at_approval" | "approval_mismatch" | "call_changed" | "consent" | "store" => {
                Ran::No
            }
            "deadline" | "unknown" => Ran::Unknown,
            _ => Ran::Yes,
        };
        Failure { kind, text, ran }
    }

    fn sentence(&self, view: &ApprovalView) -> String {
        let by = view.approved_by.as_deref().unwrap_or("an approver");
        let (kind, text) = (&self.kind, &self.text);
        match self.ran {
            Ran::Yes => {
                format!("`{by}` approved it and it ran, but it failed (error `{kind}`): {text}")
            }
            Ran::No => format!("`{by}` approved it, but it did not run (error `{kind}`): {text}"),
            Ran::Unknown => format!(
                "`{by}` approved it, but its run did not finish (error `{kind}`): {text}; \
                 check before making the call again"
            ),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(kind: &str, text: &str) -> ApprovalView {
        let view = json!({
            "id": "ap_1", "status": "failed", "requested_by": "agent", "session_id": "s",
            "summary": {"tool": "ClaudeDesign", "operation": "delete_files", "project_id": "p1",
                        "targets": ["a.html"], "plan_writes": [], "plan_deletes": [], "writes": true},
            "card": {"kind": "batch", "tool": "ClaudeDesign", "operation": "delete_files",
                     "project_id": "p1", "targets": ["a.html"], "message": "m", "scope": "s", "also": []},
            "created_at": "2026-12-04T10:00:00Z", "expires_at": "2026-12-04T10:05:00Z",
            "approved_by": "alice",
            "result": {"content": [{"type": "text", "text": text}], "isError": true, "error": kind}
        });
        serde_json::from_value(view).unwrap()
    }

    fn text_of(result: &CallToolResult) -> String {
        serde_json::to_value(result).unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// A1 / P6: "it did not run" only when it did not; a run past its deadline may have
    /// reached the upstream; every failure carries the approval's own words and kind.
    #[test]
    fn a1_p6_a_failed_approval_says_whether_the_call_ran_with_its_reason() {
        let cases = [
            ("upstream", "HTTP 404 gone", "`alice` approved it and it ran, but it failed (error `upstream`): HTTP 404 gone"),
            ("denied_at_approval", "now denied: frozen", "`alice` approved it, but it did not run (error `denied_at_approval`): now denied: frozen"),
            ("deadline", "the call may or may not have reached the upstream", "`alice` approved it, but its run did not finish (error `deadline`): the call may or may not have reached the upstream; check before making the call again"),
        ];
        for (kind, said, expected) in cases {
            let text = text_of(&not_approved(
                &failed(kind, said),
                "d1",
                Some("http://h/console/approvals/ap_1"),
            ));
            assert!(text.contains(expected), "{text}");
            assert!(!text.contains("lost track"), "{text}");
            assert!(text.starts_with("askgate held this call for approval `ap_1` at http://h/console/approvals/ap_1 (failed), "), "{text}");
        }
    }
}
