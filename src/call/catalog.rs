//! Owns the loosely parsed server catalog (`tools/list`); it must not fetch the catalog or
//! merge hints (that is `operations.rs`). Its hash is `hash`'s.

mod hash;

use serde_json::Value;

/// One operation the server advertised.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogTool {
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
}

/// A discovered `tools/list` result, tools in server order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    tools: Vec<CatalogTool>,
}

impl Catalog {
    /// Parses `{"tools":[...]}` or a bare array, skipping entries without a string `name`.
    ///
    /// Never fails: anything else gives an empty catalog. Optional fields of a kept entry are
    /// read only when well-typed (`description` a string, `inputSchema` any non-null value,
    /// hints booleans) and otherwise ignored, so one odd field does not hide an operation.
    pub fn parse(value: &Value) -> Catalog {
        let entries = match value {
            Value::Array(entries) => entries.as_slice(),
            Value::Object(object) => match object.get("tools") {
                Some(Value::Array(entries)) => entries.as_slice(),
                _ => &[],
            },
            _ => &[],
        };
        Catalog {
            tools: entries.iter().filter_map(parse_tool).collect(),
        }
    }

    /// The first tool named `name`.
    pub fn tool(&self, name: &str) -> Option<&CatalogTool> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// All tools in server order.
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }
}

fn parse_tool(entry: &Value) -> Option<CatalogTool> {
    let entry = entry.as_object()?;
    let name = entry.get("name")?.as_str()?.to_owned();
    let annotations = entry.get("annotations").and_then(Value::as_object);
    let hint = |key: &str| {
        annotations
            .and_then(|map| map.get(key))
            .and_then(Value::as_bool)
    };
    Some(CatalogTool {
        name,
        description: entry
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        input_schema: entry
            .get("inputSchema")
            .filter(|schema| !schema.is_null())
            .cloned(),
        read_only_hint: hint("readOnlyHint"),
        destructive_hint: hint("destructiveHint"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({"tools": [
            {"name": "list_projects", "description": "Lists projects. More.",
             "inputSchema": {"type": "object", "properties": {}},
             "annotations": {"readOnlyHint": true, "destructiveHint": false}},
            {"name": "shiny_new_op"}
        ]})
    }

    #[test]
    fn parses_the_wrapped_form() {
        let catalog = Catalog::parse(&sample());
        assert_eq!(catalog.tools().len(), 2);
        let first = catalog.tool("list_projects").unwrap();
        assert_eq!(first.description.as_deref(), Some("Lists projects. More."));
        assert_eq!(first.read_only_hint, Some(true));
        assert_eq!(first.destructive_hint, Some(false));
        assert!(first.input_schema.is_some());
        let second = catalog.tool("shiny_new_op").unwrap();
        assert_eq!(second.description, None);
        assert_eq!(second.input_schema, None);
        assert_eq!(second.read_only_hint, None);
        assert_eq!(second.destructive_hint, None);
    }

    #[test]
    fn parses_a_bare_array_in_order() {
        let catalog = Catalog::parse(&json!([{"name": "b"}, {"name": "a"}]));
        let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
    }

    #[test]
    fn skips_entries_without_a_string_name() {
        let catalog = Catalog::parse(&json!([
            {"name": 7}, {"description": "x"}, "list", 3, null, [],
            {"name": null}, {"name": "kept"}
        ]));
        assert_eq!(catalog.tools().len(), 1);
        assert!(catalog.tool("kept").is_some());
    }

    #[test]
    fn ignores_ill_typed_optional_fields() {
        let catalog = Catalog::parse(&json!([{
            "name": "odd", "description": 5, "inputSchema": null,
            "annotations": {"readOnlyHint": "true", "destructiveHint": 0}
        }, {"name": "flat", "annotations": [true]}]));
        let odd = catalog.tool("odd").unwrap();
        assert_eq!(odd.description, None);
        assert_eq!(odd.input_schema, None);
        assert_eq!(odd.read_only_hint, None);
        assert_eq!(odd.destructive_hint, None);
        assert_eq!(catalog.tool("flat").unwrap().read_only_hint, None);
    }

    #[test]
    fn anything_else_is_an_empty_catalog() {
        for value in [
            json!(null),
            json!(1),
            json!("tools"),
            json!({}),
            json!({"tools": {}}),
        ] {
            assert!(Catalog::parse(&value).tools().is_empty(), "{value}");
        }
    }

    #[test]
    fn finds_the_first_of_duplicate_names() {
        let catalog = Catalog::parse(&json!([
            {"name": "dup", "description": "first"}, {"name": "dup", "description": "second"}
        ]));
        assert_eq!(
            catalog.tool("dup").unwrap().description.as_deref(),
            Some("first")
        );
        assert!(catalog.tool("missing").is_none());
    }
}
