//! server::mcp::schema: the two MCP tools as the reference client shapes them — `ClaudeDesign`
//! (`{operation, arguments}`, its `inputSchema` and description built from the static
//! operation table: `design`) and `Projects` (`{method, ...}` with the five methods). It
//! describes; it validates nothing (`call::DesignCall` and `call::ProjectsCall` do, on every
//! call).

mod design;

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

use crate::call::ProjectsMethod;

pub const DESIGN: &str = "ClaudeDesign";
pub const PROJECTS: &str = "Projects";

pub fn design_tool() -> Tool {
    Tool::new(
        DESIGN,
        design::description(),
        object(design::input_schema()),
    )
    .with_annotations(ToolAnnotations::with_title("Claude Design").destructive(true))
}

pub fn projects_tool() -> Tool {
    Tool::new(
        PROJECTS,
        "The session's attached claude.ai Project through askgate. Methods: \
         project_info() the project's docs, files and knowledge size; project_read(path) one \
         doc or file; project_search(query, n 1-15) search the docs; project_write(path, \
         content | local_path, present_to_user) write a text doc (exactly one of content or \
         local_path; local_path names a file on askgate's machine, read only under the root \
         its operator configured); project_delete(path) delete a text doc. askgate's policies \
         allow, hold for a person to approve, or deny each call.",
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

fn projects_schema() -> Value {
    let methods: Vec<&str> = ProjectsMethod::ALL.iter().map(|m| m.as_str()).collect();
    json!({
        "type": "object",
        "properties": {
            "method": {"type": "string", "enum": methods},
            "path": {"type": "string", "minLength": 1, "maxLength": 255,
                "description": "the doc or file (project_read, project_write, project_delete)"},
            "content": {"type": "string",
                "description": "the text to write (project_write; or local_path)"},
            "local_path": {"type": "string", "minLength": 1,
                "description": "a file on askgate's machine to upload instead of content \
                    (project_write), read only under the operator's configured root"},
            "present_to_user": {"type": "boolean",
                "description": "show the written doc to the user (project_write)"},
            "query": {"type": "string", "minLength": 1,
                "description": "what to search for (project_search)"},
            "n": {"type": "integer", "minimum": 1, "maximum": 15,
                "description": "how many hits (project_search, default 5)"}
        },
        "required": ["method"],
        "additionalProperties": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::operations::static_operations;

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
