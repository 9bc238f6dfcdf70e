//! Owns `project_read` and `project_search` (client-facts §10.3): doc / extracted text / raw
//! download, the inline limit and spill file, the raw-download checks with one re-fetch, and the
//! search 403 fallback; it must not decide anything.

use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::api::{Action, Upstream};
use super::detail::{DetailFile, Entry, ProjectDetail};
use super::error::ProjectsError;
use super::save::{doc_file_name, looks_like_uuid, save, upload_file_name};

/// Text up to 256 KiB comes back inline; larger text is spilled to a file.
pub(crate) const INLINE_TEXT_MAX_BYTES: usize = 262_144;
/// Raw uploads above 20 MiB are not downloaded in session.
pub(crate) const RAW_DOWNLOAD_MAX_BYTES: u64 = 20_971_520;

#[derive(Debug, Deserialize)]
struct TextAnswer {
    #[serde(default)]
    file_kind: Option<String>,
    content: String,
    #[serde(default)]
    created_at: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawAnswer {
    uuid: String,
    #[serde(default)]
    file_name: Option<String>,
    #[serde(default)]
    file_kind: Option<String>,
    file_size_bytes: u64,
    content_base64: String,
    #[serde(default)]
    created_at: Option<String>,
}

fn parse<T: for<'de> Deserialize<'de>>(
    action: &Action<'_>,
    body: Value,
) -> Result<T, ProjectsError> {
    serde_json::from_value(body).map_err(|error| ProjectsError::InvalidResponse {
        action: action.name(),
        message: error.to_string(),
    })
}

pub(crate) async fn project_read(
    upstream: &Upstream<'_>,
    path: &str,
) -> Result<Value, ProjectsError> {
    let detail = ProjectDetail::parse(upstream.send(&Action::Detail).await?)?;
    match detail.entry(path) {
        Some(Entry::Doc(doc)) => {
            let action = Action::ReadDoc {
                doc_uuid: &doc.uuid,
            };
            let answer: TextAnswer = parse(&action, upstream.send(&action).await?)?;
            text_result(upstream, path, &doc.uuid, None, answer).await
        }
        Some(Entry::Upload(file)) if file.file_kind.as_deref() == Some("document") => {
            let action = Action::ReadFileText {
                file_uuid: &file.file_uuid,
            };
            let answer: TextAnswer = parse(&action, upstream.send(&action).await?)?;
            if answer.file_kind.as_deref() == Some("document") {
                let kind = answer.file_kind.clone();
                return text_result(upstream, path, &file.file_uuid, kind, answer).await;
            }
            raw_result(upstream, path, file).await
        }
        Some(Entry::Upload(file)) => raw_result(upstream, path, file).await,
        None => Err(detail.not_found(path)),
    }
}

/// Inline up to [`INLINE_TEXT_MAX_BYTES`], else a 0600 spill file named after the uuid.
async fn text_result(
    upstream: &Upstream<'_>,
    path: &str,
    uuid: &str,
    file_kind: Option<String>,
    answer: TextAnswer,
) -> Result<Value, ProjectsError> {
    let mut result = Map::new();
    result.insert("path".to_owned(), json!(path));
    result.insert("created_at".to_owned(), json!(answer.created_at));
    if let Some(kind) = file_kind {
        result.insert("file_kind".to_owned(), Value::String(kind));
    }
    let size = answer.content.len();
    if size <= INLINE_TEXT_MAX_BYTES {
        result.insert("content".to_owned(), Value::String(answer.content));
        return Ok(Value::Object(result));
    }
    let spill_dir = &upstream.config.spill_dir;
    let saved = save(spill_dir, doc_file_name(uuid), answer.content.into_bytes()).await?;
    let notice = format!(
        "The text is {size} bytes, above the {INLINE_TEXT_MAX_BYTES}-byte inline limit; \
         it was saved to local_file."
    );
    result.insert("local_file".to_owned(), json!(saved.display().to_string()));
    result.insert("notice".to_owned(), Value::String(notice));
    Ok(Value::Object(result))
}

/// Downloads and checks the raw bytes (at most one re-fetch on a size mismatch), then saves them.
async fn raw_result(
    upstream: &Upstream<'_>,
    path: &str,
    file: &DetailFile,
) -> Result<Value, ProjectsError> {
    let (answer, bytes) = match download(upstream, path, file).await? {
        Ok(done) => done,
        Err(_) => match download(upstream, path, file).await? {
            Ok(done) => done,
            Err((reported, received)) => {
                return Err(ProjectsError::SizeMismatch {
                    path: path.to_owned(),
                    received,
                    reported,
                });
            }
        },
    };
    if answer.uuid != file.file_uuid || !looks_like_uuid(&answer.uuid) {
        return Err(ProjectsError::UuidMismatch {
            path: path.to_owned(),
            requested: file.file_uuid.clone(),
            received: answer.uuid,
        });
    }
    let name = answer.file_name.as_deref().unwrap_or(&file.file_name);
    let size = bytes.len();
    let saved = save(
        &upstream.config.spill_dir,
        upload_file_name(&answer.uuid, name),
        bytes,
    )
    .await?;
    Ok(json!({
        "path": path,
        "file_kind": answer.file_kind.or_else(|| file.file_kind.clone()),
        "local_file": saved.display().to_string(),
        "created_at": answer.created_at,
        "notice": format!(
            "This upload is binary; its original bytes ({size} bytes) were saved to local_file."
        ),
    }))
}

type Download = Result<(RawAnswer, Vec<u8>), (u64, u64)>;

/// One raw download: refused above the limit; `Ok(Err((reported, received)))` on a size
/// mismatch so the caller can fetch once more.
async fn download(
    upstream: &Upstream<'_>,
    path: &str,
    file: &DetailFile,
) -> Result<Download, ProjectsError> {
    let action = Action::RawDownload {
        file_uuid: &file.file_uuid,
    };
    let answer: RawAnswer = parse(&action, upstream.send(&action).await?)?;
    if answer.file_size_bytes > RAW_DOWNLOAD_MAX_BYTES {
        return Err(ProjectsError::DownloadTooLarge {
            path: path.to_owned(),
            size: answer.file_size_bytes,
        });
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(answer.content_base64.as_bytes())
        .map_err(|error| ProjectsError::InvalidResponse {
            action: action.name(),
            message: format!("content_base64 is not base64: {error}"),
        })?;
    let received = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if received != answer.file_size_bytes {
        return Ok(Err((answer.file_size_bytes, received)));
    }
    Ok(Ok((answer, bytes)))
}

#[derive(Debug, Deserialize)]
struct SearchAnswer {
    #[serde(default)]
    text_results: Vec<SearchHit>,
    #[serde(default)]
    rich_content_results: Vec<SearchHit>,
}

#[derive(Debug, Deserialize)]
struct SearchHit {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    doc_uuid: Option<String>,
    #[serde(default)]
    chunk: Option<SearchChunk>,
}

#[derive(Debug, Deserialize)]
struct SearchChunk {
    #[serde(default)]
    text: Option<String>,
}

/// `{rag:true, hits}`; a 403 from search falls back to the doc names.
pub(crate) async fn project_search(
    upstream: &Upstream<'_>,
    query: &str,
    n: u8,
) -> Result<Value, ProjectsError> {
    let action = Action::Search { query, n };
    let body = match upstream.send(&action).await {
        Ok(body) => body,
        Err(error) if error.status() == Some(403) => {
            let detail = ProjectDetail::parse(upstream.send(&Action::Detail).await?)?;
            return Ok(
                json!({"method": "project_search", "rag": false, "docs": detail.doc_names()}),
            );
        }
        Err(error) => return Err(error),
    };
    // The body may arrive as a JSON string holding the JSON.
    let body = match body {
        Value::String(text) => {
            serde_json::from_str(&text).map_err(|error| ProjectsError::InvalidResponse {
                action: action.name(),
                message: error.to_string(),
            })?
        }
        other => other,
    };
    let answer: SearchAnswer = parse(&action, body)?;
    let hits: Vec<Value> = answer
        .text_results
        .into_iter()
        .chain(answer.rich_content_results)
        .map(|hit| {
            json!({"name": hit.name, "doc_uuid": hit.doc_uuid,
                "text": hit.chunk.and_then(|chunk| chunk.text)})
        })
        .collect();
    Ok(json!({"rag": true, "hits": hits}))
}
