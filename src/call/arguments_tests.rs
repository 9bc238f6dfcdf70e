//! Tests the §1.4 type and size rules through `DesignCall::parse`, at and just over each limit.
use serde_json::json;

use super::test_support::{field_of, parse};

/// A string of exactly `bytes` UTF-8 bytes made of `unit` repeated (plus ASCII padding).
fn sized(bytes: usize, unit: &str) -> String {
    let mut text = unit.repeat(bytes / unit.len());
    text.push_str(&"a".repeat(bytes % unit.len()));
    assert_eq!(text.len(), bytes);
    text
}

#[test]
fn scalars_accept_strings_booleans_and_numbers() {
    for value in [json!("x"), json!(true), json!(0), json!(-1.5), json!(1e300)] {
        assert!(
            parse("read_file", json!({"path": value})).is_ok(),
            "{value}"
        );
    }
}

#[test]
fn scalars_refuse_objects_and_arrays() {
    let error = parse("read_file", json!({"path": ["a"]})).unwrap_err();
    assert_eq!(error.field, "arguments.path");
    assert_eq!(
        error.message,
        "`path` must be a string, boolean or number, not an array"
    );
    assert_eq!(
        field_of("get_project", json!({"project_id": {}})),
        "arguments.project_id"
    );
    assert_eq!(
        field_of("list", json!({"full": {"a": 1}})),
        "arguments.full"
    );
}

#[test]
fn string_scalar_limit_is_4096_bytes() {
    assert!(parse("read_file", json!({"path": sized(4096, "a")})).is_ok());
    let error = parse("read_file", json!({"path": sized(4097, "a")})).unwrap_err();
    assert_eq!(error.field, "arguments.path");
    assert_eq!(
        error.message,
        "`path` is 4097 bytes long; the limit is 4096 UTF-8 bytes"
    );
}

#[test]
fn string_scalar_limit_counts_multi_byte_characters_in_bytes() {
    // 1,024 four-byte characters are exactly 4,096 bytes; one more two-byte character is over.
    let emoji = "😀".repeat(1024);
    assert_eq!(emoji.len(), 4096);
    assert!(parse("create_project", json!({"name": emoji})).is_ok());
    let over = format!("{emoji}é");
    assert_eq!(over.chars().count(), 1025);
    assert_eq!(
        field_of("create_project", json!({"name": over})),
        "arguments.name"
    );
    // 2,048 two-byte characters fit; three-byte ones round to 4,095 plus one ASCII byte.
    assert!(parse("create_project", json!({"name": "é".repeat(2048)})).is_ok());
    assert!(parse("create_project", json!({"name": sized(4096, "€")})).is_ok());
    assert!(parse("create_project", json!({"name": sized(4097, "€")})).is_err());
}

#[test]
fn plan_token_limit_is_65536_bytes() {
    for operation in [
        "write_files",
        "copy_files",
        "delete_files",
        "create_support_js",
    ] {
        assert!(parse(operation, json!({"plan_token": sized(65536, "a")})).is_ok());
        let error = parse(operation, json!({"plan_token": sized(65537, "a")})).unwrap_err();
        assert_eq!(error.field, "arguments.plan_token");
        assert_eq!(
            error.message,
            "`plan_token` is 65537 bytes long; the limit is 65536 UTF-8 bytes"
        );
    }
    assert!(parse("write_files", json!({"plan_token": sized(65536, "é")})).is_ok());
    assert!(parse("write_files", json!({"plan_token": sized(65537, "é")})).is_err());
}

#[test]
fn array_keys_must_hold_arrays() {
    let error = parse("write_files", json!({"files": {"path": "a"}})).unwrap_err();
    assert_eq!(error.field, "arguments.files");
    assert_eq!(error.message, "`files` must be an array, not an object");
    assert_eq!(
        field_of("delete_files", json!({"paths": "a.txt"})),
        "arguments.paths"
    );
    assert_eq!(
        field_of("finalize_plan", json!({"writes": 1})),
        "arguments.writes"
    );
    assert_eq!(
        field_of("put_conversation", json!({"messages": true})),
        "arguments.messages"
    );
    assert_eq!(
        field_of("render_preview", json!({"validators": "x"})),
        "arguments.validators"
    );
}

