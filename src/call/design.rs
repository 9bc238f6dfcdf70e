//! Owns [`DesignCall`]: the validated `ClaudeDesign` input `{operation, arguments}` with its
//! merged hints (§1.1, §1.4); it must not decide permissions, normalize paths or call the server.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::arguments::validate_arguments;
use super::catalog::Catalog;
use super::error::{json_type_name, CallError};
use super::operations::{effective_hints, static_operation, OperationHints};
use super::project_id::check_project_ids;
use super::suggest::{shown, unknown_key_message};

/// Longest operation name (`^[\w.-]{1,64}$`). The pattern admits ASCII only, so UTF-8 bytes,
/// UTF-16 code units and code points all count the same.
const OPERATION_MAX_CHARS: usize = 64;

/// Longest finalize_plan `project_id` (`Xqr-2`): the 80-unit quoted-path budget minus two
/// quotes. Checked after the ASCII-only pattern, so bytes equal UTF-16 code units here.
const PROJECT_ID_MAX_CHARS: usize = 78;

/// The only keys of the raw tool input.
const INPUT_KEYS: &[&str] = &["operation", "arguments"];

/// A `ClaudeDesign` call that passed local validation.
///
/// `arguments` holds the values exactly as the model sent them (enum values are not rewritten).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignCall {
    pub operation: String,
    pub arguments: Map<String, Value>,
    pub hints: OperationHints,
}

impl DesignCall {
    /// Validates the raw tool input `{operation, arguments}` and merges the operation's hints.
    /// Takes the input by value: the arguments are kept as sent, without a copy.
    pub fn parse(input: Value, catalog: Option<&Catalog>) -> Result<DesignCall, CallError> {
        let mut object = match input {
            Value::Object(object) => object,
            other => {
                return Err(CallError::new(
                    "input",
                    format!(
                        "the input must be an object with `operation` and `arguments`, not {}",
                        json_type_name(&other)
                    ),
                ))
            }
        };
        if let Some(unknown) = object
            .keys()
            .map(String::as_str)
            .filter(|key| !INPUT_KEYS.contains(key))
            .min()
        {
            return Err(CallError::new(
                "input",
                unknown_key_message(unknown, "the input", INPUT_KEYS),
            ));
        }
        let operation = parse_operation(object.get("operation"))?;
        let arguments = parse_arguments(object.remove("arguments"))?;
        check_arguments(&operation, &arguments, catalog)?;
        let hints = effective_hints(&operation, catalog);
        Ok(DesignCall {
            operation,
            arguments,
            hints,
        })
    }

    /// `arguments.project_id` when it is a string.
    pub fn project_id(&self) -> Option<&str> {
        self.string_argument("project_id")
    }

    /// `arguments.plan_token` when it is a non-empty string.
    pub fn plan_token(&self) -> Option<&str> {
        self.string_argument("plan_token")
            .filter(|token| !token.is_empty())
    }

    /// True when `plan_token` is missing or `""` — the reference's meaning of tokenless
    /// (client-facts §5.2). Any other value (a number or a boolean; `null` never passes
    /// validation) is a token that is not a non-empty string: it matches no plan (§3 needs a
    /// string) and asks as a write with a non-matching token, so it can never slip into the
    /// tokenless grant path.
    pub fn is_tokenless(&self) -> bool {
        match self.arguments.get("plan_token") {
            None => true,
            Some(Value::String(token)) => token.is_empty(),
            Some(_) => false,
        }
    }

    /// `arguments.<key>` when it is a string.
    pub fn string_argument(&self, key: &str) -> Option<&str> {
        self.arguments.get(key).and_then(Value::as_str)
    }
}

fn parse_operation(value: Option<&Value>) -> Result<String, CallError> {
    let operation = match value {
        None => {
            return Err(CallError::new("operation", "`operation` is required"));
        }
        Some(Value::String(operation)) => operation,
        Some(other) => {
            return Err(CallError::new(
                "operation",
                format!(
                    "`operation` must be a string, not {}",
                    json_type_name(other)
                ),
            ));
        }
    };
    let well_formed = !operation.is_empty()
        && operation.len() <= OPERATION_MAX_CHARS
        && operation
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-'));
    if !well_formed {
        return Err(CallError::new(
            "operation",
            format!(
                "operation `{}` must be 1 to {OPERATION_MAX_CHARS} ASCII letters, digits, `_`, `.` or `-`",
                shown(operation)
            ),
        ));
    }
    Ok(operation.clone())
}

fn parse_arguments(value: Option<Value>) -> Result<Map<String, Value>, CallError> {
    // `arguments` defaults to `{}` only when absent (zod's `.default` does not replace `null`).
    match value {
        None => Ok(Map::new()),
        Some(Value::Object(arguments)) => Ok(arguments),
        Some(other) => Err(CallError::new(
            "arguments",
            format!(
                "`arguments` must be an object, not {}",
                json_type_name(&other)
            ),
        )),
    }
}

/// Static operations get their schema; others pass only when the server marks them readOnly,
/// because a write without a local schema could smuggle unchecked targets.
fn check_arguments(
    operation: &str,
    arguments: &Map<String, Value>,
    catalog: Option<&Catalog>,
) -> Result<(), CallError> {
    check_project_ids(arguments)?;
    if let Some(known) = static_operation(operation) {
        validate_arguments(operation, &known.schema, arguments)?;
        if operation == "finalize_plan" {
            check_finalize_plan(arguments)?;
        }
        return Ok(());
    }
    match catalog.and_then(|catalog| catalog.tool(operation)) {
        Some(tool) if tool.read_only_hint == Some(true) => Ok(()),
        Some(_) => Err(CallError::new(
            "operation",
            format!(
                "`{operation}` is write-capable but has no local schema (WRITE_OP_SCHEMAS entry); \
                 it cannot be called until the client knows its arguments"
            ),
        )),
        None => Err(CallError::new(
            "operation",
            format!(
                "Unknown Claude Design operation \"{operation}\". Call ClaudeDesign({{operation: \"list\"}}) \
                 to see the live operation names and their schemas"
            ),
        )),
    }
}

/// finalize_plan validateInput extras (§1.4): a well-formed `project_id`, and no paths with
/// `scope:"project"` (a project-wide plan would make the listed paths meaningless).
fn check_finalize_plan(arguments: &Map<String, Value>) -> Result<(), CallError> {
    let field = "arguments.project_id";
    let project_id = match arguments.get("project_id") {
        None => {
            return Err(CallError::new(field, "`finalize_plan` needs `project_id`"));
        }
        Some(Value::String(project_id)) => project_id,
        Some(other) => {
            return Err(CallError::new(
                field,
                format!(
                    "`project_id` must be a string, not {}",
                    json_type_name(other)
                ),
            ));
        }
    };
    let allowed = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-');
    if project_id.is_empty() || !project_id.bytes().all(allowed) {
        return Err(CallError::new(
            field,
            "`project_id` must be non-empty ASCII letters, digits, `.`, `_` or `-`",
        ));
    }
    if project_id.len() > PROJECT_ID_MAX_CHARS {
        return Err(CallError::new(
            field,
            format!(
                "`project_id` is {} characters long; the limit is {PROJECT_ID_MAX_CHARS}",
                project_id.len()
            ),
        ));
    }
    let names_paths = ["writes", "deletes"]
        .iter()
        .any(|key| arguments.contains_key(*key));
    if arguments.get("scope").and_then(Value::as_str) == Some("project") && names_paths {
        return Err(CallError::new(
            "arguments.scope",
            "`scope` \"project\" cannot be combined with `writes` or `deletes`",
        ));
    }
    Ok(())
}
