//! Owns [`ProjectsCall`]: the validated `Projects` tool input (§10.1); it must not decide
//! permissions, read `local_path` or touch the project. The rule of each field is `fields`'s.

mod fields;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{json_type_name, CallError};
use fields::{
    check_keys, optional_flag, optional_text, parse_count, parse_method, require_method_fields,
    write_source, PATH_MAX_CHARS, PATH_MIN_CHARS,
};
#[cfg(test)]
pub(crate) use fields::{INPUT_KEYS, LEGACY_FORCE};

/// The five Projects methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProjectsMethod {
    ProjectInfo,
    ProjectRead,
    ProjectSearch,
    ProjectWrite,
    ProjectDelete,
}

impl ProjectsMethod {
    /// Every method, in documentation order.
    pub const ALL: [ProjectsMethod; 5] = [
        ProjectsMethod::ProjectInfo,
        ProjectsMethod::ProjectRead,
        ProjectsMethod::ProjectSearch,
        ProjectsMethod::ProjectWrite,
        ProjectsMethod::ProjectDelete,
    ];

    /// The wire name, e.g. `project_read`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectsMethod::ProjectInfo => "project_info",
            ProjectsMethod::ProjectRead => "project_read",
            ProjectsMethod::ProjectSearch => "project_search",
            ProjectsMethod::ProjectWrite => "project_write",
            ProjectsMethod::ProjectDelete => "project_delete",
        }
    }

    /// project_info, project_read and project_search.
    pub fn is_read_only(self) -> bool {
        matches!(
            self,
            ProjectsMethod::ProjectInfo
                | ProjectsMethod::ProjectRead
                | ProjectsMethod::ProjectSearch
        )
    }

    /// Whether the method's input names a `path` (read, write, delete); info and search name
    /// none (search names a `query`).
    pub fn names_path(self) -> bool {
        match self {
            ProjectsMethod::ProjectRead
            | ProjectsMethod::ProjectWrite
            | ProjectsMethod::ProjectDelete => true,
            ProjectsMethod::ProjectInfo | ProjectsMethod::ProjectSearch => false,
        }
    }

    /// project_write and project_delete.
    pub fn is_destructive(self) -> bool {
        !self.is_read_only()
    }

    /// The method with wire name `name` (exact, case-sensitive like the zod enum).
    pub fn from_name(name: &str) -> Option<ProjectsMethod> {
        ProjectsMethod::ALL
            .into_iter()
            .find(|method| method.as_str() == name)
    }
}

/// Where a `project_write` takes the file body from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteSource {
    Content(String),
    LocalPath(String),
}

/// A `Projects` call that passed local validation.
///
/// `path` and `query` are kept whenever given, even for methods that ignore them; `source` is
/// only set for `project_write` (other methods may carry `content` or `local_path`, which are
/// type-checked and then ignored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectsCall {
    pub method: ProjectsMethod,
    pub path: Option<String>,
    pub source: Option<WriteSource>,
    pub present_to_user: bool,
    pub query: Option<String>,
    pub n: u8,
}

impl ProjectsCall {
    /// Validates the raw `Projects` input (§10.1).
    pub fn parse(input: &Value) -> Result<ProjectsCall, CallError> {
        let Some(object) = input.as_object() else {
            return Err(CallError::new(
                "input",
                format!("the input must be an object, not {}", json_type_name(input)),
            ));
        };
        check_keys(object)?;
        let method = parse_method(object.get("method"))?;
        let path = optional_text(object, "path", PATH_MIN_CHARS, Some(PATH_MAX_CHARS))?;
        let content = optional_text(object, "content", 0, None)?;
        let local_path = optional_text(object, "local_path", 1, None)?;
        let present_to_user = optional_flag(object, "present_to_user")?;
        let query = optional_text(object, "query", 1, None)?;
        let n = parse_count(object.get("n"))?;
        require_method_fields(method, path.is_some(), query.is_some())?;
        let source = match method {
            ProjectsMethod::ProjectWrite => Some(write_source(content, local_path)?),
            _ => None,
        };
        Ok(ProjectsCall {
            method,
            path,
            source,
            present_to_user,
            query,
            n,
        })
    }
}
