//! call::digest: the digest of a raw tool call — its tool name and its input in a canonical JSON
//! form (object keys sorted at every level, no insignificant whitespace) — so two transmissions
//! of the same call digest alike whatever their key order (JSON objects are unordered). What a
//! hook attestation, a sealed `requestState` and an approval are bound to. It reads nothing else.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 over `tool`, a NUL, and the canonical form of `input`.
pub fn call_digest(tool: &str, input: &Value) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    let mut canonical = String::new();
    write_canonical(input, &mut canonical);
    hasher.update(canonical.as_bytes());
    hasher.finalize().into()
}

/// The digest as lower-case hex (how records and stored rows carry it).
pub fn call_digest_hex(tool: &str, input: &Value) -> String {
    call_digest(tool, input)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// `value` with every object's keys in sorted order, compact.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    write_canonical(item, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_digest_but_any_value_does() {
        let a: Value = serde_json::from_str(
            r#"{"operation":"delete_files","arguments":{"project_id":"p1","paths":["a"]}}"#,
        )
        .unwrap_or_default();
        let b: Value = serde_json::from_str(
            r#"{"arguments":{"paths":["a"],"project_id":"p1"},"operation":"delete_files"}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            call_digest("ClaudeDesign", &a),
            call_digest("ClaudeDesign", &b)
        );
        assert_ne!(call_digest("Projects", &a), call_digest("ClaudeDesign", &a));
        let c =
            json!({"operation": "delete_files", "arguments": {"project_id": "p1", "paths": ["b"]}});
        assert_ne!(
            call_digest("ClaudeDesign", &a),
            call_digest("ClaudeDesign", &c)
        );
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": [true, null]})),
            r#"{"a":[true,null],"b":1}"#
        );
        assert_eq!(call_digest_hex("t", &json!({})).len(), 64);
    }
}
