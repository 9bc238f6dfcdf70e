//! Checks a Design call's `arguments` against a static [`ArgumentSchema`] (§1.4 type and size
//! rules); it must not rewrite values or apply per-operation extras (that is `design.rs`).
//!
//! A JSON `null` value is treated as an absent key: it is still subject to the unknown-key
//! check (so typos are caught), but not to type or size rules. The schema the reference checks
//! is hand-written and zod-like, and models commonly send `null` for "not given"; rejecting it
//! would refuse calls the server accepts. The `null` stays in `arguments` untouched.

use serde_json::{Map, Value};

use super::error::{json_type_name, CallError};
use super::schema::{ArgumentKind, ArgumentSchema, ChoiceMatching, ElementField};
use super::schema::{ROLE_PADDING_MAX_CHARS, STRING_MAX_BYTES};
use super::suggest::{allowed_list, closest_key, shown, unknown_key_message};

/// Validates every key of `arguments` for `operation` against `schema`.
pub(crate) fn validate_arguments(
    operation: &str,
    schema: &ArgumentSchema,
    arguments: &Map<String, Value>,
) -> Result<(), CallError> {
    let allowed: Vec<&str> = schema.key_names().collect();
    if let Some(unknown) = first_unknown(arguments, &allowed) {
        let place = format!("`{operation}` arguments");
        return Err(CallError::new(
            format!("arguments.{}", shown(unknown)),
            unknown_key_message(unknown, &place, &allowed),
        ));
    }
    for key in schema.keys {
        match arguments.get(key.name) {
            None | Some(Value::Null) => {}
            Some(value) => check_value(key.name, key.kind, value)?,
        }
    }
    Ok(())
}

/// The smallest unknown key by byte order, so the reported key does not depend on map order.
fn first_unknown<'a>(object: &'a Map<String, Value>, allowed: &[&str]) -> Option<&'a str> {
    object
        .keys()
        .map(String::as_str)
        .filter(|key| !allowed.contains(key))
        .min()
}

fn check_value(name: &str, kind: ArgumentKind, value: &Value) -> Result<(), CallError> {
    let field = format!("arguments.{name}");
    match kind {
        ArgumentKind::Scalar { max_bytes } => check_scalar(&field, name, value, max_bytes),
        ArgumentKind::Choice { values, matching } => {
            check_choice(&field, name, value, values, matching)
        }
        ArgumentKind::StringList => check_string_list(&field, name, value),
        ArgumentKind::ObjectList { fields } => check_object_list(&field, name, value, fields),
    }
}

fn check_scalar(field: &str, name: &str, value: &Value, max_bytes: usize) -> Result<(), CallError> {
    match value {
        Value::String(text) => check_bytes(field, name, text, max_bytes),
        Value::Bool(_) | Value::Number(_) | Value::Null => Ok(()),
        Value::Array(_) | Value::Object(_) => Err(CallError::new(
            field,
            format!(
                "`{name}` must be a string, boolean or number, not {}",
                json_type_name(value)
            ),
        )),
    }
}

fn check_bytes(field: &str, name: &str, text: &str, max_bytes: usize) -> Result<(), CallError> {
    if text.len() <= max_bytes {
        return Ok(());
    }
    Err(CallError::new(
        field,
        format!(
            "`{name}` is {} bytes long; the limit is {max_bytes} UTF-8 bytes",
            text.len()
        ),
    ))
}

