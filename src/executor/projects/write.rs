//! Owns `project_write` and `project_delete` (client-facts §10.3): write path resolution
//! (`lTf`), the knowledge budget (`cTf`), replace vs create on each route, and doc-only delete;
//! it must not decide anything.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::api::{Action, Upstream};
use super::detail::{Entry, ProjectDetail};
use super::error::ProjectsError;
use super::local_file::read_local_file;
use super::ProjectsRoute;
use crate::call::WriteSource;
use crate::facts::observations::LocalFileStat;

/// Where a write lands: strip one leading `./`; an existing doc name is kept (replace in place);
/// otherwise a name with `/` is used as is and a bare name goes under `claude/`.
pub(crate) fn resolve_write_path(path: &str, detail: &ProjectDetail) -> String {
    let stripped = path.strip_prefix("./").unwrap_or(path);
    if detail.doc_named(stripped).is_some() || stripped.contains('/') {
        stripped.to_owned()
    } else {
        format!("claude/{stripped}")
    }
}

#[derive(Debug, Deserialize)]
struct UuidAnswer {
    uuid: String,
}

async fn send_for_uuid(
    upstream: &Upstream<'_>,
    action: Action<'_>,
) -> Result<String, ProjectsError> {
    let body = upstream.send(&action).await?;
    let answer: UuidAnswer =
        serde_json::from_value(body).map_err(|error| ProjectsError::InvalidResponse {
            action: action.name(),
            message: error.to_string(),
        })?;
    Ok(answer.uuid)
}

/// The body and, for `local_path`, its path relative to the root; the file is read off the
/// async threads.
async fn load_source(
    upstream: &Upstream<'_>,
    source: &WriteSource,
    decided: Option<LocalFileStat>,
) -> Result<(String, Option<PathBuf>), ProjectsError> {
    match source {
        WriteSource::Content(content) => Ok((content.clone(), None)),
        WriteSource::LocalPath(given) => {
            let rules = upstream.config.local_path.clone();
            let given_owned = given.clone();
            let text =
                tokio::task::spawn_blocking(move || read_local_file(&rules, &given_owned, decided))
                    .await
                    .map_err(|error| ProjectsError::LocalFile {
                        message: format!("local_path `{given}` could not be read: {error}"),
                        code: None,
                    })??;
            Ok((text.content, Some(text.relative)))
        }
    }
}

pub(crate) async fn project_write(
    upstream: &Upstream<'_>,
    path: &str,
    source: &WriteSource,
    present_to_user: bool,
    decided: Option<LocalFileStat>,
) -> Result<Value, ProjectsError> {
    let (content, local_path) = load_source(upstream, source, decided).await?;
    let detail = ProjectDetail::parse(upstream.send(&Action::Detail).await?)?;
    let target = resolve_write_path(path, &detail);
    // The knowledge budget is a policy (`projects.knowledge-budget`), decided on the detail
    // observed for the decision and the size of the very file that is read here; the executor
    // does not decide it again.
    let existing = detail.doc_named(&target).map(|doc| doc.uuid.clone());
    let doc_uuid = match &existing {
        Some(doc_uuid) => replace(upstream, doc_uuid, &target, &content).await?,
        None => {
            let create = Action::CreateDoc {
                file_name: &target,
                content: &content,
            };
            send_for_uuid(upstream, create).await?
        }
    };
    let mut result = Map::new();
    result.insert("path".to_owned(), json!(target));
    result.insert("doc_uuid".to_owned(), json!(doc_uuid));
    result.insert("replaced".to_owned(), json!(existing.is_some()));
    result.insert("present_to_user".to_owned(), json!(present_to_user));
    if let Some(local_path) = local_path {
        result.insert(
            "local_path".to_owned(),
            json!(local_path.display().to_string()),
        );
    }
    Ok(Value::Object(result))
}

/// Org route: PATCH in place (same uuid). Session route: it has no update op, so delete then
/// create (a new uuid).
async fn replace(
    upstream: &Upstream<'_>,
    doc_uuid: &str,
    file_name: &str,
    content: &str,
) -> Result<String, ProjectsError> {
    match upstream.config.route {
        ProjectsRoute::Org => {
            send_for_uuid(upstream, Action::ReplaceDoc { doc_uuid, content }).await
        }
        ProjectsRoute::Session => {
            upstream.send(&Action::DeleteDoc { doc_uuid }).await?;
            send_for_uuid(upstream, Action::CreateDoc { file_name, content }).await
        }
    }
}

/// Only text docs can be deleted; an upload or an unknown path is refused.
pub(crate) async fn project_delete(
    upstream: &Upstream<'_>,
    path: &str,
) -> Result<Value, ProjectsError> {
    let detail = ProjectDetail::parse(upstream.send(&Action::Detail).await?)?;
    match detail.entry(path) {
        Some(Entry::Doc(doc)) => {
            upstream
                .send(&Action::DeleteDoc {
                    doc_uuid: &doc.uuid,
                })
                .await?;
            Ok(json!({"path": path, "deleted": true}))
        }
        Some(Entry::Upload(_)) => Err(ProjectsError::UploadNotDeletable {
            path: path.to_owned(),
        }),
        None => Err(detail.not_found(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(knowledge_size: i64, max_knowledge_size: i64) -> ProjectDetail {
        ProjectDetail::parse(json!({
            "documents": [{"uuid": "d1", "file_name": "notes.md"},
                          {"uuid": "d2", "file_name": "team/plan.md"}],
            "files": [{"file_uuid": "f1", "file_name": "logo.png", "file_kind": "image"}],
            "knowledge_stats": {"knowledge_size": knowledge_size,
                                "max_knowledge_size": max_knowledge_size},
        }))
        .unwrap()
    }

    #[test]
    fn write_paths_resolve_like_the_reference() {
        let detail = detail(0, 10);
        assert_eq!(resolve_write_path("notes.md", &detail), "notes.md");
        assert_eq!(resolve_write_path("./notes.md", &detail), "notes.md");
        assert_eq!(resolve_write_path("new.md", &detail), "claude/new.md");
        assert_eq!(resolve_write_path("./new.md", &detail), "claude/new.md");
        assert_eq!(resolve_write_path("a/b.md", &detail), "a/b.md");
        assert_eq!(
            resolve_write_path("././x.md", &detail),
            "./x.md",
            "one ./ only"
        );
        assert_eq!(
            resolve_write_path("logo.png", &detail),
            "claude/logo.png",
            "uploads are not part of the existence check"
        );
    }
}
