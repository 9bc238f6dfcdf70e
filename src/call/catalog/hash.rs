//! Owns the catalog hash of §1.2: the canonical text of a catalog (its listing entries as
//! compact JSON with keys sorted at every depth) and the short sha256 of that text. It must not
//! parse a catalog (that is `catalog`) or depend on serde_json's key order.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Catalog, CatalogTool};

/// Hex characters of the sha256 kept as the catalog hash (§1.2).
const HASH_HEX_CHARS: usize = 12;

impl Catalog {
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
    use super::*;
    use serde_json::json;

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
