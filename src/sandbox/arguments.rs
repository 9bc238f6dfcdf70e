//! sandbox::arguments: reading `tools/call` arguments into typed values, with errors that name
//! the field, and the target paths of each writing tool. Both the enforcement and the
//! operations read targets through here, so they can never disagree about what a call touches.

use serde_json::{Map, Value};

/// The default file of `create_support_js`.
pub const DEFAULT_SUPPORT_PATH: &str = "support.js";

/// A tool's arguments (always an object; a missing `arguments` is an empty one).
#[derive(Debug, Clone, Copy)]
pub struct Arguments<'a>(pub &'a Map<String, Value>);

impl<'a> Arguments<'a> {
    pub fn optional_str(&self, field: &str) -> Result<Option<&'a str>, String> {
        match self.0.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.as_str())),
            Some(_) => Err(format!("`{field}` must be a string")),
        }
    }

    pub fn required_str(&self, field: &str) -> Result<&'a str, String> {
        match self.optional_str(field)? {
            Some(text) if !text.trim().is_empty() => Ok(text),
            _ => Err(format!("missing `{field}`")),
        }
    }

    /// A list of strings; missing means empty.
    pub fn string_list(&self, field: &str) -> Result<Vec<String>, String> {
        let Some(value) = self.0.get(field) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = value else {
            return Err(format!("`{field}` must be an array of strings"));
        };
        items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.clone()),
                _ => Err(format!("`{field}` must be an array of strings")),
            })
            .collect()
    }

    /// A list of objects; missing means empty.
    pub fn object_list(&self, field: &str) -> Result<Vec<Arguments<'a>>, String> {
        let Some(value) = self.0.get(field) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = value else {
            return Err(format!("`{field}` must be an array of objects"));
        };
        items
            .iter()
            .map(|item| match item {
                Value::Object(object) => Ok(Arguments(object)),
                _ => Err(format!("`{field}` must be an array of objects")),
            })
            .collect()
    }

    /// The plan token, where an empty string counts as none (a tokenless call).
    pub fn plan_token(&self) -> Result<Option<&'a str>, String> {
        Ok(self
            .optional_str("plan_token")?
            .filter(|token| !token.is_empty()))
    }
}

/// The stored form of a path: no leading `./` or `/`.
pub fn normalize_path(path: &str) -> String {
    let mut rest = path.trim();
    loop {
        if let Some(stripped) = rest.strip_prefix("./") {
            rest = stripped;
        } else if let Some(stripped) = rest.strip_prefix('/') {
            rest = stripped;
        } else {
            return rest.to_owned();
        }
    }
}

fn required_path(item: &Arguments<'_>, field: &str, list: &str) -> Result<String, String> {
    let path = item
        .required_str(field)
        .map_err(|_| format!("every `{list}` entry needs a string `{field}`"))?;
    let normalized = normalize_path(path);
    if normalized.is_empty() {
        return Err(format!("empty `{field}` in `{list}`"));
    }
    Ok(normalized)
}

/// What a plan-gated tool writes or deletes, normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Targets {
    Writes(Vec<String>),
    Deletes(Vec<String>),
}

/// The targets of `write_files`, `create_support_js`, `copy_files` (destinations) and
/// `delete_files` (`paths` and `files`); `None` for any other tool.
pub fn targets(tool: &str, arguments: Arguments<'_>) -> Option<Result<Targets, String>> {
    let result = match tool {
        "write_files" => arguments.object_list("files").and_then(|files| {
            let paths = files
                .iter()
                .map(|file| required_path(file, "path", "files"));
            paths.collect::<Result<_, _>>().map(Targets::Writes)
        }),
        "copy_files" => arguments.object_list("files").and_then(|files| {
            let paths = files
                .iter()
                .map(|file| required_path(file, "dest", "files"));
            paths.collect::<Result<_, _>>().map(Targets::Writes)
        }),
        "create_support_js" => arguments.optional_str("path").map(|path| {
            let chosen = path.map_or(DEFAULT_SUPPORT_PATH.to_owned(), normalize_path);
            Targets::Writes(vec![chosen])
        }),
        "delete_files" => delete_targets(arguments).map(Targets::Deletes),
        _ => return None,
    };
    Some(result)
}

fn delete_targets(arguments: Arguments<'_>) -> Result<Vec<String>, String> {
    let mut paths: Vec<String> = arguments
        .string_list("paths")?
        .iter()
        .map(|path| normalize_path(path))
        .collect();
    for file in arguments.object_list("files")? {
        paths.push(required_path(&file, "path", "files")?);
    }
    if paths.iter().any(String::is_empty) {
        return Err("empty path in `paths`".to_owned());
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn fields_are_typed_and_named_in_errors() {
        let map = object(json!({"a": "x", "n": 3, "list": ["p", 1], "blank": " "}));
        let arguments = Arguments(&map);
        assert_eq!(arguments.required_str("a").unwrap(), "x");
        assert_eq!(
            arguments.required_str("n").unwrap_err(),
            "`n` must be a string"
        );
        assert_eq!(
            arguments.required_str("blank").unwrap_err(),
            "missing `blank`"
        );
        assert_eq!(arguments.required_str("zz").unwrap_err(), "missing `zz`");
        assert!(arguments.string_list("list").is_err());
        assert!(arguments.string_list("absent").unwrap().is_empty());
    }

    #[test]
    fn targets_cover_every_plan_gated_tool() {
        let write = object(json!({"files": [{"path": "./a.html"}, {"path": "/b.css"}]}));
        assert_eq!(
            targets("write_files", Arguments(&write)).unwrap().unwrap(),
            Targets::Writes(vec!["a.html".into(), "b.css".into()])
        );
        let copy = object(json!({"files": [{"src": "a", "dest": "c"}]}));
        assert_eq!(
            targets("copy_files", Arguments(&copy)).unwrap().unwrap(),
            Targets::Writes(vec!["c".into()])
        );
        let support = object(json!({}));
        assert_eq!(
            targets("create_support_js", Arguments(&support))
                .unwrap()
                .unwrap(),
            Targets::Writes(vec!["support.js".into()])
        );
        let delete = object(json!({"paths": ["x"], "files": [{"path": "y"}]}));
        assert_eq!(
            targets("delete_files", Arguments(&delete))
                .unwrap()
                .unwrap(),
            Targets::Deletes(vec!["x".into(), "y".into()])
        );
        assert!(targets("read_file", Arguments(&support)).is_none());
        let bad = object(json!({"files": [{"dest": "c"}]}));
        assert!(targets("write_files", Arguments(&bad)).unwrap().is_err());
        let empty = object(json!({"paths": ["./"]}));
        assert!(targets("delete_files", Arguments(&empty)).unwrap().is_err());
    }
}
