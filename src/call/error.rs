//! Owns the single error value of call parsing; it must not decide how errors reach the caller.

use serde::Serialize;

/// A rejected Design or Projects input, naming the offending field.
///
/// `field` is a dotted path into the raw input: `operation`, `arguments.files[2].path`,
/// `method`, `n`, or `input` for problems with the input as a whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct CallError {
    pub field: String,
    pub message: String,
}

impl CallError {
    /// An error about `field` with a lower-case `message` (user input in backticks).
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> CallError {
        CallError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The JSON type name used in messages, so users never see Rust type names.
pub(crate) fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn displays_only_the_message() {
        let error = CallError::new("arguments.path", "`path` must be a string");
        assert_eq!(error.to_string(), "`path` must be a string");
    }

    #[test]
    fn serializes_field_and_message() {
        let error = CallError::new("n", "bad");
        let value = serde_json::to_value(&error).unwrap();
        assert_eq!(value, json!({"field": "n", "message": "bad"}));
    }

    #[test]
    fn names_json_types_without_rust_names() {
        assert_eq!(json_type_name(&json!(null)), "null");
        assert_eq!(json_type_name(&json!(true)), "a boolean");
        assert_eq!(json_type_name(&json!(1.5)), "a number");
        assert_eq!(json_type_name(&json!("x")), "a string");
        assert_eq!(json_type_name(&json!([])), "an array");
        assert_eq!(json_type_name(&json!({})), "an object");
    }
}
