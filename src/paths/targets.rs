//! Enumeration of the paths a ClaudeDesign call names (`y0f`). It lists raw paths in
//! argument order; it must not normalize, count-limit or judge them.

use serde_json::{Map, Value};

/// Which approved-plan set a call's targets must belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetSet {
    Writes,
    Deletes,
}

/// What an operation's arguments say about its targets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Enumeration<'a> {
    /// The operation has no enumerator (this includes `copy_files`).
    NotPlanGated,
    /// The arguments do not have the shape the enumerator needs.
    Unenumerable,
    /// Raw paths in argument order, borrowed from the arguments; may be empty and may exceed
    /// `MAX_TARGETS`.
    Targets { set: TargetSet, paths: Vec<&'a str> },
}

/// Path used by `create_support_js` when `path` is missing or empty.
const DEFAULT_SUPPORT_PATH: &str = "support.js";

/// Lists the targets of `operation` from its `arguments`.
///
/// A key counts as supplied whenever it is present, even with a `null` value, so
/// `delete_files` with `paths` and `files: null` is unenumerable, and so is
/// `create_support_js` with `path: null`: an odd shape must never reach a plan match.
pub fn enumerate_targets<'a>(
    operation: &str,
    arguments: &'a Map<String, Value>,
) -> Enumeration<'a> {
    let (set, paths) = match operation {
        "write_files" => (TargetSet::Writes, file_paths(arguments.get("files"))),
        "delete_files" => (TargetSet::Deletes, deleted_paths(arguments)),
        "create_support_js" => (TargetSet::Writes, support_path(arguments.get("path"))),
        _ => return Enumeration::NotPlanGated,
    };
    match paths {
        Some(paths) => Enumeration::Targets { set, paths },
        None => Enumeration::Unenumerable,
    }
}

/// `files[].path`: `files` must be an array whose entries are objects with a string `path`.
fn file_paths(files: Option<&Value>) -> Option<Vec<&str>> {
    files?
        .as_array()?
        .iter()
        .map(|file| object_field(file, "path")?.as_str())
        .collect()
}

/// `object.<name>` found by a scan, not a hashed lookup: validation has already refused any
/// key outside the operation's few element fields.
fn object_field<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object
        .as_object()?
        .iter()
        .find_map(|(key, value)| (key == name).then_some(value))
}

/// `paths[]` of strings, or else `files[].path`; supplying both is unenumerable.
fn deleted_paths(arguments: &Map<String, Value>) -> Option<Vec<&str>> {
    match (arguments.get("paths"), arguments.get("files")) {
        (Some(_), Some(_)) => None,
        (Some(paths), None) => paths.as_array()?.iter().map(Value::as_str).collect(),
        (None, files) => file_paths(files),
    }
}

