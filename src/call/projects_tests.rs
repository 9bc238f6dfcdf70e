//! Tests `ProjectsCall::parse` (§10.1): methods, field bounds, required fields and `force`.
use serde_json::{json, Value};

use super::*;

fn parse(input: Value) -> Result<ProjectsCall, CallError> {
    ProjectsCall::parse(&input)
}

fn field_of(input: Value) -> String {
    parse(input).unwrap_err().field
}

#[test]
fn methods_round_trip_and_classify() {
    let expected = [
        ("project_info", true),
        ("project_read", true),
        ("project_search", true),
        ("project_write", false),
        ("project_delete", false),
    ];
    for (method, (name, read_only)) in ProjectsMethod::ALL.into_iter().zip(expected) {
        assert_eq!(method.as_str(), name);
        assert_eq!(method.is_read_only(), read_only);
        assert_eq!(method.is_destructive(), !read_only);
        assert_eq!(ProjectsMethod::from_name(name), Some(method));
        assert_eq!(serde_json::to_value(method).unwrap(), json!(name));
        assert_eq!(
            serde_json::from_value::<ProjectsMethod>(json!(name)).unwrap(),
            method
        );
    }
}

#[test]
fn parses_project_info_with_defaults() {
    let call = parse(json!({"method": "project_info"})).unwrap();
    assert_eq!(
        call,
        ProjectsCall {
            method: ProjectsMethod::ProjectInfo,
            path: None,
            source: None,
            present_to_user: false,
            query: None,
            n: 5
        }
    );
}

#[test]
fn method_is_required_and_exact() {
    let error = parse(json!({})).unwrap_err();
    assert_eq!(error.field, "method");
    assert_eq!(
        error.message,
        "`method` is required; use one of project_info, project_read, project_search, \
         project_write, project_delete"
    );
    for method in [json!("Project_Info"), json!("read"), json!(1), json!(null)] {
        let error = parse(json!({"method": method})).unwrap_err();
        assert_eq!(error.field, "method", "{method}");
        assert!(error
            .message
            .starts_with("`method` must be one of project_info"));
    }
}

#[test]
fn input_must_be_an_object() {
    let error = parse(json!("project_info")).unwrap_err();
    assert_eq!(error.field, "input");
    assert_eq!(error.message, "the input must be an object, not a string");
}

#[test]
fn read_write_and_delete_need_a_path() {
    for method in ["project_read", "project_write", "project_delete"] {
        let error = parse(json!({"method": method, "content": "x"})).unwrap_err();
        assert_eq!(error.field, "path", "{method}");
        assert_eq!(error.message, format!("`{method}` needs `path`"));
    }
    let call = parse(json!({"method": "project_read", "path": "a.md"})).unwrap();
    assert_eq!(call.path.as_deref(), Some("a.md"));
}

#[test]
fn path_limit_is_255_utf16_code_units() {
    let read = |path: String| parse(json!({"method": "project_read", "path": path}));
    assert!(read("a".to_owned()).is_ok());
    assert!(read("a".repeat(255)).is_ok());
    // JavaScript `.length`: an emoji counts 2, so 127 fit (254) and 128 do not (256).
    assert!(read("😀".repeat(127)).is_ok(), "254 UTF-16 code units");
    assert!(read(format!("{}a", "😀".repeat(127))).is_ok(), "255 units");
    let error = read("😀".repeat(128)).unwrap_err();
    assert_eq!(
        error.message,
        "`path` is 256 UTF-16 code units long; the limit is 255"
    );
    // é is one UTF-16 unit (two UTF-8 bytes): 255 fit.
    assert!(read("é".repeat(255)).is_ok());
    let error = read("a".repeat(256)).unwrap_err();
    assert_eq!(error.field, "path");
    assert_eq!(
        error.message,
        "`path` is 256 UTF-16 code units long; the limit is 255"
    );
    assert!(read("é".repeat(256)).is_err());
    let error = read(String::new()).unwrap_err();
    assert_eq!(error.field, "path");
    assert_eq!(
        error.message,
        "`path` must be at least 1 UTF-16 code unit long"
    );
    assert_eq!(
        field_of(json!({"method": "project_read", "path": 5})),
        "path"
    );
    assert_eq!(
        field_of(json!({"method": "project_read", "path": null})),
        "path"
    );
}

#[test]
fn search_needs_a_non_empty_query() {
    let error = parse(json!({"method": "project_search"})).unwrap_err();
    assert_eq!(
        (error.field.as_str(), error.message.as_str()),
        ("query", "`project_search` needs `query`")
    );
    assert_eq!(
        field_of(json!({"method": "project_search", "query": ""})),
        "query"
    );
    let call = parse(json!({"method": "project_search", "query": "q", "n": 15})).unwrap();
    assert_eq!(call.query.as_deref(), Some("q"));
    assert_eq!(call.n, 15);
}

