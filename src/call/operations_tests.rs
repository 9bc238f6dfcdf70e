//! Tests the static operation table, every operation's allowed keys and the hint merge.
use serde_json::{json, Map, Value};

use super::operations::static_operations;
use super::schema::ArgumentKind;
use super::*;

/// (operation, read_only, destructive, allowed keys) exactly as §1.3 and §1.4 list them.
const EXPECTED: &[(&str, bool, bool, &[&str])] = &[
    ("list", true, false, &["full"]),
    ("list_design_systems", true, false, &[]),
    (
        "get_claude_design_prompt",
        true,
        false,
        &["design_system_id", "project_id"],
    ),
    ("list_projects", true, false, &[]),
    ("get_project", true, false, &["project_id"]),
    ("list_files", true, false, &["project_id", "path"]),
    ("read_file", true, false, &["project_id", "path"]),
    ("get_conversation", true, false, &["project_id", "chat_id"]),
    ("list_members", true, false, &["project_id"]),
    (
        "render_preview",
        false,
        false,
        &["project_id", "path", "render", "validators"],
    ),
    (
        "create_project",
        false,
        false,
        &["name", "design_system_id"],
    ),
    (
        "put_conversation",
        false,
        false,
        &["project_id", "title", "messages"],
    ),
    (
        "finalize_plan",
        false,
        false,
        &["project_id", "writes", "deletes", "scope"],
    ),
    (
        "write_files",
        false,
        false,
        &["project_id", "plan_token", "files"],
    ),
    (
        "copy_files",
        false,
        false,
        &["project_id", "plan_token", "files"],
    ),
    (
        "create_support_js",
        false,
        false,
        &["project_id", "plan_token", "path", "if_match"],
    ),
    (
        "add_member",
        false,
        false,
        &["project_id", "account_uuid", "email", "role"],
    ),
    (
        "delete_files",
        false,
        true,
        &["project_id", "plan_token", "paths", "files"],
    ),
    (
        "remove_member",
        false,
        true,
        &["project_id", "account_uuid"],
    ),
    (
        "update_member_role",
        false,
        true,
        &["project_id", "account_uuid", "role"],
    ),
    (
        "update_sharing",
        false,
        true,
        &["project_id", "scope", "link_permission"],
    ),
];

#[test]
fn table_matches_the_facts() {
    assert_eq!(static_operations().len(), EXPECTED.len());
    for (name, read_only, destructive, keys) in EXPECTED {
        let operation = static_operation(name).unwrap();
        assert_eq!(operation.name, *name);
        assert_eq!(operation.read_only, *read_only, "{name} read_only");
        assert_eq!(operation.destructive, *destructive, "{name} destructive");
        let names: Vec<&str> = operation.schema.key_names().collect();
        assert_eq!(names, *keys, "{name} keys");
    }
}

#[test]
fn unknown_names_are_not_in_the_table() {
    for name in ["", "LIST", "list ", "rename_file", "write_file"] {
        assert!(static_operation(name).is_none(), "{name}");
    }
}

#[test]
fn element_fields_match_the_facts() {
    let fields = |operation: &str, key: &str| -> Vec<(&'static str, bool, bool)> {
        let schema = static_operation(operation).unwrap().schema;
        let ArgumentKind::ObjectList { fields } = schema.key(key).unwrap().kind else {
            panic!("{operation}.{key} is not an object list");
        };
        fields
            .iter()
            .map(|f| (f.name, f.required, f.max_bytes.is_some()))
            .collect()
    };
    assert_eq!(
        fields("write_files", "files"),
        [
            ("path", true, true),
            ("data", false, false),
            ("local_path", false, true),
            ("encoding", false, true),
            ("if_match", false, true)
        ]
    );
    assert_eq!(
        fields("delete_files", "files"),
        [("path", true, true), ("if_match", false, true)]
    );
    assert_eq!(
        fields("copy_files", "files"),
        [
            ("src", true, true),
            ("dest", true, true),
            ("src_project_id", false, true),
            ("if_match", false, true)
        ]
    );
    assert_eq!(
        fields("put_conversation", "messages"),
        [("role", true, true), ("content", true, false)]
    );
}

/// A value that satisfies `kind`, for the all-keys round trip.
fn valid_value(kind: ArgumentKind) -> Value {
    match kind {
        ArgumentKind::Scalar { .. } => json!("proj-1"),
        ArgumentKind::Choice { values, .. } => json!(values[0]),
        ArgumentKind::StringList => json!(["a.txt"]),
        ArgumentKind::ObjectList { fields } => {
            let element: Map<String, Value> = fields
                .iter()
                .map(|f| (f.name.to_owned(), json!("v")))
                .collect();
            json!([element])
        }
    }
}

