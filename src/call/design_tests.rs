//! Tests `DesignCall::parse`: input shape, operation names, unknown and server-only operations,
//! finalize_plan extras and the accessors.
use serde_json::{json, Value};

use super::*;

fn parse(input: Value) -> Result<DesignCall, CallError> {
    DesignCall::parse(input, None)
}

fn finalize(arguments: Value) -> Result<DesignCall, CallError> {
    parse(json!({"operation": "finalize_plan", "arguments": arguments}))
}

#[test]
fn parses_a_read_call_with_static_hints() {
    let call = parse(json!({"operation": "read_file",
        "arguments": {"project_id": "p1", "path": "index.html"}}))
    .unwrap();
    assert_eq!(call.operation, "read_file");
    assert_eq!(call.arguments["path"], json!("index.html"));
    assert_eq!(
        call.hints,
        OperationHints {
            read_only: true,
            destructive: false,
            provenance: Provenance::Static
        }
    );
}

#[test]
fn arguments_default_to_an_empty_object_only_when_absent() {
    assert!(parse(json!({"operation": "list"}))
        .unwrap()
        .arguments
        .is_empty());
    let error = parse(json!({"operation": "list", "arguments": null})).unwrap_err();
    assert_eq!(error.field, "arguments");
    assert_eq!(error.message, "`arguments` must be an object, not null");
}

#[test]
fn input_must_be_an_object() {
    for input in [json!(null), json!("list"), json!(["list"]), json!(3)] {
        let error = parse(input.clone()).unwrap_err();
        assert_eq!(error.field, "input", "{input}");
    }
    let error = parse(json!([])).unwrap_err();
    assert_eq!(
        error.message,
        "the input must be an object with `operation` and `arguments`, not an array"
    );
}

#[test]
fn unknown_top_level_keys_are_refused() {
    let error = parse(json!({"operation": "list", "args": {}})).unwrap_err();
    assert_eq!(error.field, "input");
    assert_eq!(
        error.message,
        "unknown key `args` in the input; allowed keys: `operation`, `arguments`"
    );
    let error = parse(json!({"Operation": "list"})).unwrap_err();
    assert!(
        error.message.contains("did you mean `operation`?"),
        "{}",
        error.message
    );
    let error = parse(json!({"operation": "list", "__finalizePlanAskShown": true})).unwrap_err();
    assert_eq!(error.field, "input");
}

#[test]
fn arguments_must_be_an_object() {
    for arguments in [json!([]), json!("x"), json!(1), json!(false)] {
        let error = parse(json!({"operation": "list", "arguments": arguments})).unwrap_err();
        assert_eq!(error.field, "arguments");
    }
}

#[test]
fn operation_is_required_and_a_string() {
    let error = parse(json!({"arguments": {}})).unwrap_err();
    assert_eq!(
        (error.field.as_str(), error.message.as_str()),
        ("operation", "`operation` is required")
    );
    let error = parse(json!({"operation": 5})).unwrap_err();
    assert_eq!(error.message, "`operation` must be a string, not a number");
}

#[test]
fn operation_names_follow_the_pattern() {
    let catalog = Catalog::parse(&json!([
        {"name": "a", "annotations": {"readOnlyHint": true}},
        {"name": "x.y-z_9", "annotations": {"readOnlyHint": true}},
        {"name": "o".repeat(64), "annotations": {"readOnlyHint": true}}
    ]));
    for name in ["a".to_owned(), "x.y-z_9".to_owned(), "o".repeat(64)] {
        let input = json!({"operation": name});
        assert!(DesignCall::parse(input, Some(&catalog)).is_ok(), "{name}");
    }
    for name in [
        "".to_owned(),
        "o".repeat(65),
        "a b".to_owned(),
        "é".to_owned(),
        "a/b".to_owned(),
        "a\n".to_owned(),
        "ｌｉｓｔ".to_owned(),
    ] {
        let error = parse(json!({"operation": name})).unwrap_err();
        assert_eq!(error.field, "operation", "{name:?}");
        assert!(
            error.message.contains("must be 1 to 64 ASCII letters"),
            "{}",
            error.message
        );
    }
}

#[test]
fn unknown_operations_point_to_list() {
    let empty = Catalog::parse(&json!([]));
    for catalog in [None, Some(&empty)] {
        let error = DesignCall::parse(json!({"operation": "rename_file"}), catalog).unwrap_err();
        assert_eq!(error.field, "operation");
        assert!(
            error.message.starts_with(
                "Unknown Claude Design operation \"rename_file\". \
                 Call ClaudeDesign({operation: \"list\"})"
            ),
            "{}",
            error.message
        );
    }
}

#[test]
fn server_only_read_operations_pass_without_local_validation() {
    let catalog = Catalog::parse(&json!({"tools": [
        {"name": "peek", "annotations": {"readOnlyHint": true}}
    ]}));
    let input = json!({"operation": "peek", "arguments": {"anything": {"nested": [1, 2]}}});
    let call = DesignCall::parse(input, Some(&catalog)).unwrap();
    assert_eq!(call.arguments["anything"], json!({"nested": [1, 2]}));
    assert_eq!(
        call.hints,
        OperationHints {
            read_only: true,
            destructive: true,
            provenance: Provenance::ServerOnly
        }
    );
}