#[test]
fn string_elements_must_be_short_strings() {
    assert!(parse("delete_files", json!({"paths": []})).is_ok());
    assert!(parse("delete_files", json!({"paths": [sized(4096, "é")]})).is_ok());
    let error = parse("delete_files", json!({"paths": ["a", sized(4097, "é")]})).unwrap_err();
    assert_eq!(error.field, "arguments.paths[1]");
    assert_eq!(
        error.message,
        "`paths[1]` is 4097 bytes long; the limit is 4096 UTF-8 bytes"
    );
    let error = parse("render_preview", json!({"validators": ["a", "b", 3]})).unwrap_err();
    assert_eq!(error.field, "arguments.validators[2]");
    assert_eq!(
        error.message,
        "`validators[2]` must be a string, not a number"
    );
    assert_eq!(
        field_of("delete_files", json!({"paths": [null]})),
        "arguments.paths[0]"
    );
}

#[test]
fn object_elements_must_be_objects() {
    let error = parse("write_files", json!({"files": [{"path": "a"}, "b.txt"]})).unwrap_err();
    assert_eq!(error.field, "arguments.files[1]");
    assert_eq!(error.message, "`files[1]` must be an object, not a string");
}

#[test]
fn object_elements_need_their_required_fields() {
    let error = parse("write_files", json!({"files": [{"data": "x"}]})).unwrap_err();
    assert_eq!(error.field, "arguments.files[0].path");
    assert_eq!(error.message, "`files[0]` is missing required field `path`");
    let error = parse("copy_files", json!({"files": [{"src": "a"}]})).unwrap_err();
    assert_eq!(error.field, "arguments.files[0].dest");
    let error = parse("put_conversation", json!({"messages": [{"role": "user"}]})).unwrap_err();
    assert_eq!(error.field, "arguments.messages[0].content");
    let error = parse("delete_files", json!({"files": [{"path": null}]})).unwrap_err();
    assert_eq!(error.field, "arguments.files[0].path");
}

#[test]
fn object_element_fields_must_be_strings() {
    let error = parse("write_files", json!({"files": [{"path": "a", "data": 5}]})).unwrap_err();
    assert_eq!(error.field, "arguments.files[0].data");
    assert_eq!(
        error.message,
        "`files[0].data` must be a string, not a number"
    );
    let error = parse(
        "copy_files",
        json!({"files": [{"src": "a", "dest": ["b"]}]}),
    )
    .unwrap_err();
    assert_eq!(error.field, "arguments.files[0].dest");
    // Every field must be a string (§1.4): a null optional field is not "absent".
    let error = parse(
        "write_files",
        json!({"files": [{"path": "a", "if_match": null}]}),
    )
    .unwrap_err();
    assert_eq!(error.field, "arguments.files[0].if_match");
    assert_eq!(
        error.message,
        "`files[0].if_match` must be a string, not null"
    );
}

#[test]
fn object_element_fields_are_capped_except_bodies() {
    let at = sized(4096, "é");
    let over = sized(4097, "é");
    assert!(parse(
        "write_files",
        json!({"files": [{"path": at, "encoding": at}]})
    )
    .is_ok());
    let error = parse("write_files", json!({"files": [{"path": over}]})).unwrap_err();
    assert_eq!(error.field, "arguments.files[0].path");
    assert_eq!(
        error.message,
        "`files[0].path` is 4097 bytes long; the limit is 4096 UTF-8 bytes"
    );
    let error = parse(
        "copy_files",
        json!({"files": [{"src": "a", "dest": "b",
        "src_project_id": over}]}),
    )
    .unwrap_err();
    assert_eq!(error.field, "arguments.files[0].src_project_id");
    let error = parse(
        "put_conversation",
        json!({"messages": [{"role": over, "content": "c"}]}),
    )
    .unwrap_err();
    assert_eq!(error.field, "arguments.messages[0].role");
    let body = "x".repeat(200_000);
    assert!(parse(
        "write_files",
        json!({"files": [{"path": "a", "data": body}]})
    )
    .is_ok());
    assert!(parse(
        "put_conversation",
        json!({"messages": [{"role": "user", "content": body}]})
    )
    .is_ok());
}
