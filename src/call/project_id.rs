//! Owns the local check of every project id a Design call names (`project_id`, and
//! `src_project_id` in copy_files): a JSON string that passes the reference's `znS`. It must
//! not decide what a project id means for a permission.
//!
//! Why every operation: `facts::design` reads only a string `project_id`, so a number made a
//! call about "no project" and slipped past project-pinned rules (F8, C17); and a hostile id
//! (NUL, bidi overrides, 200 characters) was sent upstream before a decision refused it (C4).

use serde_json::{Map, Value};

use super::error::{json_type_name, CallError};
use crate::paths::{js_length, rejected_character, rejected_character_class, MAX_PATH_DISPLAY};

/// Checks `project_id` (absent means "no project"; `null` is an error) and each copy source id.
pub(crate) fn check_project_ids(arguments: &Map<String, Value>) -> Result<(), CallError> {
    if let Some(value) = arguments.get("project_id") {
        check_project_id("arguments.project_id", "project_id", value)?;
    }
    let Some(Value::Array(files)) = arguments.get("files") else {
        return Ok(());
    };
    for (index, file) in files.iter().enumerate() {
        if let Some(value) = file.get("src_project_id") {
            let name = format!("files[{index}].src_project_id");
            check_project_id(&format!("arguments.{name}"), &name, value)?;
        }
    }
    Ok(())
}

/// `znS`: non-empty, at most 80 UTF-16 code units once JSON-quoted (the reference measures
/// `JSON.stringify(id).length`), and free of the rejected path characters.
fn check_project_id(field: &str, name: &str, value: &Value) -> Result<(), CallError> {
    let id = match value {
        Value::String(id) => id,
        other => {
            return Err(CallError::new(
                field,
                format!("`{name}` must be a string, not {}", json_type_name(other)),
            ))
        }
    };
    if id.is_empty() {
        return Err(CallError::new(field, format!("`{name}` must not be empty")));
    }
    if let Some(character) = rejected_character(id) {
        return Err(CallError::new(
            field,
            format!(
                "`{name}` has a rejected character U+{:04X} ({})",
                u32::from(character),
                rejected_character_class(character)
            ),
        ));
    }
    let quoted = quoted_js_length(id);
    if quoted > MAX_PATH_DISPLAY {
        return Err(CallError::new(
            field,
            format!(
                "`{name}` is {quoted} UTF-16 code units long once JSON-quoted; the limit is {MAX_PATH_DISPLAY}"
            ),
        ));
    }
    Ok(())
}

/// `JSON.stringify(id).length`: two quotes, a backslash before `"` and `\`, and every other
/// character as JavaScript counts it (controls never get here: they are rejected first).
fn quoted_js_length(id: &str) -> usize {
    let escapes = id.chars().filter(|c| matches!(c, '"' | '\\')).count();
    2 + escapes + js_length(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(arguments: Value) -> Result<(), CallError> {
        check_project_ids(arguments.as_object().unwrap())
    }

    #[test]
    fn f8_numbers_and_other_non_strings_are_refused() {
        for value in [json!(123), json!(1.23e2), json!(true), json!([]), json!({})] {
            let error = check(json!({"project_id": value})).unwrap_err();
            assert_eq!(error.field, "arguments.project_id", "{value}");
            assert!(error.message.contains("must be a string"), "{error:?}");
        }
        let error = check(json!({"project_id": null})).unwrap_err();
        assert_eq!(error.message, "`project_id` must be a string, not null");
        assert!(check(json!({})).is_ok());
    }

    #[test]
    fn c4_hostile_ids_are_refused_at_the_zns_boundaries() {
        assert!(check(json!({"project_id": ""})).is_err());
        for hostile in ["p1\u{0}", "p1\u{202E}", "a#b", "p\u{FEFF}"] {
            let error = check(json!({"project_id": hostile})).unwrap_err();
            assert!(error.message.contains("rejected character"), "{error:?}");
        }
        // 78 ASCII characters quote to exactly 80; 79 to 81.
        assert!(check(json!({"project_id": "a".repeat(78)})).is_ok());
        assert!(check(json!({"project_id": "a".repeat(79)})).is_err());
        // An emoji is two UTF-16 code units: 39 of them quote to 80, one more to 82.
        assert!(check(json!({"project_id": "😀".repeat(39)})).is_ok());
        assert!(check(json!({"project_id": "😀".repeat(40)})).is_err());
        // A quote costs two once escaped: 39 quotes are 80, and "a" more is 81.
        assert!(check(json!({"project_id": "\"".repeat(39)})).is_ok());
        assert!(check(json!({"project_id": format!("{}a", "\"".repeat(39))})).is_err());
        // Look-alikes pass znS (they are the server's to resolve).
        assert!(check(json!({"project_id": "р1"})).is_ok());
    }

    #[test]
    fn copy_sources_are_checked_too() {
        let error =
            check(json!({"files": [{"src": "a", "dest": "b", "src_project_id": "x\u{0}"}]}))
                .unwrap_err();
        assert_eq!(error.field, "arguments.files[0].src_project_id");
    }
}
