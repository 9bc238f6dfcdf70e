//! Owns the project detail as the client reads it (client-facts §10.2), the `project_info`
//! result built from it, and name lookups with the not-found message; it must not send requests.

use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ProjectsError;

/// How many names the not-found message lists.
const NOT_FOUND_NAMES: usize = 30;

/// The fields of the detail answer that the client reads; anything else is ignored, and a
/// missing list reads as empty.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ProjectDetail {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) description: Option<String>,
    #[serde(default)]
    pub(crate) prompt_template: Option<String>,
    #[serde(default)]
    pub(crate) documents: Vec<DetailDoc>,
    #[serde(default)]
    pub(crate) files: Vec<DetailFile>,
    #[serde(default)]
    pub(crate) sync_sources: Vec<SyncSource>,
    #[serde(default)]
    pub(crate) knowledge_stats: Option<KnowledgeStats>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DetailDoc {
    pub(crate) uuid: String,
    pub(crate) file_name: String,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct DetailFile {
    pub(crate) file_uuid: String,
    pub(crate) file_name: String,
    #[serde(default)]
    pub(crate) file_kind: Option<String>,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct SyncSource {
    #[serde(default, rename = "type")]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) config: Option<Value>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct KnowledgeStats {
    #[serde(default)]
    pub(crate) knowledge_size: i64,
    #[serde(default)]
    pub(crate) max_knowledge_size: i64,
}

/// What a path names in the project.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Entry<'a> {
    Doc(&'a DetailDoc),
    Upload(&'a DetailFile),
}

impl ProjectDetail {
    pub(crate) fn parse(body: Value) -> Result<ProjectDetail, ProjectsError> {
        serde_json::from_value(body).map_err(|error| ProjectsError::InvalidResponse {
            action: "detail",
            message: error.to_string(),
        })
    }

    /// The `project_info` result.
    pub(crate) fn info(&self) -> Value {
        let docs: Vec<Value> = self
            .documents
            .iter()
            .map(|doc| json!({"path": doc.file_name, "created_at": doc.created_at}))
            .collect();
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|file| {
                json!({"path": file.file_name, "file_kind": file.file_kind,
                    "created_at": file.created_at})
            })
            .collect();
        let sync_sources: Vec<Value> = self
            .sync_sources
            .iter()
            .map(|source| json!({"type": source.kind, "config": source.config}))
            .collect();
        let knowledge = self.knowledge_stats.map(|stats| {
            json!({"knowledge_size": stats.knowledge_size,
                "max_knowledge_size": stats.max_knowledge_size})
        });
        json!({
            "name": self.name,
            "description": self.description,
            "instructions": self.prompt_template,
            "docs": docs,
            "files": files,
            "sync_sources": sync_sources,
            "knowledge": knowledge,
        })
    }

    pub(crate) fn doc_named(&self, name: &str) -> Option<&DetailDoc> {
        self.documents.iter().find(|doc| doc.file_name == name)
    }

    /// An exact `file_name` match among docs first, then among uploads.
    pub(crate) fn entry(&self, path: &str) -> Option<Entry<'_>> {
        self.doc_named(path).map(Entry::Doc).or_else(|| {
            self.files
                .iter()
                .find(|file| file.file_name == path)
                .map(Entry::Upload)
        })
    }

    pub(crate) fn doc_names(&self) -> Vec<String> {
        self.documents
            .iter()
            .map(|doc| doc.file_name.clone())
            .collect()
    }

    /// The reference's not-found error, listing up to 30 doc and upload names.
    pub(crate) fn not_found(&self, path: &str) -> ProjectsError {
        let names: Vec<&str> = self
            .documents
            .iter()
            .map(|doc| doc.file_name.as_str())
            .chain(self.files.iter().map(|file| file.file_name.as_str()))
            .collect();
        let listing = if names.is_empty() {
            "The project has no docs or files.".to_owned()
        } else {
            let shown: Vec<&str> = names.iter().copied().take(NOT_FOUND_NAMES).collect();
            let hidden = names.len().saturating_sub(NOT_FOUND_NAMES);
            let more = if hidden > 0 {
                format!(", … and {hidden} more")
            } else {
                String::new()
            };
            format!("Available: {}{more}", shown.join(", "))
        };
        ProjectsError::NotFound {
            path: path.to_owned(),
            message: format!("No doc or file at \"{path}\". {listing}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail_with_docs(count: usize) -> ProjectDetail {
        let documents = (0..count)
            .map(|index| json!({"uuid": format!("u{index}"), "file_name": format!("d{index}.md")}))
            .collect::<Vec<_>>();
        ProjectDetail::parse(json!({"documents": documents})).unwrap()
    }

    #[test]
    fn not_found_lists_thirty_names_then_counts_the_rest() {
        let message = detail_with_docs(30).not_found("x").to_string();
        assert!(message.starts_with("No doc or file at \"x\". Available: d0.md, d1.md"));
        assert!(message.ends_with("d29.md"));
        let message = detail_with_docs(31).not_found("x").to_string();
        assert!(message.ends_with("d29.md, … and 1 more"), "{message}");
        assert!(!message.contains("d30.md"));
    }

    #[test]
    fn not_found_in_an_empty_project() {
        let message = ProjectDetail::default().not_found("a/b").to_string();
        assert_eq!(
            message,
            "No doc or file at \"a/b\". The project has no docs or files."
        );
    }

    #[test]
    fn docs_win_over_uploads_of_the_same_name() {
        let detail = ProjectDetail::parse(json!({
            "documents": [{"uuid": "d", "file_name": "same"}],
            "files": [{"file_uuid": "f", "file_name": "same", "file_kind": "image"}],
        }))
        .unwrap();
        assert!(matches!(detail.entry("same"), Some(Entry::Doc(doc)) if doc.uuid == "d"));
        assert!(detail.entry("Same").is_none(), "matching is exact");
    }

    #[test]
    fn info_maps_the_reference_fields() {
        let detail = ProjectDetail::parse(json!({
            "name": "N", "prompt_template": "P", "extra": true,
            "documents": [{"uuid": "d", "file_name": "a.md", "created_at": null}],
            "sync_sources": [{"type": "github", "config": {"r": 1}}],
            "knowledge_stats": {"knowledge_size": 3, "max_knowledge_size": 9},
        }))
        .unwrap();
        let info = detail.info();
        assert_eq!(info["instructions"], "P");
        assert_eq!(info["docs"][0], json!({"path": "a.md", "created_at": null}));
        assert_eq!(info["sync_sources"][0]["type"], "github");
        assert_eq!(info["knowledge"]["max_knowledge_size"], 9);
    }
}
