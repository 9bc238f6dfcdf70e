//! Owns the in-memory state of the fake claude.ai Projects surface (the seed project, its docs
//! and uploads, knowledge stats) and the operations on it; it must not know about HTTP routing,
//! authentication or faults.

use base64::Engine;
use serde_json::{json, Value};

/// A failed sandbox operation: the HTTP status and the `error` code of the JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoreError {
    pub(crate) status: u16,
    pub(crate) code: &'static str,
}

impl StoreError {
    pub(crate) fn not_found() -> StoreError {
        StoreError {
            status: 404,
            code: "not_found",
        }
    }

    pub(crate) fn bad_request(code: &'static str) -> StoreError {
        StoreError { status: 400, code }
    }
}

/// A text doc of the project knowledge.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub(crate) uuid: String,
    pub(crate) file_name: String,
    pub(crate) content: String,
    pub(crate) created_at: String,
}

/// An uploaded file: raw bytes, plus extracted text for `document` uploads.
#[derive(Debug, Clone)]
pub(crate) struct Upload {
    pub(crate) file_uuid: String,
    pub(crate) file_name: String,
    pub(crate) file_kind: String,
    pub(crate) created_at: String,
    pub(crate) extracted: Option<String>,
    pub(crate) raw: Vec<u8>,
}

/// The one project the sandbox serves, in the one organization it knows.
#[derive(Debug, Clone)]
pub(crate) struct ProjectStore {
    pub(crate) org_uuid: String,
    pub(crate) project_uuid: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) prompt_template: String,
    pub(crate) sync_sources: Value,
    pub(crate) docs: Vec<Doc>,
    pub(crate) uploads: Vec<Upload>,
    pub(crate) knowledge_size: i64,
    pub(crate) max_knowledge_size: i64,
}

/// Knowledge cost of a text: ceil(UTF-8 bytes / 4) tokens, the client's estimate (§10.3).
pub(crate) fn estimate_tokens(text: &str) -> i64 {
    i64::try_from(text.len().div_ceil(4)).unwrap_or(i64::MAX)
}

impl ProjectStore {
    /// Whether the org route's `{org}` and `{uuid}` name this project.
    pub(crate) fn check_project(&self, org: &str, project: &str) -> Result<(), StoreError> {
        if org == self.org_uuid && project == self.project_uuid {
            Ok(())
        } else {
            Err(StoreError::not_found())
        }
    }

    pub(crate) fn detail(&self) -> Value {
        let documents: Vec<Value> = self
            .docs
            .iter()
            .map(|doc| json!({"uuid": doc.uuid, "file_name": doc.file_name, "created_at": doc.created_at}))
            .collect();
        let files: Vec<Value> = self
            .uploads
            .iter()
            .map(|upload| {
                json!({"file_uuid": upload.file_uuid, "file_name": upload.file_name,
                    "file_kind": upload.file_kind, "created_at": upload.created_at})
            })
            .collect();
        json!({
            "uuid": self.project_uuid,
            "name": self.name,
            "description": self.description,
            "prompt_template": self.prompt_template,
            "documents": documents,
            "files": files,
            "sync_sources": self.sync_sources,
            "knowledge_stats": {
                "knowledge_size": self.knowledge_size,
                "max_knowledge_size": self.max_knowledge_size,
            },
        })
    }

    fn doc(&self, doc_uuid: &str) -> Result<&Doc, StoreError> {
        self.docs
            .iter()
            .find(|doc| doc.uuid == doc_uuid)
            .ok_or_else(StoreError::not_found)
    }

    fn upload(&self, file_uuid: &str) -> Result<&Upload, StoreError> {
        self.uploads
            .iter()
            .find(|upload| upload.file_uuid == file_uuid)
            .ok_or_else(StoreError::not_found)
    }

    pub(crate) fn read_doc(&self, doc_uuid: &str) -> Result<Value, StoreError> {
        let doc = self.doc(doc_uuid)?;
        Ok(
            json!({"uuid": doc.uuid, "file_name": doc.file_name, "content": doc.content,
            "created_at": doc.created_at}),
        )
    }

    /// The extracted text of an upload; uploads without extracted text are not found here.
    pub(crate) fn extracted(&self, file_uuid: &str) -> Result<Value, StoreError> {
        let upload = self.upload(file_uuid)?;
        let Some(content) = &upload.extracted else {
            return Err(StoreError::not_found());
        };
        Ok(json!({"file_kind": upload.file_kind, "content": content,
            "created_at": upload.created_at}))
    }

