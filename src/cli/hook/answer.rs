//! cli::hook::answer: the service's answer as this command reads it (finding N5). The body is
//! parsed into this module's own hook-output type (`deny_unknown_fields`) and only what was
//! parsed is printed, never the body: no opinion (`{}`), or a `PreToolUse` `deny` or `ask`
//! with a reason. Anything else — `allow`, `defer`, a legacy top-level `decision`,
//! `continue`, another event, `updatedInput` or any extra field — is refused, naming what it
//! saw, and the caller blocks the call. Must not accept an answer that loosens the client.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The client caps a hook output string at 10,000 characters; a longer reason is refused.
const REASON_CHARS: usize = 10_000;

/// An answer this command relays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookAnswer {
    #[serde(
        rename = "hookSpecificOutput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub specific: Option<PreToolUseAnswer>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PreToolUseAnswer {
    pub hook_event_name: HookEvent,
    pub permission_decision: Tightening,
    pub permission_decision_reason: String,
}

/// The only event this command answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HookEvent {
    PreToolUse,
}

/// The only decisions relayed: askgate tightens, it never allows or defers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tightening {
    Deny,
    Ask,
}

/// Why an answer is not relayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("the service's answer is not a hook output this command relays ({0})")]
    Shape(String),
    #[error("the service's answer has an empty `permissionDecisionReason`")]
    EmptyReason,
    #[error(
        "the service's `permissionDecisionReason` is {0} characters long: at most {REASON_CHARS}"
    )]
    LongReason(usize),
}

impl HookAnswer {
    /// Reads the service's body; only `{}`, `deny` and `ask` for `PreToolUse` pass.
    pub fn parse(body: &[u8]) -> Result<HookAnswer, AnswerError> {
        let shape = |error: serde_json::Error| AnswerError::Shape(error.to_string());
        let value: Value = serde_json::from_slice(body).map_err(shape)?;
        objects_only(&value)?;
        let answer = HookAnswer::deserialize(&value).map_err(shape)?;
        if let Some(specific) = &answer.specific {
            let reason = &specific.permission_decision_reason;
            if reason.trim().is_empty() {
                return Err(AnswerError::EmptyReason);
            }
            let chars = reason.chars().count();
            if chars > REASON_CHARS {
                return Err(AnswerError::LongReason(chars));
            }
        }
        Ok(answer)
    }

    /// What the client reads on stdout.
    pub fn to_json(&self) -> String {
        // INVARIANT: two enums and a string serialize infallibly.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// serde would also read a struct from an array (`[]` as `{}`): only objects are answers.
fn objects_only(value: &Value) -> Result<(), AnswerError> {
    let not_object = |what: &str, value: &Value| {
        let kind = match value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        Err(AnswerError::Shape(format!(
            "{what} is {kind}, not an object"
        )))
    };
    match value.get("hookSpecificOutput") {
        _ if !value.is_object() => not_object("the answer", value),
        Some(specific) if !specific.is_object() => not_object("`hookSpecificOutput`", specific),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> String {
        HookAnswer::parse(body.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn no_opinion_deny_and_ask_pass_and_print_as_parsed() {
        assert_eq!(HookAnswer::parse(b"{}").unwrap().to_json(), "{}");
        let deny = r#"{"hookSpecificOutput": {"permissionDecisionReason": "no",
            "hookEventName": "PreToolUse", "permissionDecision": "deny"}}"#;
        assert_eq!(
            HookAnswer::parse(deny.as_bytes()).unwrap().to_json(),
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}"#
        );
        let ask = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"why"}}"#;
        assert_eq!(HookAnswer::parse(ask.as_bytes()).unwrap().to_json(), ask);
    }

    #[test]
    fn every_loosening_or_unknown_shape_is_refused_naming_what_it_saw() {
        for (body, named) in [
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"x"}}"#,
                "`allow`",
            ),
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer","permissionDecisionReason":"x"}}"#,
                "`defer`",
            ),
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny","permissionDecisionReason":"x"}}"#,
                "`PostToolUse`",
            ),
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"x","updatedInput":{}}}"#,
                "`updatedInput`",
            ),
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#,
                "`permissionDecisionReason`",
            ),
            (r#"{"decision":"approve"}"#, "`decision`"),
            (r#"{"continue":true}"#, "`continue`"),
            (r#"{"systemMessage":"hi"}"#, "`systemMessage`"),
            (
                r#"{"hookSpecificOutput":null}"#,
                "`hookSpecificOutput` is null",
            ),
            (
                r#"{"hookSpecificOutput":["PreToolUse","deny","x"]}"#,
                "is an array",
            ),
            ("[]", "the answer is an array"),
            ("null", "the answer is null"),
            ("allow", "expected"),
        ] {
            let message = refused(body);
            assert!(message.contains(named), "{body}: {message}");
        }
        let blank = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":" "}}"#;
        assert_eq!(refused(blank), AnswerError::EmptyReason.to_string());
        let long = format!(
            r#"{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"{}"}}}}"#,
            "x".repeat(REASON_CHARS + 1)
        );
        assert_eq!(refused(&long), AnswerError::LongReason(10_001).to_string());
    }
}