#[test]
fn every_operation_accepts_all_its_keys_and_refuses_one_more() {
    for operation in static_operations() {
        let mut arguments: Map<String, Value> = operation
            .schema
            .keys
            .iter()
            .map(|key| (key.name.to_owned(), valid_value(key.kind)))
            .collect();
        let input = json!({"operation": operation.name, "arguments": arguments.clone()});
        let call = DesignCall::parse(input, None).unwrap();
        assert_eq!(call.arguments, arguments, "{}", operation.name);

        arguments.insert("bogus_key".to_owned(), json!(1));
        let input = json!({"operation": operation.name, "arguments": arguments});
        let error = DesignCall::parse(input, None).unwrap_err();
        assert_eq!(error.field, "arguments.bogus_key", "{}", operation.name);
    }
}

fn catalog(tools: Value) -> Catalog {
    Catalog::parse(&tools)
}

fn hints(read_only: bool, destructive: bool, provenance: Provenance) -> OperationHints {
    OperationHints {
        read_only,
        destructive,
        provenance,
    }
}

#[test]
fn static_hints_without_a_catalog() {
    assert_eq!(
        effective_hints("list", None),
        hints(true, false, Provenance::Static)
    );
    assert_eq!(
        effective_hints("render_preview", None),
        hints(false, false, Provenance::Static)
    );
    assert_eq!(
        effective_hints("delete_files", None),
        hints(false, true, Provenance::Static)
    );
}

#[test]
fn server_can_tighten_a_static_operation() {
    let tightened = catalog(json!([
        {"name": "read_file", "annotations": {"readOnlyHint": false, "destructiveHint": true}}
    ]));
    assert_eq!(
        effective_hints("read_file", Some(&tightened)),
        hints(false, true, Provenance::Static)
    );
}

#[test]
fn server_cannot_loosen_a_static_operation() {
    let loosened = catalog(json!([
        {"name": "delete_files", "annotations": {"readOnlyHint": true, "destructiveHint": false}},
        {"name": "render_preview", "annotations": {"readOnlyHint": true}}
    ]));
    assert_eq!(
        effective_hints("delete_files", Some(&loosened)),
        hints(false, true, Provenance::Static)
    );
    assert_eq!(
        effective_hints("render_preview", Some(&loosened)),
        hints(false, false, Provenance::Static)
    );
}

#[test]
fn static_operation_missing_from_catalog_keeps_static_hints() {
    let other = catalog(json!([{"name": "something_else"}]));
    assert_eq!(
        effective_hints("get_project", Some(&other)),
        hints(true, false, Provenance::Static)
    );
}

#[test]
fn server_only_operations_take_server_hints_with_closed_defaults() {
    let server = catalog(json!([
        {"name": "peek", "annotations": {"readOnlyHint": true, "destructiveHint": false}},
        {"name": "peek_default", "annotations": {"readOnlyHint": true}},
        {"name": "poke", "annotations": {"readOnlyHint": false, "destructiveHint": false}},
        {"name": "bare"}
    ]));
    let server = Some(&server);
    assert_eq!(
        effective_hints("peek", server),
        hints(true, false, Provenance::ServerOnly)
    );
    assert_eq!(
        effective_hints("peek_default", server),
        hints(true, true, Provenance::ServerOnly)
    );
    assert_eq!(
        effective_hints("poke", server),
        hints(false, false, Provenance::ServerOnly)
    );
    assert_eq!(
        effective_hints("bare", server),
        hints(false, true, Provenance::ServerOnly)
    );
}

#[test]
fn unknown_operations_are_destructive_writes() {
    let empty = catalog(json!([]));
    for catalog in [None, Some(&empty)] {
        assert_eq!(
            effective_hints("mystery", catalog),
            hints(false, true, Provenance::Unknown)
        );
    }
}

#[test]
fn hints_serialize_for_decision_logs() {
    let value = serde_json::to_value(effective_hints("delete_files", None)).unwrap();
    assert_eq!(
        value,
        json!({"read_only": false, "destructive": true, "provenance": "Static"})
    );
}

#[test]
fn list_stays_local_and_read_only_whatever_a_catalog_entry_named_list_says() {
    for annotations in [
        json!({"readOnlyHint": false}),
        json!({"readOnlyHint": false, "destructiveHint": true}),
        json!({"destructiveHint": "yes"}),
    ] {
        let catalog = Catalog::parse(&json!([{"name": "list", "annotations": annotations}]));
        let hints = effective_hints("list", Some(&catalog));
        assert!(hints.read_only, "{annotations}");
        assert!(!hints.destructive, "{annotations}");
        assert_eq!(hints.provenance, Provenance::Static);
    }
}

#[test]
fn a_hint_that_is_not_a_json_boolean_never_makes_an_operation_read_only() {
    for hint in [
        json!("true"),
        json!(1),
        json!(null),
        json!([true]),
        json!({"v": true}),
    ] {
        let catalog = Catalog::parse(&json!([
            {"name": "shiny_op", "annotations": {"readOnlyHint": hint}},
            {"name": "render_preview", "annotations": {"readOnlyHint": hint}}
        ]));
        assert!(
            !effective_hints("shiny_op", Some(&catalog)).read_only,
            "{hint}"
        );
        assert!(
            !effective_hints("render_preview", Some(&catalog)).read_only,
            "{hint}"
        );
    }
}
