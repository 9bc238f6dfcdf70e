//! What the call tests share: parsing a Design call from its operation and arguments, and
//! the field its error names.
use serde_json::{json, Value};

use super::{CallError, DesignCall};

/// `DesignCall::parse` on `{operation, arguments}` with no catalog.
pub fn parse(operation: &str, arguments: Value) -> Result<DesignCall, CallError> {
    DesignCall::parse(
        json!({"operation": operation, "arguments": arguments}),
        None,
    )
}

/// The field the error of an invalid call names.
pub fn field_of(operation: &str, arguments: Value) -> String {
    match parse(operation, arguments) {
        Ok(call) => panic!("expected an error, parsed {call:?}"),
        Err(error) => error.field,
    }
}