#[test]
fn n_is_a_whole_number_from_1_to_15() {
    let search = |n: Value| parse(json!({"method": "project_search", "query": "q", "n": n}));
    assert_eq!(search(json!(1)).unwrap().n, 1);
    assert_eq!(search(json!(15)).unwrap().n, 15);
    assert_eq!(search(json!(7.0)).unwrap().n, 7);
    for bad in [
        json!(0),
        json!(16),
        json!(2.5),
        json!("5"),
        json!(-1),
        json!(null),
        json!(256),
        json!(u64::MAX),
        json!(1e300),
        json!(-0.5),
        json!(true),
    ] {
        let error = search(bad.clone()).unwrap_err();
        assert_eq!(error.field, "n", "{bad}");
        assert_eq!(error.message, "`n` must be a whole number from 1 to 15");
    }
}

#[test]
fn write_takes_exactly_one_source() {
    let write = |extra: Value| {
        let mut input = json!({"method": "project_write", "path": "a.md"});
        input
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        parse(input)
    };
    let call = write(json!({"content": ""})).unwrap();
    assert_eq!(call.source, Some(WriteSource::Content(String::new())));
    let call = write(json!({"local_path": "/tmp/a.md", "present_to_user": true})).unwrap();
    assert_eq!(
        call.source,
        Some(WriteSource::LocalPath("/tmp/a.md".to_owned()))
    );
    assert!(call.present_to_user);
    let error = write(json!({"content": "x", "local_path": "y"})).unwrap_err();
    assert_eq!(error.field, "content");
    assert_eq!(
        error.message,
        "`project_write` takes exactly one of `content` or `local_path`, not both"
    );
    let error = write(json!({})).unwrap_err();
    assert_eq!(
        error.message,
        "`project_write` needs exactly one of `content` or `local_path`"
    );
    assert_eq!(
        write(json!({"local_path": ""})).unwrap_err().field,
        "local_path"
    );
    assert_eq!(write(json!({"content": 1})).unwrap_err().field, "content");
}

#[test]
fn fields_irrelevant_to_the_method_are_accepted() {
    let call = parse(json!({"method": "project_info", "path": "a", "query": "q",
        "content": "c", "local_path": "l", "n": 3}))
    .unwrap();
    assert_eq!(call.path.as_deref(), Some("a"));
    assert_eq!(call.query.as_deref(), Some("q"));
    assert_eq!(call.source, None);
    assert_eq!(call.n, 3);
    let call = parse(
        json!({"method": "project_delete", "path": "a", "content": "c",
        "local_path": "l"}),
    )
    .unwrap();
    assert_eq!(call.source, None);
}

#[test]
fn present_to_user_must_be_a_boolean() {
    let error = parse(json!({"method": "project_info", "present_to_user": "yes"})).unwrap_err();
    assert_eq!(error.field, "present_to_user");
    assert_eq!(
        error.message,
        "`present_to_user` must be a boolean, not a string"
    );
}

#[test]
fn boolean_force_is_dropped_and_anything_else_refused() {
    for force in [true, false] {
        let call = parse(json!({"method": "project_delete", "path": "a", "force": force})).unwrap();
        assert_eq!(call.method, ProjectsMethod::ProjectDelete);
    }
    for force in [json!("true"), json!(1), json!(null), json!({})] {
        let error = parse(json!({"method": "project_info", "force": force})).unwrap_err();
        assert_eq!(error.field, "force", "{force}");
    }
}

#[test]
fn unknown_keys_are_refused_with_hints() {
    let error = parse(json!({"method": "project_read", "path": "a", "Path": "b"})).unwrap_err();
    assert_eq!(error.field, "Path");
    assert_eq!(
        error.message,
        "unknown key `Path` in the Projects input; did you mean `path`?; allowed keys: \
         `method`, `path`, `content`, `local_path`, `present_to_user`, `query`, `n`"
    );
    let error = parse(json!({"method": "project_search", "query": "q", "count": 3})).unwrap_err();
    assert_eq!(error.field, "count");
    let error = parse(json!({"method": "project_read", "localpath": "x"})).unwrap_err();
    assert!(
        error.message.contains("did you mean `local_path`?"),
        "{}",
        error.message
    );
    let error = parse(json!({"method": "project_info", "project_id": "p"})).unwrap_err();
    assert_eq!(error.field, "project_id");
}

#[test]
fn projects_call_serializes() {
    let call = parse(json!({"method": "project_write", "path": "a", "content": "c"})).unwrap();
    let value = serde_json::to_value(&call).unwrap();
    assert_eq!(value["method"], json!("project_write"));
    assert_eq!(value["source"], json!({"Content": "c"}));
}

/// Issue 18 §7: `null` is never "absent" in the Projects input either (zod's optional fields
/// accept a missing key, not `null`), whatever the method.
#[test]
fn i18_null_is_an_input_error_for_every_projects_field() {
    for method in ProjectsMethod::ALL {
        for &key in projects::INPUT_KEYS.iter().chain([&projects::LEGACY_FORCE]) {
            if key == "method" {
                continue;
            }
            let input = json!({"method": method.as_str(), "path": "a.md", "content": "x",
                               "query": "q", key: null});
            assert_eq!(field_of(input), key, "{} {key}", method.as_str());
        }
    }
    assert_eq!(field_of(json!({"method": null})), "method");
}
