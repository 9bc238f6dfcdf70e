//! server::mcp::schema::design: `ClaudeDesign`'s `inputSchema` and its description, shaped
//! for the model. Clients flatten (and the Messages API refuses) root `allOf`/`anyOf`/`oneOf`,
//! so the root is a plain object: `operation` is an enum and `arguments` holds the union of
//! every operation's keys, each described with the operations that take it; the tool's
//! description carries a compact per-operation table. Validation stays `call::DesignCall`'s
//! (exactly as strict as before: only the operation's own keys are accepted).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::call::operations::{static_operations, StaticOperation};
use crate::call::schema::{ArgumentKey, ArgumentKind};

/// What each static operation does, in a few words, for the model's table.
fn purpose(operation: &str) -> &'static str {
    match operation {
        "list" => "discover the server's operations (full: include schemas)",
        "list_design_systems" => "list the design systems",
        "get_claude_design_prompt" => "get the design prompt for a design system or project",
        "list_projects" => "list the projects",
        "get_project" => "get one project",
        "list_files" => "list a project's files under path",
        "read_file" => "read one file",
        "get_conversation" => "read a chat of the project",
        "list_members" => "list the project's members",
        "render_preview" => "render a page of the project",
        "create_project" => "create a project",
        "put_conversation" => "write a chat's messages",
        "finalize_plan" => {
            "ask a person to approve a plan of writes/deletes; returns plan_token for 15 min"
        }
        "write_files" => "write files (with plan_token: the paths of an approved plan)",
        "copy_files" => "copy files (needs plan_token)",
        "create_support_js" => "write the project's support script (default support.js)",
        "add_member" => "invite a member",
        "delete_files" => "delete files by paths[] or files[] (not both)",
        "remove_member" => "remove a member",
        "update_member_role" => "change a member's role",
        "update_sharing" => "change who the project is shared with",
        _ => "",
    }
}

/// The tool's description: what it is, then one line per operation with its arguments
/// (`*` marks a field an element must have).
pub fn description() -> String {
    let mut text = String::from(
        "Claude Design (claude.ai/design) through askgate: `operation` names one Design \
         operation and `arguments` holds that operation's arguments (only its own keys). \
         askgate's policies allow, hold for a person to approve, or deny each call. \
         Operations and their arguments:\n",
    );
    for operation in static_operations() {
        let keys: Vec<String> = operation.schema.keys.iter().map(shown_key).collect();
        text.push_str(&format!(
            "- {}({}): {}{}\n",
            operation.name,
            keys.join(", "),
            purpose(operation.name),
            if operation.read_only { "" } else { " [write]" }
        ));
    }
    text
}

fn shown_key(key: &ArgumentKey) -> String {
    match key.kind {
        ArgumentKind::Scalar { .. } => key.name.to_string(),
        ArgumentKind::Choice { values, .. } => format!("{}: {}", key.name, values.join("|")),
        ArgumentKind::StringList => format!("{}[]", key.name),
        ArgumentKind::ObjectList { fields } => {
            let fields: Vec<String> = fields
                .iter()
                .map(|field| format!("{}{}", field.name, if field.required { "*" } else { "" }))
                .collect();
            format!("{}[{{{}}}]", key.name, fields.join(", "))
        }
    }
}

/// The `inputSchema`: no root composition; `arguments` is the union of the operations' keys.
pub fn input_schema() -> Value {
    let names: Vec<&str> = static_operations().iter().map(|op| op.name).collect();
    json!({
        "type": "object",
        "properties": {
            "operation": {
                "type": "string",
                "enum": names,
                "description": "The Design operation; the tool description lists each \
                    operation's arguments."
            },
            "arguments": {
                "type": "object",
                "description": "The operation's arguments: only the keys the tool \
                    description lists for it (each key below says which operations take it).",
                "properties": union_properties(),
                "additionalProperties": false
            }
        },
        "required": ["operation"],
        "additionalProperties": false
    })
}

