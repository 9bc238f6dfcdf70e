//! Checks a Design call's `arguments` against a static [`ArgumentSchema`] (§1.4 type and size
//! rules); it must not rewrite values or apply per-operation extras (that is `design.rs`).
//!
//! A JSON `null` is never "absent": the reference's check (§1.4 `M0f`) looks at every key that
//! is present, and `null` is neither a scalar (string, boolean, number), nor an array, nor a
//! string field. So `project_id: null` is an error rather than "no project" (which a
//! project-pinned admin rule would not match), and `plan_token: null` an error rather than a
//! token that matches no plan.

use serde_json::{Map, Value};

use super::error::{json_type_name, CallError};
use super::schema::{ArgumentKind, ArgumentSchema, ChoiceMatching, ElementField};
use super::schema::{ROLE_PADDING_MAX_CHARS, STRING_MAX_BYTES};
use super::suggest::{allowed_list, closest_key, shown, unknown_key_message};
use crate::paths::{is_js_whitespace, js_length};

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
        if let Some(value) = arguments.get(key.name) {
            check_value(key.name, key.kind, value)?;
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

/// Where a value sits in `arguments` (`key[index].element`), rendered only for an error: a
/// valid call with hundreds of elements formats nothing.
#[derive(Debug, Clone, Copy)]
struct Place<'a> {
    key: &'a str,
    index: Option<usize>,
    element: Option<&'a str>,
}

impl<'a> Place<'a> {
    fn key(key: &'a str) -> Self {
        Self {
            key,
            index: None,
            element: None,
        }
    }

    fn item(self, index: usize) -> Self {
        Self {
            index: Some(index),
            ..self
        }
    }

    fn element(self, element: &'a str) -> Self {
        Self {
            element: Some(element),
            ..self
        }
    }

    /// `files[3].path`: how messages name the value.
    fn name(&self) -> String {
        let mut name = self.key.to_string();
        if let Some(index) = self.index {
            name.push_str(&format!("[{index}]"));
        }
        if let Some(element) = self.element {
            name.push('.');
            name.push_str(element);
        }
        name
    }

    /// `arguments.files[3].path`: the error's field.
    fn field(&self) -> String {
        format!("arguments.{}", self.name())
    }

    fn error(&self, message: String) -> CallError {
        CallError::new(self.field(), message)
    }
}

fn check_value(name: &str, kind: ArgumentKind, value: &Value) -> Result<(), CallError> {
    let place = Place::key(name);
    match kind {
        ArgumentKind::Scalar { max_bytes } => check_scalar(place, value, max_bytes),
        ArgumentKind::Choice { values, matching } => check_choice(place, value, values, matching),
        ArgumentKind::StringList => check_string_list(place, value),
        ArgumentKind::ObjectList { fields } => check_object_list(place, value, fields),
    }
}

fn check_scalar(place: Place<'_>, value: &Value, max_bytes: usize) -> Result<(), CallError> {
    match value {
        Value::String(text) => check_bytes(place, text, max_bytes),
        Value::Bool(_) | Value::Number(_) => Ok(()),
        Value::Null | Value::Array(_) | Value::Object(_) => Err(place.error(format!(
            "`{}` must be a string, boolean or number, not {}",
            place.name(),
            json_type_name(value)
        ))),
    }
}

fn check_bytes(place: Place<'_>, text: &str, max_bytes: usize) -> Result<(), CallError> {
    if text.len() <= max_bytes {
        return Ok(());
    }
    Err(place.error(format!(
        "`{}` is {} bytes long; the limit is {max_bytes} UTF-8 bytes",
        place.name(),
        text.len()
    )))
}

fn check_choice(
    place: Place<'_>,
    value: &Value,
    values: &[&str],
    matching: ChoiceMatching,
) -> Result<(), CallError> {
    let not_one_of = || {
        place.error(format!(
            "`{}` must be one of {}",
            place.name(),
            values.join(", ")
        ))
    };
    let Some(text) = value.as_str() else {
        return Err(not_one_of());
    };
    let candidate = match matching {
        ChoiceMatching::Exact => text.to_owned(),
        ChoiceMatching::CaseInsensitive => text.to_lowercase(),
        ChoiceMatching::TrimmedCaseInsensitive => {
            // JavaScript `trim()` and `.length`: its whitespace set (U+FEFF yes, U+0085 no)
            // and padding counted in UTF-16 code units.
            let trimmed = text.trim_matches(is_js_whitespace);
            let padding = js_length(text).saturating_sub(js_length(trimmed));
            if padding > ROLE_PADDING_MAX_CHARS {
                return Err(place.error(format!(
                    "`{}` has excess whitespace; use one of {}",
                    place.name(),
                    values.join(", ")
                )));
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

fn check_string_list(place: Place<'_>, value: &Value) -> Result<(), CallError> {
    let Some(items) = value.as_array() else {
        return Err(must_be_array(place, value));
    };
    for (index, item) in items.iter().enumerate() {
        let item_place = place.item(index);
        let Some(text) = item.as_str() else {
            return Err(item_place.error(format!(
                "`{}` must be a string, not {}",
                item_place.name(),
                json_type_name(item)
            )));
        };
        check_bytes(item_place, text, STRING_MAX_BYTES)?;
    }
    Ok(())
}

fn check_object_list(
    place: Place<'_>,
    value: &Value,
    fields: &[ElementField],
) -> Result<(), CallError> {
    let Some(items) = value.as_array() else {
        return Err(must_be_array(place, value));
    };
    for (index, item) in items.iter().enumerate() {
        let item_place = place.item(index);
        let Some(object) = item.as_object() else {
            return Err(item_place.error(format!(
                "`{}` must be an object, not {}",
                item_place.name(),
                json_type_name(item)
            )));
        };
        check_element(item_place, object, fields)?;
    }
    Ok(())
}

fn check_element(
    place: Place<'_>,
    object: &Map<String, Value>,
    fields: &[ElementField],
) -> Result<(), CallError> {
    if let Some(unknown) = object
        .keys()
        .map(String::as_str)
        .filter(|key| !fields.iter().any(|element| element.name == *key))
        .min()
    {
        let allowed: Vec<&str> = fields.iter().map(|element| element.name).collect();
        return Err(CallError::new(
            format!("{}.{}", place.field(), shown(unknown)),
            unknown_field_message(unknown, &place.name(), &allowed),
        ));
    }
    // Every key is now one of `fields`, so a scan finds each field without hashing its name.
    for element in fields {
        let element_place = place.element(element.name);
        let value = object
            .iter()
            .find_map(|(key, value)| (key == element.name).then_some(value));
        match value {
            None if element.required => {
                return Err(element_place.error(format!(
                    "`{}` is missing required field `{}`",
                    place.name(),
                    element.name
                )));
            }
            None => {}
            Some(Value::String(text)) => {
                if let Some(max_bytes) = element.max_bytes {
                    check_bytes(element_place, text, max_bytes)?;
                }
            }
            Some(other) => {
                return Err(element_place.error(format!(
                    "`{}` must be a string, not {}",
                    element_place.name(),
                    json_type_name(other)
                )));
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

fn must_be_array(place: Place<'_>, value: &Value) -> CallError {
    place.error(format!(
        "`{}` must be an array, not {}",
        place.name(),
        json_type_name(value)
    ))
}