/// `path`, defaulting to `support.js` when missing or empty; any non-string is unenumerable.
fn support_path(path: Option<&Value>) -> Option<Vec<&str>> {
    let path = match path {
        None => DEFAULT_SUPPORT_PATH,
        Some(value) => match value.as_str()? {
            "" => DEFAULT_SUPPORT_PATH,
            text => text,
        },
    };
    Some(vec![path])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An enumeration with owned paths, to compare after the arguments are gone.
    #[derive(Debug, PartialEq)]
    enum Listed {
        NotPlanGated,
        Unenumerable,
        Targets { set: TargetSet, paths: Vec<String> },
    }

    fn enumerate(operation: &str, arguments: Value) -> Listed {
        match enumerate_targets(operation, arguments.as_object().unwrap()) {
            Enumeration::NotPlanGated => Listed::NotPlanGated,
            Enumeration::Unenumerable => Listed::Unenumerable,
            Enumeration::Targets { set, paths } => targets(set, &paths),
        }
    }

    fn targets(set: TargetSet, paths: &[&str]) -> Listed {
        let paths = paths.iter().map(|path| (*path).to_owned()).collect();
        Listed::Targets { set, paths }
    }

    #[test]
    fn write_files_lists_file_paths_in_order() {
        let arguments = json!({"files": [{"path": "b.html", "content": ""}, {"path": "a\\x.js"}]});
        assert_eq!(
            enumerate("write_files", arguments),
            targets(TargetSet::Writes, &["b.html", "a\\x.js"])
        );
        assert_eq!(
            enumerate("write_files", json!({"files": []})),
            targets(TargetSet::Writes, &[])
        );
    }

    #[test]
    fn write_files_with_a_bad_shape_is_unenumerable() {
        for arguments in [
            json!({}),
            json!({"files": null}),
            json!({"files": {"path": "a"}}),
            json!({"files": [{"path": "a"}, {"path": 3}]}),
            json!({"files": [{"name": "a"}]}),
            json!({"files": ["a"]}),
            json!({"files": [null]}),
            json!({"paths": ["a"]}),
        ] {
            assert_eq!(
                enumerate("write_files", arguments.clone()),
                Listed::Unenumerable,
                "{arguments}"
            );
        }
    }

    #[test]
    fn delete_files_takes_paths_or_files_but_not_both() {
        let deletes = |paths: &[&str]| targets(TargetSet::Deletes, paths);
        assert_eq!(
            enumerate("delete_files", json!({"paths": ["a", "b"]})),
            deletes(&["a", "b"])
        );
        assert_eq!(
            enumerate("delete_files", json!({"files": [{"path": "c"}]})),
            deletes(&["c"])
        );
        assert_eq!(
            enumerate("delete_files", json!({"paths": []})),
            deletes(&[])
        );
        for arguments in [
            json!({"paths": ["a"], "files": [{"path": "b"}]}),
            json!({"paths": [], "files": []}),
            json!({"paths": ["a"], "files": null}),
            json!({"paths": ["a", 1]}),
            json!({"paths": "a"}),
            json!({"files": [{"path": null}]}),
            json!({}),
        ] {
            assert_eq!(
                enumerate("delete_files", arguments.clone()),
                Listed::Unenumerable,
                "{arguments}"
            );
        }
    }

    #[test]
    fn create_support_js_defaults_its_path() {
        let writes = |paths: &[&str]| targets(TargetSet::Writes, paths);
        assert_eq!(
            enumerate("create_support_js", json!({})),
            writes(&["support.js"])
        );
        assert_eq!(
            enumerate("create_support_js", json!({"path": ""})),
            writes(&["support.js"])
        );
        assert_eq!(
            enumerate("create_support_js", json!({"path": "lib/s.js"})),
            writes(&["lib/s.js"])
        );
        assert_eq!(
            enumerate("create_support_js", json!({"path": " "})),
            writes(&[" "])
        );
        for path in [json!(null), json!(7), json!(["a"]), json!({"path": "a"})] {
            let arguments = json!({ "path": path });
            assert_eq!(
                enumerate("create_support_js", arguments),
                Listed::Unenumerable,
                "{path}"
            );
        }
    }

    #[test]
    fn other_operations_are_not_plan_gated() {
        let arguments = json!({"files": [{"path": "a"}], "paths": ["b"]});
        for operation in [
            "copy_files",
            "read_file",
            "list",
            "finalize_plan",
            "",
            "Write_Files",
        ] {
            assert_eq!(
                enumerate(operation, arguments.clone()),
                Listed::NotPlanGated,
                "{operation}"
            );
        }
    }

    #[test]
    fn more_than_the_target_limit_is_still_listed() {
        let files: Vec<Value> = (0..300)
            .map(|index| json!({"path": format!("f{index}")}))
            .collect();
        let Listed::Targets { paths, .. } = enumerate("write_files", json!({ "files": files }))
        else {
            panic!("expected targets");
        };
        assert_eq!(paths.len(), 300);
        assert_eq!(paths[299], "f299");
    }

    #[test]
    fn target_set_serializes_in_snake_case() {
        assert_eq!(
            serde_json::to_string(&TargetSet::Deletes).unwrap(),
            "\"deletes\""
        );
    }
}
