//! server::mcp::schema: the two MCP tools as the reference client shapes them — `ClaudeDesign`
//! (`{operation, arguments}`, its `inputSchema` built from the static operation table) and
//! `Projects` (`{method, ...}` with the five methods). It describes; it validates nothing
//! (`call::DesignCall` and `call::ProjectsCall` do, on every call).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use crate::call::operations::static_operations;
use crate::call::schema::{ArgumentKey, ArgumentKind};
use crate::call::ProjectsMethod;

pub const DESIGN: &str = "ClaudeDesign";
pub const PROJECTS: &str = "Projects";

pub fn design_tool() -> Tool {
    Tool::new(
        DESIGN,
        "Claude Design (claude.ai/design) through askgate: `operation` names one Design \
         operation and `arguments` its arguments. askgate's policies allow, hold for an \
         approver, or deny each call.",
        object(design_schema()),
    )
    .with_annotations(ToolAnnotations::with_title("Claude Design").destructive(true))
}

pub fn projects_tool() -> Tool {
    Tool::new(
        PROJECTS,
        "The session's attached claude.ai Project through askgate: `method` is one of \
         project_info, project_read, project_search, project_write, project_delete.",
        object(projects_schema()),
    )
    .with_annotations(ToolAnnotations::with_title("Projects").destructive(true))
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// `operation` is one of the table's names; each operation's `arguments` take its keys.
fn design_schema() -> Value {
    let names: Vec<&str> = static_operations().iter().map(|op| op.name).collect();
    let per_operation: Vec<Value> = static_operations()
        .iter()
        .map(|op| {
            json!({
                "if": {"properties": {"operation": {"const": op.name}}},
                "then": {"properties": {"arguments": arguments_schema(op.schema.keys)}}
            })
        })
        .collect();
    json!({
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": names},
            "arguments": {"type": "object"}
        },
        "required": ["operation"],
        "additionalProperties": false,
        "allOf": per_operation
    })
}

fn arguments_schema(keys: &[ArgumentKey]) -> Value {
    let properties: Map<String, Value> = keys
        .iter()
        .map(|key| (key.name.to_string(), key_schema(key.kind)))
        .collect();
    json!({"type": "object", "properties": properties, "additionalProperties": false})
}

fn key_schema(kind: ArgumentKind) -> Value {
    match kind {
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
                "type": "object", "properties": properties, "required": required
            }})
        }
    }
}

fn projects_schema() -> Value {
    let methods: Vec<&str> = ProjectsMethod::ALL.iter().map(|m| m.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "method": {"type": "string", "enum": methods},
            "path": {"type": "string"},
            "content": {"type": "string"},
            "local_path": {"type": "string"},
            "present_to_user": {"type": "boolean"},
            "query": {"type": "string"},
            "n": {"type": "integer", "minimum": 1}
        },
        "required": ["method"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn the_design_schema_lists_every_static_operation_and_its_keys() {
        let tool = design_tool();
        let schema = Value::Object((*tool.input_schema).clone());
        let names = &schema["properties"]["operation"]["enum"];
        assert!(names
            .as_array()
            .is_some_and(|names| names.len() == static_operations().len()));
        let text = schema.to_string();
        assert!(text.contains("\"plan_token\""), "{text}");
        assert!(text.contains("\"link_permission\""), "{text}");
    }

    #[test]
    fn the_projects_schema_names_the_five_methods() {
        let tool = projects_tool();
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(
            schema["properties"]["method"]["enum"],
            json!([
                "project_info",
                "project_read",
                "project_search",
                "project_write",
                "project_delete"
            ])
        );
    }
}
