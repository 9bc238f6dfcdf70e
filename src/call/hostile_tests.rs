//! Feeds hostile inputs to every parser and checks they return values instead of panicking.
use serde_json::{json, Value};

use super::operations::static_operations;
use super::*;

/// An array nested `depth` levels deep, built without recursion.
fn nested(depth: usize) -> Value {
    let mut value = json!("leaf");
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

fn hostile_values() -> Vec<Value> {
    let deep_text = format!("{}{}", "[".repeat(120), "]".repeat(120));
    vec![
        Value::Null,
        json!(true),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(f64::MAX),
        json!(-0.0),
        json!(1e-300),
        serde_json::from_str("1e308").unwrap(),
        serde_json::from_str("123456789012345678901234567890").unwrap(),
        serde_json::from_str(&deep_text).unwrap(),
        nested(500),
        json!(""),
        json!("\u{0}\u{202e}\u{feff}`\"\\"),
        json!("😀".repeat(5000)),
        json!({"": null, "1": [], "\u{0}": {}, "😀": 1}),
        json!([null, [], {}, [[[]]], 1.5]),
        json!([{"path": nested(50)}, {"content": "x"}, {"": ""}]),
        json!({"tools": nested(100)}),
    ]
}

#[test]
fn design_parse_never_panics() {
    let catalog = Catalog::parse(&json!([
        {"name": "peek", "annotations": {"readOnlyHint": true}}, {"name": "poke"}
    ]));
    let mut operations: Vec<Value> = static_operations()
        .iter()
        .map(|op| json!(op.name))
        .collect();
    operations.extend([json!("peek"), json!("poke"), json!("nope")]);
    operations.extend(hostile_values());
    for operation in &operations {
        for value in hostile_values() {
            for catalog in [None, Some(&catalog)] {
                let _ = DesignCall::parse(value.clone(), catalog);
                let _ =
                    DesignCall::parse(json!({"operation": operation, "arguments": value}), catalog);
                for key in [
                    "files",
                    "paths",
                    "messages",
                    "role",
                    "scope",
                    "project_id",
                    "plan_token",
                    "writes",
                    "\u{0}",
                    "filés",
                ] {
                    let input = json!({"operation": operation, "arguments": {key: value}});
                    let _ = DesignCall::parse(input, catalog);
                }
            }
        }
    }
}

#[test]
fn projects_parse_never_panics() {
    let keys = [
        "method",
        "path",
        "content",
        "local_path",
        "present_to_user",
        "query",
        "n",
        "force",
        "",
        "\u{0}",
    ];
    for value in hostile_values() {
        let _ = ProjectsCall::parse(&value);
        for key in keys {
            for method in ProjectsMethod::ALL {
                let input = json!({"method": method.as_str(), key: value});
                let _ = ProjectsCall::parse(&input);
            }
        }
    }
}

#[test]
fn catalog_parse_and_hash_never_panic() {
    for value in hostile_values() {
        let catalog = Catalog::parse(&value);
        assert_eq!(catalog.hash().len(), 12);
        let wrapped = Catalog::parse(&json!({"tools": [{"name": "x", "inputSchema": value,
            "description": value, "annotations": value}]}));
        assert_eq!(wrapped.tools().len(), 1);
        assert_eq!(wrapped.hash().len(), 12);
        let _ = effective_hints("x", Some(&wrapped));
    }
}

#[test]
fn huge_keys_are_cut_in_errors() {
    let key = "k".repeat(1_000_000);
    let error = DesignCall::parse(
        json!({"operation": "list", "arguments": {key.clone(): 1}}),
        None,
    )
    .unwrap_err();
    assert!(error.field.len() < 200, "{}", error.field.len());
    assert!(error.message.len() < 400, "{}", error.message.len());
    let error = ProjectsCall::parse(&json!({"method": "project_info", key: 1})).unwrap_err();
    assert!(error.field.len() < 200);
    let error = DesignCall::parse(json!({"operation": "o".repeat(100_000)}), None).unwrap_err();
    assert!(error.message.len() < 400);
}

#[test]
fn large_arrays_are_checked_in_linear_time() {
    let files: Vec<Value> = (0..50_000)
        .map(|i| json!({"path": format!("f{i}.txt")}))
        .collect();
    let input = json!({"operation": "write_files", "arguments": {"files": files}});
    assert!(DesignCall::parse(input, None).is_ok());
}
