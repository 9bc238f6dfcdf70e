//! Owns the loosely parsed server catalog (`tools/list`) and its hash; it must not fetch the
//! catalog or merge hints (that is `operations.rs`).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Hex characters of the sha256 kept as the catalog hash (§1.2).
const HASH_HEX_CHARS: usize = 12;

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

    /// The first 12 hex characters of the sha256 of [`Catalog::canonical_json`].
    pub fn hash(&self) -> String {
        let digest = Sha256::digest(self.canonical_json().as_bytes());
        let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
        hex.chars().take(HASH_HEX_CHARS).collect()
    }

    /// The exact text that is hashed: `{"tools":[{"description":…,"inputSchema":…,"name":…}]}`.
    ///
    /// Compact JSON (serde_json escaping, no whitespace) with the keys of every object sorted by
    /// byte order, at every depth, and absent `description` / `inputSchema` omitted. Sorting
    /// ourselves keeps the hash identical whether or not serde_json's `preserve_order` feature
    /// is enabled somewhere in the build; without that feature this equals `serde_json::to_string`
    /// of the same value.
    pub fn canonical_json(&self) -> String {
        let mut text = String::from("{\"tools\":[");
        for (index, tool) in self.tools.iter().enumerate() {
            if index > 0 {
                text.push(',');
            }
            text.push_str(&canonical_text(&listing_entry(tool)));
        }
        text.push_str("]}");
        text
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

/// The `{name, description, inputSchema}` entry the `list` pseudo-operation returns.
fn listing_entry(tool: &CatalogTool) -> Value {
    let mut entry = serde_json::Map::new();
    entry.insert("name".to_owned(), Value::String(tool.name.clone()));
    if let Some(description) = &tool.description {
        entry.insert("description".to_owned(), Value::String(description.clone()));
    }
    if let Some(schema) = &tool.input_schema {
        entry.insert("inputSchema".to_owned(), schema.clone());
    }
    Value::Object(entry)
}

/// Compact JSON with object keys sorted at every depth.
fn canonical_text(value: &Value) -> String {
    let mut text = String::new();
    write_canonical(value, &mut text);
    text
}

fn write_canonical(value: &Value, text: &mut String) {
    match value {
        Value::Array(items) => {
            text.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    text.push(',');
                }
                write_canonical(item, text);
            }
            text.push(']');
        }
        Value::Object(object) => {
            let mut entries: Vec<(&String, &Value)> = object.iter().collect();
            entries.sort_by(|left, right| left.0.cmp(right.0));
            text.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    text.push(',');
                }
                text.push_str(&Value::String(key.clone()).to_string());
                text.push(':');
                write_canonical(item, text);
            }
            text.push('}');
        }
        scalar => text.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]

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

    #[test]
    fn hashes_the_documented_canonical_text() {
        let catalog = Catalog::parse(&json!([
            {"name": "a", "description": "d", "inputSchema": {"z": 1, "a": [true, null]},
             "annotations": {"readOnlyHint": true}},
            {"name": "b\"q"}
        ]));
        assert_eq!(
            catalog.canonical_json(),
            r#"{"tools":[{"description":"d","inputSchema":{"a":[true,null],"z":1},"name":"a"},{"name":"b\"q"}]}"#
        );
        let expected = Sha256::digest(catalog.canonical_json().as_bytes());
        let expected: String = expected
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(catalog.hash(), expected);
        assert_eq!(catalog.hash().len(), 12);
        assert!(catalog
            .hash()
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn hash_is_deterministic_and_ignores_key_order_and_annotations() {
        let one = Catalog::parse(
            &serde_json::from_str::<Value>(
                r#"[{"name":"a","inputSchema":{"b":1,"a":2},"description":"x"}]"#,
            )
            .unwrap(),
        );
        let two = Catalog::parse(
            &serde_json::from_str::<Value>(
                r#"[{"annotations":{"readOnlyHint":true},"description":"x","inputSchema":{"a":2,"b":1},"name":"a"}]"#,
            )
            .unwrap(),
        );
        assert_eq!(one.hash(), two.hash());
        assert_eq!(one.hash(), one.clone().hash());
    }

    #[test]
    fn hash_changes_with_content_and_order() {
        let base = Catalog::parse(&json!([{"name": "a"}, {"name": "b"}]));
        let swapped = Catalog::parse(&json!([{"name": "b"}, {"name": "a"}]));
        let described = Catalog::parse(&json!([{"name": "a", "description": ""}, {"name": "b"}]));
        assert_ne!(base.hash(), swapped.hash());
        assert_ne!(base.hash(), described.hash());
    }

    #[test]
    fn empty_catalog_hashes_the_empty_listing() {
        let empty = Catalog::parse(&json!(null));
        assert_eq!(empty.canonical_json(), r#"{"tools":[]}"#);
        assert_eq!(empty.hash().len(), 12);
    }
}
