//! Owns the field rules of the `Projects` input (§10.1): allowed keys and the legacy `force`,
//! the method name, string lengths, flags, `n`, the fields each method needs and the one write
//! source. Each check names the offending field; it must not build the call or read paths.
//!
//! Unlike Design arguments, a JSON `null` is an error here: the reference schema is a plain zod
//! object whose optional fields accept a missing key but not `null`.

use serde_json::{Map, Value};

use super::super::error::{json_type_name, CallError};
use super::super::suggest::{shown, unknown_key_message};
use super::{ProjectsMethod, WriteSource};
use crate::paths::js_length;

/// `path` length bounds, in UTF-16 code units: zod's `min`/`max` count JavaScript `.length`,
/// so an emoji is 2 (client-facts §0). The same unit bounds `local_path` and `query` (min 1).
pub(super) const PATH_MIN_CHARS: usize = 1;
pub(super) const PATH_MAX_CHARS: usize = 255;

/// `n` bounds and default: how many search hits to return.
const COUNT_MIN: u8 = 1;
const COUNT_MAX: u8 = 15;
const COUNT_DEFAULT: u8 = 5;

/// The keys the schema declares, in documentation order (`force` is handled separately).
pub(crate) const INPUT_KEYS: &[&str] = &[
    "method",
    "path",
    "content",
    "local_path",
    "present_to_user",
    "query",
    "n",
];

/// Legacy key that `coerceInput` drops when it is a boolean.
pub(crate) const LEGACY_FORCE: &str = "force";

/// Refuses unknown keys; a boolean `force` is the legacy flag and passes (it is dropped).
pub(super) fn check_keys(object: &Map<String, Value>) -> Result<(), CallError> {
    match object.get(LEGACY_FORCE) {
        None | Some(Value::Bool(_)) => {}
        Some(other) => {
            return Err(CallError::new(
                LEGACY_FORCE,
                format!(
                    "`force` is no longer supported and may only be a boolean (ignored), not {}",
                    json_type_name(other)
                ),
            ));
        }
    }
    let unknown = object
        .keys()
        .map(String::as_str)
        .filter(|key| *key != LEGACY_FORCE && !INPUT_KEYS.contains(key))
        .min();
    match unknown {
        Some(key) => Err(CallError::new(
            shown(key),
            unknown_key_message(key, "the Projects input", INPUT_KEYS),
        )),
        None => Ok(()),
    }
}

fn method_names() -> String {
    ProjectsMethod::ALL
        .iter()
        .map(|method| method.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn parse_method(value: Option<&Value>) -> Result<ProjectsMethod, CallError> {
    let Some(value) = value else {
        return Err(CallError::new(
            "method",
            format!("`method` is required; use one of {}", method_names()),
        ));
    };
    value
        .as_str()
        .and_then(ProjectsMethod::from_name)
        .ok_or_else(|| {
            CallError::new(
                "method",
                format!("`method` must be one of {}", method_names()),
            )
        })
}

/// An optional string whose length in Unicode scalar values is within `min..=max`.
pub(super) fn optional_text(
    object: &Map<String, Value>,
    key: &str,
    min: usize,
    max: Option<usize>,
) -> Result<Option<String>, CallError> {
    let text = match object.get(key) {
        None => return Ok(None),
        Some(Value::String(text)) => text,
        Some(other) => {
            return Err(CallError::new(
                key,
                format!("`{key}` must be a string, not {}", json_type_name(other)),
            ));
        }
    };
    let length = js_length(text);
    if length < min {
        return Err(CallError::new(
            key,
            format!("`{key}` must be at least {min} UTF-16 code unit long"),
        ));
    }
    if let Some(max) = max.filter(|max| length > *max) {
        return Err(CallError::new(
            key,
            format!("`{key}` is {length} UTF-16 code units long; the limit is {max}"),
        ));
    }
    Ok(Some(text.clone()))
}

pub(super) fn optional_flag(object: &Map<String, Value>, key: &str) -> Result<bool, CallError> {
    match object.get(key) {
        None => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(other) => Err(CallError::new(
            key,
            format!("`{key}` must be a boolean, not {}", json_type_name(other)),
        )),
    }
}

/// `n`: a whole number from 1 to 15, default 5. `5.0` counts as whole (zod's `.int()` sees a
/// JavaScript number); `2.5` and `"5"` do not.
pub(super) fn parse_count(value: Option<&Value>) -> Result<u8, CallError> {
    let Some(value) = value else {
        return Ok(COUNT_DEFAULT);
    };
    let whole = value.as_number().and_then(|number| {
        number.as_u64().or_else(|| {
            number
                .as_f64()
                .filter(|float| {
                    float.fract() == 0.0 && (0.0..=f64::from(COUNT_MAX)).contains(float)
                })
                .map(|float| float as u64)
        })
    });
    whole
        .and_then(|whole| u8::try_from(whole).ok())
        .filter(|count| (COUNT_MIN..=COUNT_MAX).contains(count))
        .ok_or_else(|| {
            CallError::new(
                "n",
                format!("`n` must be a whole number from {COUNT_MIN} to {COUNT_MAX}"),
            )
        })
}

pub(super) fn require_method_fields(
    method: ProjectsMethod,
    has_path: bool,
    has_query: bool,
) -> Result<(), CallError> {
    let name = method.as_str();
    match method {
        ProjectsMethod::ProjectRead
        | ProjectsMethod::ProjectWrite
        | ProjectsMethod::ProjectDelete
            if !has_path =>
        {
            Err(CallError::new("path", format!("`{name}` needs `path`")))
        }
        ProjectsMethod::ProjectSearch if !has_query => {
            Err(CallError::new("query", format!("`{name}` needs `query`")))
        }
        _ => Ok(()),
    }
}

pub(super) fn write_source(
    content: Option<String>,
    local_path: Option<String>,
) -> Result<WriteSource, CallError> {
    match (content, local_path) {
        (Some(content), None) => Ok(WriteSource::Content(content)),
        (None, Some(local_path)) => Ok(WriteSource::LocalPath(local_path)),
        (Some(_), Some(_)) => Err(CallError::new(
            "content",
            "`project_write` takes exactly one of `content` or `local_path`, not both",
        )),
        (None, None) => Err(CallError::new(
            "content",
            "`project_write` needs exactly one of `content` or `local_path`",
        )),
    }
}
