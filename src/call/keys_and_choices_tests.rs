//! Tests unknown keys and fields, `null` handling and enum-like choices of §1.4 through
//! `DesignCall::parse`.
use serde_json::{json, Value};

use super::test_support::{field_of, parse};

#[test]
fn unknown_element_fields_are_refused_with_hints() {
    let error = parse(
        "copy_files",
        json!({"files": [{"src": "a", "dest": "b", "Dest": "c"}]}),
    )
    .unwrap_err();
    assert_eq!(error.field, "arguments.files[0].Dest");
    assert_eq!(
        error.message,
        "unknown field `Dest` in `files[0]`; did you mean `dest`?; \
         allowed fields: `src`, `dest`, `src_project_id`, `if_match`"
    );
    let error = parse(
        "delete_files",
        json!({"files": [{"path": "a", "data": "x"}]}),
    )
    .unwrap_err();
    assert_eq!(error.field, "arguments.files[0].data");
}

#[test]
fn write_files_content_gets_the_data_hint() {
    let error = parse(
        "write_files",
        json!({"files": [{"path": "a", "content": "x"}]}),
    )
    .unwrap_err();
    assert_eq!(error.field, "arguments.files[0].content");
    assert_eq!(
        error.message,
        "unknown field `content` in `files[0]`; designmcp reads the file body from `data`, \
         not `content`; allowed fields: `path`, `data`, `local_path`, `encoding`, `if_match`"
    );
}

#[test]
fn role_is_trimmed_and_case_insensitive() {
    for role in [
        "viewer",
        "Commenter",
        "EDITOR",
        " editor",
        "editor  ",
        " Viewer ",
        "\teditor\n",
    ] {
        for operation in ["add_member", "update_member_role"] {
            let call = parse(operation, json!({"role": role})).unwrap();
            assert_eq!(call.arguments["role"], json!(role), "kept as sent");
        }
    }
}

#[test]
fn role_padding_over_two_characters_is_excess_whitespace() {
    let error = parse("add_member", json!({"role": "  editor "})).unwrap_err();
    assert_eq!(error.field, "arguments.role");
    assert_eq!(
        error.message,
        "`role` has excess whitespace; use one of viewer, commenter, editor"
    );
    assert!(parse("update_member_role", json!({"role": "   viewer"})).is_err());
    assert!(parse(
        "update_member_role",
        json!({"role": "\u{3000}\u{3000}viewer"})
    )
    .is_ok());
}

#[test]
fn role_must_name_a_role() {
    for role in [
        json!("owner"),
        json!(""),
        json!("edit or"),
        json!(1),
        json!(["editor"]),
    ] {
        let error = parse("add_member", json!({"role": role})).unwrap_err();
        assert_eq!(error.field, "arguments.role", "{role}");
        assert_eq!(
            error.message,
            "`role` must be one of viewer, commenter, editor"
        );
    }
}

#[test]
fn sharing_choices_are_case_insensitive_without_trimming() {
    let call = parse(
        "update_sharing",
        json!({"scope": "ORG", "link_permission": "Edit"}),
    )
    .unwrap();
    assert_eq!(call.arguments["scope"], json!("ORG"));
    assert!(parse(
        "update_sharing",
        json!({"scope": "invited", "link_permission": "view"})
    )
    .is_ok());
    assert!(parse("update_sharing", json!({"link_permission": "COMMENT"})).is_ok());
    let error = parse("update_sharing", json!({"scope": " org"})).unwrap_err();
    assert_eq!(error.field, "arguments.scope");
    assert_eq!(error.message, "`scope` must be one of invited, org");
    let error = parse("update_sharing", json!({"link_permission": "admin"})).unwrap_err();
    assert_eq!(error.field, "arguments.link_permission");
    assert_eq!(
        error.message,
        "`link_permission` must be one of view, comment, edit"
    );
}

#[test]
fn finalize_plan_scope_is_case_sensitive() {
    let plan = |scope: Value| json!({"project_id": "p1", "scope": scope});
    assert!(parse("finalize_plan", plan(json!("paths"))).is_ok());
    assert!(parse("finalize_plan", plan(json!("project"))).is_ok());
    for scope in [
        json!("Paths"),
        json!("PROJECT"),
        json!(" paths"),
        json!(true),
    ] {
        let error = parse("finalize_plan", plan(scope.clone())).unwrap_err();
        assert_eq!(error.field, "arguments.scope", "{scope}");
        assert_eq!(error.message, "`scope` must be one of paths, project");
    }
}