fn check_choice(
    field: &str,
    name: &str,
    value: &Value,
    values: &[&str],
    matching: ChoiceMatching,
) -> Result<(), CallError> {
    let choices = values.join(", ");
    let not_one_of = || CallError::new(field, format!("`{name}` must be one of {choices}"));
    let Some(text) = value.as_str() else {
        return Err(not_one_of());
    };
    let candidate = match matching {
        ChoiceMatching::Exact => text.to_owned(),
        ChoiceMatching::CaseInsensitive => text.to_lowercase(),
        ChoiceMatching::TrimmedCaseInsensitive => {
            let trimmed = text.trim();
            let padding = text.chars().count().saturating_sub(trimmed.chars().count());
            if padding > ROLE_PADDING_MAX_CHARS {
                return Err(CallError::new(
                    field,
                    format!("`{name}` has excess whitespace; use one of {choices}"),
                ));
            }
            trimmed.to_lowercase()
        }
    };
    if values.contains(&candidate.as_str()) {
        Ok(())
    } else {
        Err(not_one_of())
    }
}

fn check_string_list(field: &str, name: &str, value: &Value) -> Result<(), CallError> {
    let Some(items) = value.as_array() else {
        return Err(must_be_array(field, name, value));
    };
    for (index, item) in items.iter().enumerate() {
        let item_name = format!("{name}[{index}]");
        let item_field = format!("{field}[{index}]");
        let Some(text) = item.as_str() else {
            return Err(CallError::new(
                item_field,
                format!(
                    "`{item_name}` must be a string, not {}",
                    json_type_name(item)
                ),
            ));
        };
        check_bytes(&item_field, &item_name, text, STRING_MAX_BYTES)?;
    }
    Ok(())
}

fn check_object_list(
    field: &str,
    name: &str,
    value: &Value,
    fields: &[ElementField],
) -> Result<(), CallError> {
    let Some(items) = value.as_array() else {
        return Err(must_be_array(field, name, value));
    };
    for (index, item) in items.iter().enumerate() {
        let item_name = format!("{name}[{index}]");
        let item_field = format!("{field}[{index}]");
        let Some(object) = item.as_object() else {
            return Err(CallError::new(
                item_field,
                format!(
                    "`{item_name}` must be an object, not {}",
                    json_type_name(item)
                ),
            ));
        };
        check_element(&item_field, &item_name, object, fields)?;
    }
    Ok(())
}

fn check_element(
    field: &str,
    name: &str,
    object: &Map<String, Value>,
    fields: &[ElementField],
) -> Result<(), CallError> {
    let allowed: Vec<&str> = fields.iter().map(|element| element.name).collect();
    if let Some(unknown) = first_unknown(object, &allowed) {
        return Err(CallError::new(
            format!("{field}.{}", shown(unknown)),
            unknown_field_message(unknown, name, &allowed),
        ));
    }
    for element in fields {
        let element_field = format!("{field}.{}", element.name);
        let element_name = format!("{name}.{}", element.name);
        match object.get(element.name) {
            None | Some(Value::Null) if element.required => {
                return Err(CallError::new(
                    element_field,
                    format!("`{name}` is missing required field `{}`", element.name),
                ));
            }
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => {
                if let Some(max_bytes) = element.max_bytes {
                    check_bytes(&element_field, &element_name, text, max_bytes)?;
                }
            }
            Some(other) => {
                return Err(CallError::new(
                    element_field,
                    format!(
                        "`{element_name}` must be a string, not {}",
                        json_type_name(other)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Unknown field inside an array element; `content` where `data` is allowed gets the
/// designmcp hint, because that is the mistake models make with `write_files`.
fn unknown_field_message(unknown: &str, element: &str, allowed: &[&str]) -> String {
    let shown_key = shown(unknown);
    let mut message = format!("unknown field `{shown_key}` in `{element}`");
    if unknown.eq_ignore_ascii_case("content") && allowed.contains(&"data") {
        message.push_str("; designmcp reads the file body from `data`, not `content`");
    } else if let Some(meant) = closest_key(unknown, allowed) {
        message.push_str(&format!("; did you mean `{meant}`?"));
    }
    message.push_str(&format!("; allowed fields: {}", allowed_list(allowed)));
    message
}

fn must_be_array(field: &str, name: &str, value: &Value) -> CallError {
    CallError::new(
        field,
        format!("`{name}` must be an array, not {}", json_type_name(value)),
    )
}