#[test]
fn server_only_write_operations_need_a_local_schema() {
    let catalog = Catalog::parse(&json!([
        {"name": "poke", "annotations": {"readOnlyHint": false, "destructiveHint": false}},
        {"name": "bare"}
    ]));
    for name in ["poke", "bare"] {
        let error = DesignCall::parse(json!({"operation": name}), Some(&catalog)).unwrap_err();
        assert_eq!(error.field, "operation");
        assert!(
            error.message.starts_with(&format!(
                "`{name}` is write-capable but has no local schema (WRITE_OP_SCHEMAS entry)"
            )),
            "{}",
            error.message
        );
    }
}

#[test]
fn a_static_operation_is_validated_even_when_the_server_says_read_only() {
    let catalog = Catalog::parse(&json!([
        {"name": "write_files", "annotations": {"readOnlyHint": true, "destructiveHint": false}}
    ]));
    let input = json!({"operation": "write_files", "arguments": {"bogus": 1}});
    assert!(DesignCall::parse(input, Some(&catalog)).is_err());
    let input = json!({"operation": "write_files", "arguments": {}});
    let call = DesignCall::parse(input, Some(&catalog)).unwrap();
    assert!(!call.hints.read_only);
}

#[test]
fn finalize_plan_needs_a_project_id() {
    let error = finalize(json!({})).unwrap_err();
    assert_eq!(error.field, "arguments.project_id");
    assert_eq!(error.message, "`finalize_plan` needs `project_id`");
    let error = finalize(json!({"project_id": null})).unwrap_err();
    assert_eq!(error.field, "arguments.project_id");
    assert_eq!(error.message, "`project_id` must be a string, not null");
    let error = finalize(json!({"project_id": 12})).unwrap_err();
    assert_eq!(error.message, "`project_id` must be a string, not a number");
}

#[test]
fn finalize_plan_project_id_pattern() {
    for good in ["p", "A-z_0.9", "019a-b.c_D"] {
        assert!(finalize(json!({"project_id": good})).is_ok(), "{good}");
    }
    for bad in ["", "a b", "a/b", "é", "a:b", "p\n", "ｐ"] {
        let error = finalize(json!({"project_id": bad})).unwrap_err();
        assert_eq!(error.field, "arguments.project_id", "{bad:?}");
    }
}

#[test]
fn finalize_plan_project_id_limit_is_78_characters() {
    assert!(finalize(json!({"project_id": "p".repeat(78)})).is_ok());
    let error = finalize(json!({"project_id": "p".repeat(79)})).unwrap_err();
    assert_eq!(error.field, "arguments.project_id");
    assert_eq!(
        error.message,
        "`project_id` is 81 UTF-16 code units long once JSON-quoted; the limit is 80"
    );
}

#[test]
fn finalize_plan_project_scope_refuses_paths() {
    for key in ["writes", "deletes"] {
        let error = finalize(json!({"project_id": "p", "scope": "project", key: []})).unwrap_err();
        assert_eq!(error.field, "arguments.scope");
        assert_eq!(
            error.message,
            "`scope` \"project\" cannot be combined with `writes` or `deletes`"
        );
    }
    assert!(finalize(json!({"project_id": "p", "scope": "project"})).is_ok());
    let error =
        finalize(json!({"project_id": "p", "scope": "project", "writes": null})).unwrap_err();
    assert_eq!(
        error.field, "arguments.writes",
        "null is not an array, not absent"
    );
    assert!(
        finalize(json!({"project_id": "p", "scope": "paths", "writes": ["a"],
        "deletes": ["b"]}))
        .is_ok()
    );
}

#[test]
fn other_operations_do_not_require_project_id() {
    for operation in [
        "write_files",
        "get_project",
        "delete_files",
        "update_sharing",
    ] {
        assert!(
            parse(json!({"operation": operation})).is_ok(),
            "{operation}"
        );
    }
    // F8, C17: outside finalize_plan too, a project_id must be a string.
    let error =
        parse(json!({"operation": "get_project", "arguments": {"project_id": 7}})).unwrap_err();
    assert_eq!(error.field, "arguments.project_id");
    assert_eq!(error.message, "`project_id` must be a string, not a number");
}

fn call_with(arguments: Value) -> DesignCall {
    parse(json!({"operation": "write_files", "arguments": arguments})).unwrap()
}

#[test]
fn accessors_read_strings_only() {
    let call = call_with(json!({"project_id": "p1", "plan_token": "tok"}));
    assert_eq!(call.project_id(), Some("p1"));
    assert_eq!(call.plan_token(), Some("tok"));
    assert!(!call.is_tokenless());
    assert_eq!(call.string_argument("project_id"), Some("p1"));
    assert_eq!(call.string_argument("files"), None);
}

#[test]
fn tokenless_means_missing_or_empty() {
    for arguments in [json!({}), json!({"plan_token": ""})] {
        let call = call_with(arguments.clone());
        assert!(call.is_tokenless(), "{arguments}");
        assert_eq!(call.plan_token(), None, "{arguments}");
    }
    // §5.2: tokenless is "missing or empty"; a scalar that is not a string is a token that
    // matches no plan (and `null` never passes validation).
    for token in [json!(0), json!(false), json!(1.5)] {
        let call = call_with(json!({"plan_token": token}));
        assert!(!call.is_tokenless(), "{token}");
        assert_eq!(call.plan_token(), None, "{token}");
    }
    assert!(!call_with(json!({"plan_token": " "})).is_tokenless());
}

#[test]
fn design_call_serializes() {
    let call = call_with(json!({"project_id": "p1"}));
    let value = serde_json::to_value(&call).unwrap();
    assert_eq!(value["operation"], json!("write_files"));
    assert_eq!(value["arguments"], json!({"project_id": "p1"}));
    assert_eq!(value["hints"]["provenance"], json!("Static"));
}