/// Every key any operation takes, with its shape (the shapes of one name, when they differ
/// between operations, as a nested `anyOf`) and the operations that take it.
fn union_properties() -> Map<String, Value> {
    let mut by_name: BTreeMap<&str, Vec<(&StaticOperation, &ArgumentKey)>> = BTreeMap::new();
    for operation in static_operations() {
        for key in operation.schema.keys {
            by_name.entry(key.name).or_default().push((operation, key));
        }
    }
    by_name
        .into_iter()
        .map(|(name, uses)| (name.to_string(), union_property(&uses)))
        .collect()
}

fn union_property(uses: &[(&StaticOperation, &ArgumentKey)]) -> Value {
    let mut shapes: Vec<(Value, Vec<&str>)> = Vec::new();
    for (operation, key) in uses {
        let shape = key_schema(key);
        match shapes.iter_mut().find(|(known, _)| *known == shape) {
            Some((_, operations)) => operations.push(operation.name),
            None => shapes.push((shape, vec![operation.name])),
        }
    }
    let used_by = |operations: &[&str]| format!("used by {}", operations.join(", "));
    match shapes.as_slice() {
        [(shape, operations)] => with_description(shape.clone(), used_by(operations)),
        _ => {
            let variants: Vec<Value> = shapes
                .iter()
                .map(|(shape, operations)| with_description(shape.clone(), used_by(operations)))
                .collect();
            let all: Vec<&str> = shapes
                .iter()
                .flat_map(|(_, operations)| operations.iter().copied())
                .collect();
            json!({"anyOf": variants, "description": used_by(&all)})
        }
    }
}

fn with_description(mut shape: Value, description: String) -> Value {
    if let Some(object) = shape.as_object_mut() {
        object.insert("description".into(), Value::String(description));
    }
    shape
}

/// The published shape of one argument key: exactly what validation accepts (A4). A project
/// id is checked as a non-empty string for every operation (`call::project_id`), whatever its
/// key's general kind.
fn key_schema(key: &ArgumentKey) -> Value {
    if key.name == "project_id" {
        return json!({"type": "string", "minLength": 1, "maxLength": crate::paths::MAX_PROJECT_ID});
    }
    match key.kind {
        ArgumentKind::Scalar { max_bytes } => {
            json!({"type": ["string", "boolean", "number"], "maxLength": max_bytes})
        }
        ArgumentKind::Choice { values, .. } => json!({"type": "string", "enum": values}),
        ArgumentKind::StringList => json!({"type": "array", "items": {"type": "string"}}),
        ArgumentKind::ObjectList { fields } => {
            let properties: Map<String, Value> = fields
                .iter()
                .map(|field| (field.name.to_string(), json!({"type": "string"})))
                .collect();
            let required: Vec<&str> = fields
                .iter()
                .filter(|field| field.required)
                .map(|field| field.name)
                .collect();
            json!({"type": "array", "items": {
                "type": "object", "properties": properties, "required": required,
                "additionalProperties": false
            }})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_has_no_composition_and_arguments_name_every_key() {
        let schema = input_schema();
        for keyword in ["allOf", "anyOf", "oneOf", "if", "then"] {
            assert!(schema.get(keyword).is_none(), "root {keyword}");
        }
        let arguments = &schema["properties"]["arguments"]["properties"];
        for operation in static_operations() {
            for key in operation.schema.keys {
                let described = arguments[key.name]["description"].as_str().unwrap_or("");
                assert!(
                    described.contains(operation.name),
                    "{}: {described}",
                    key.name
                );
            }
        }
        // A4: a project id is published as the string validation accepts, never a number.
        assert_eq!(arguments["project_id"]["type"], "string");
        assert_eq!(arguments["project_id"]["minLength"], 1);
        // `scope` means two things: both shapes are kept, nested.
        assert_eq!(
            arguments["scope"]["anyOf"].as_array().map(Vec::len),
            Some(2)
        );
    }

    #[test]
    fn the_description_gives_each_operation_its_arguments() {
        let text = description();
        assert!(text.contains("- write_files(project_id, plan_token, files[{path*, data, local_path, encoding, if_match}])"), "{text}");
        assert!(
            text.contains("- finalize_plan(project_id, writes[], deletes[], scope: paths|project)"),
            "{text}"
        );
        assert_eq!(text.lines().count(), static_operations().len() + 1);
    }
}
