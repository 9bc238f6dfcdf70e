//! authz::problem: what went wrong loading a schema or policy set, with file, line and policy.

use serde::Serialize;

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadProblem {
    pub file: String,
    pub line: Option<usize>,
    pub policy: Option<String>,
    pub message: String,
}

impl LoadProblem {
    pub fn in_file(file: &str, line: Option<usize>, message: String) -> Self {
        Self {
            file: file.to_string(),
            line,
            policy: None,
            message,
        }
    }

    pub fn at_policy(file: &str, line: usize, policy: &str, message: String) -> Self {
        Self {
            file: file.to_string(),
            line: Some(line),
            policy: Some(policy.to_string()),
            message,
        }
    }
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: ", self.file)?,
            None => write!(f, "{}: ", self.file)?,
        }
        if let Some(policy) = &self.policy {
            write!(f, "policy `{policy}`: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Every problem found while loading; an invalid set is never partially used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{} problem(s) loading policies: {}", problems.len(), problems.first().map(ToString::to_string).unwrap_or_default())]
pub struct LoadError {
    pub problems: Vec<LoadProblem>,
}

impl LoadError {
    pub fn single(problem: LoadProblem) -> Self {
        Self {
            problems: vec![problem],
        }
    }
}

/// 1-based line number of a byte offset.
pub fn line_of_offset(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()
        .iter()
        .take(end)
        .filter(|byte| **byte == b'\n')
        .count()
        + 1
}