/// Issue 18 §7: `null` where §1.4 needs a scalar, an array or a string field is an input error
/// for every operation and key, never "absent" and never a token.
#[test]
fn i18_null_is_an_input_error_for_every_key_of_every_operation() {
    for known in crate::call::operations::static_operations() {
        let operation = known.name;
        for key in known.schema.keys {
            let error = parse(operation, json!({ key.name: null })).unwrap_err();
            assert_eq!(
                error.field,
                format!("arguments.{}", key.name),
                "{operation}"
            );
            assert!(
                error.message.contains(&format!("`{}`", key.name)),
                "{error:?}"
            );
        }
    }
    // An unknown key is refused as unknown, null or not.
    assert_eq!(
        field_of("add_member", json!({"rol": null})),
        "arguments.rol"
    );
}

#[test]
fn i18_null_project_id_is_an_error_never_no_project() {
    let error = parse("get_project", json!({"project_id": null})).unwrap_err();
    assert_eq!(error.field, "arguments.project_id");
    assert_eq!(error.message, "`project_id` must be a string, not null");
    let copy = json!({"project_id": "p1", "plan_token": "t",
                      "files": [{"src": "a", "dest": "b", "src_project_id": null}]});
    let error = parse("copy_files", copy).unwrap_err();
    assert_eq!(error.field, "arguments.files[0].src_project_id");
}

#[test]
fn i18_null_plan_token_is_an_error_never_a_token() {
    for operation in [
        "write_files",
        "delete_files",
        "copy_files",
        "create_support_js",
    ] {
        let error = parse(operation, json!({"project_id": "p1", "plan_token": null})).unwrap_err();
        assert_eq!(error.field, "arguments.plan_token", "{operation}");
        assert_eq!(
            error.message,
            "`plan_token` must be a string, boolean or number, not null"
        );
    }
}

#[test]
fn unknown_keys_get_did_you_mean_and_the_allowed_list() {
    let error = parse("read_file", json!({"Path": "a"})).unwrap_err();
    assert_eq!(error.field, "arguments.Path");
    assert_eq!(
        error.message,
        "unknown key `Path` in `read_file` arguments; did you mean `path`?; \
         allowed keys: `project_id`, `path`"
    );
    let error = parse("write_files", json!({"projectId": "p"})).unwrap_err();
    assert!(
        error.message.contains("did you mean `project_id`?"),
        "{}",
        error.message
    );
    let error = parse("write_files", json!({"file": []})).unwrap_err();
    assert!(
        error.message.contains("did you mean `files`?"),
        "{}",
        error.message
    );
    let error = parse("list_projects", json!({"limit": 5})).unwrap_err();
    assert_eq!(
        error.message,
        "unknown key `limit` in `list_projects` arguments; allowed keys: none"
    );
    let error = parse("get_project", json!({"projects": 5})).unwrap_err();
    assert!(!error.message.contains("did you mean"), "{}", error.message);
}

#[test]
fn the_reported_unknown_key_does_not_depend_on_map_order() {
    let first: Value = serde_json::from_str(r#"{"zeta": 1, "alpha": 2, "path": "a"}"#).unwrap();
    let second: Value = serde_json::from_str(r#"{"path": "a", "alpha": 2, "zeta": 1}"#).unwrap();
    assert_eq!(field_of("read_file", first), "arguments.alpha");
    assert_eq!(field_of("read_file", second), "arguments.alpha");
}

#[test]
fn unknown_keys_are_reported_before_type_errors() {
    assert_eq!(
        field_of("read_file", json!({"path": [], "zzz": 1})),
        "arguments.zzz"
    );
}

#[test]
fn role_is_trimmed_as_javascript_trims() {
    // `trim()` removes U+FEFF and not U+0085; padding is counted in UTF-16 code units.
    assert!(parse("add_member", json!({"role": "\u{FEFF}editor"})).is_ok());
    assert!(parse("add_member", json!({"role": "\u{85}editor"})).is_err());
    assert!(parse("add_member", json!({"role": "\u{FEFF}\u{FEFF}editor"})).is_ok());
    assert!(parse(
        "add_member",
        json!({"role": "\u{FEFF}\u{FEFF}\u{FEFF}editor"})
    )
    .is_err());
}