    /// The raw bytes in base64; `truncate` drops the last byte (the size-mismatch fault) while
    /// `file_size_bytes` still reports the true size.
    pub(crate) fn raw(&self, file_uuid: &str, truncate: bool) -> Result<Value, StoreError> {
        let upload = self.upload(file_uuid)?;
        let bytes = match (truncate, upload.raw.split_last()) {
            (true, Some((_, rest))) => rest,
            _ => upload.raw.as_slice(),
        };
        Ok(json!({
            "uuid": upload.file_uuid,
            "file_name": upload.file_name,
            "file_kind": upload.file_kind,
            "file_size_bytes": upload.raw.len(),
            "content_base64": base64::engine::general_purpose::STANDARD.encode(bytes),
            "created_at": upload.created_at,
        }))
    }

    pub(crate) fn create_doc(
        &mut self,
        file_name: &str,
        content: &str,
        created_at: String,
    ) -> Result<Value, StoreError> {
        if file_name.is_empty() {
            return Err(StoreError::bad_request("file_name_required"));
        }
        let doc = Doc {
            uuid: uuid::Uuid::new_v4().to_string(),
            file_name: file_name.to_owned(),
            content: content.to_owned(),
            created_at,
        };
        self.knowledge_size = self.knowledge_size.saturating_add(estimate_tokens(content));
        let body =
            json!({"uuid": doc.uuid, "file_name": doc.file_name, "created_at": doc.created_at});
        self.docs.push(doc);
        Ok(body)
    }

    /// Replaces a doc's content in place (same uuid), adjusting the knowledge size by the delta.
    pub(crate) fn update_doc(
        &mut self,
        doc_uuid: &str,
        content: &str,
    ) -> Result<Value, StoreError> {
        let doc = self
            .docs
            .iter_mut()
            .find(|doc| doc.uuid == doc_uuid)
            .ok_or_else(StoreError::not_found)?;
        let delta = estimate_tokens(content).saturating_sub(estimate_tokens(&doc.content));
        doc.content = content.to_owned();
        let body =
            json!({"uuid": doc.uuid, "file_name": doc.file_name, "created_at": doc.created_at});
        self.knowledge_size = self.knowledge_size.saturating_add(delta).max(0);
        Ok(body)
    }

    pub(crate) fn delete_doc(&mut self, doc_uuid: &str) -> Result<Value, StoreError> {
        let position = self
            .docs
            .iter()
            .position(|doc| doc.uuid == doc_uuid)
            .ok_or_else(StoreError::not_found)?;
        let doc = self.docs.remove(position);
        self.knowledge_size = self
            .knowledge_size
            .saturating_sub(estimate_tokens(&doc.content))
            .max(0);
        Ok(json!({"uuid": doc.uuid, "deleted": true}))
    }

    /// Case-insensitive substring search: docs go to `text_results`, uploads' extracted text to
    /// `rich_content_results`, at most `n` hits in all (docs first).
    pub(crate) fn search(&self, query: &str, n: usize) -> Result<Value, StoreError> {
        if query.is_empty() {
            return Err(StoreError::bad_request("query_required"));
        }
        let text_results: Vec<Value> = self
            .docs
            .iter()
            .filter_map(|doc| hit(&doc.file_name, &doc.uuid, &doc.content, query))
            .take(n)
            .collect();
        let rich_content_results: Vec<Value> = self
            .uploads
            .iter()
            .filter_map(|upload| {
                let text = upload.extracted.as_deref()?;
                hit(&upload.file_name, &upload.file_uuid, text, query)
            })
            .take(n.saturating_sub(text_results.len()))
            .collect();
        Ok(json!({"text_results": text_results, "rich_content_results": rich_content_results}))
    }
}

fn hit(name: &str, uuid: &str, text: &str, query: &str) -> Option<Value> {
    let chunk = snippet(text, query)?;
    Some(json!({"name": name, "doc_uuid": uuid, "chunk": {"text": chunk}}))
}

/// Characters of context kept before a match, and the chunk length in characters.
const CHUNK_LEAD: usize = 80;
const CHUNK_CHARS: usize = 300;

/// The chunk around the first case-insensitive match of `query` in `text`, if any. Works on
/// characters (lower-cased one for one) so a match never splits a UTF-8 sequence.
fn snippet(text: &str, query: &str) -> Option<String> {
    let fold = |character: char| character.to_lowercase().next().unwrap_or(character);
    let needle: Vec<char> = query.chars().map(fold).collect();
    let haystack: Vec<char> = text.chars().collect();
    if needle.is_empty() {
        return None;
    }
    let start = haystack.windows(needle.len()).position(|window| {
        window
            .iter()
            .zip(&needle)
            .all(|(left, right)| fold(*left) == *right)
    })?;
    let from = start.saturating_sub(CHUNK_LEAD);
    Some(haystack.iter().skip(from).take(CHUNK_CHARS).collect())
}
