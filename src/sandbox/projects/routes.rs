//! Owns the HTTP adapters of the Projects sandbox: the org routes and the CCR session route of
//! client-facts §10.2, mapped onto the store; it must not authenticate (the core does) or hold
//! state of its own.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use super::store::StoreError;
use super::{ProjectsFault, Shared};

/// Default and largest `n` of a search.
const SEARCH_DEFAULT: usize = 5;
const SEARCH_MAX: usize = 50;

pub(crate) type Outcome = Result<Value, StoreError>;

/// Turns an outcome into a JSON response: 200 with the body, or the status with `{"error"}`.
pub(crate) fn respond(outcome: Outcome) -> Response {
    match outcome {
        Ok(body) => Json(body).into_response(),
        Err(error) => {
            let status =
                StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (status, Json(json!({"error": error.code}))).into_response()
        }
    }
}

fn parse_body<T: for<'de> Deserialize<'de>>(body: &Bytes) -> Result<T, StoreError> {
    serde_json::from_slice(body).map_err(|_| StoreError::bad_request("invalid_request"))
}

pub(crate) async fn detail(
    State(shared): State<Arc<Shared>>,
    Path((org, project)): Path<(String, String)>,
) -> Response {
    respond(shared.with_project(&org, &project, |store| Ok(store.detail())))
}

pub(crate) async fn read_doc(
    State(shared): State<Arc<Shared>>,
    Path((org, project, doc_uuid)): Path<(String, String, String)>,
) -> Response {
    respond(shared.with_project(&org, &project, |store| store.read_doc(&doc_uuid)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContentBody {
    content: String,
}

pub(crate) async fn update_doc(
    State(shared): State<Arc<Shared>>,
    Path((org, project, doc_uuid)): Path<(String, String, String)>,
    body: Bytes,
) -> Response {
    respond(shared.with_project(&org, &project, |store| {
        let body: ContentBody = parse_body(&body)?;
        store.update_doc(&doc_uuid, &body.content)
    }))
}

pub(crate) async fn delete_doc(
    State(shared): State<Arc<Shared>>,
    Path((org, project, doc_uuid)): Path<(String, String, String)>,
) -> Response {
    respond(shared.with_project(&org, &project, |store| store.delete_doc(&doc_uuid)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateBody {
    file_name: String,
    content: String,
}

pub(crate) async fn create_doc(
    State(shared): State<Arc<Shared>>,
    Path((org, project)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    respond(shared.with_project(&org, &project, |store| {
        let body: CreateBody = parse_body(&body)?;
        store.create_doc(&body.file_name, &body.content, now())
    }))
}

pub(crate) async fn extracted(
    State(shared): State<Arc<Shared>>,
    Path((org, project, file_uuid)): Path<(String, String, String)>,
) -> Response {
    respond(shared.with_project(&org, &project, |store| store.extracted(&file_uuid)))
}

pub(crate) async fn raw(
    State(shared): State<Arc<Shared>>,
    Path((org, project, file_uuid)): Path<(String, String, String)>,
) -> Response {
    respond(shared.with_project(&org, &project, |store| {
        let truncate = shared.take_fault(ProjectsFault::RawSizeMismatch);
        store.raw(&file_uuid, truncate)
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchQuery {
    query: String,
    n: Option<usize>,
}

pub(crate) async fn search(
    State(shared): State<Arc<Shared>>,
    Path((org, project)): Path<(String, String)>,
    Query(query): Query<SearchQuery>,
) -> Response {
    respond(shared.with_project(&org, &project, |store| {
        if shared.take_fault(ProjectsFault::SearchForbidden) {
            return Err(forbidden());
        }
        store.search(&query.query, search_count(query.n))
    }))
}

fn forbidden() -> StoreError {
    StoreError {
        status: 403,
        code: "permission_error",
    }
}

fn search_count(n: Option<usize>) -> usize {
    n.unwrap_or(SEARCH_DEFAULT).clamp(1, SEARCH_MAX)
}

/// The body of `POST /v2/ccr-sessions/-/chat-project`: an `op` and its fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChatProjectRequest {
    op: String,
    doc_uuid: Option<String>,
    file_uuid: Option<String>,
    file_name: Option<String>,
    content: Option<String>,
    query: Option<String>,
    n: Option<usize>,
}

/// The CCR session route; the session is bound to the attached project, so no project id
/// travels in the body.
pub(crate) async fn chat_project(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    shared.count_request();
    let outcome = parse_body::<ChatProjectRequest>(&body)
        .and_then(|request| shared.with_store(|store| run_op(&shared, store, request)));
    respond(outcome)
}

fn field(value: Option<String>, code: &'static str) -> Result<String, StoreError> {
    value.ok_or_else(|| StoreError::bad_request(code))
}

fn run_op(
    shared: &Shared,
    store: &mut super::store::ProjectStore,
    request: ChatProjectRequest,
) -> Outcome {
    match request.op.as_str() {
        "detail" => Ok(store.detail()),
        "read-doc" => store.read_doc(&field(request.doc_uuid, "doc_uuid_required")?),
        "read-file" => store.extracted(&field(request.file_uuid, "file_uuid_required")?),
        "read-file-raw" => {
            let file_uuid = field(request.file_uuid, "file_uuid_required")?;
            store.raw(
                &file_uuid,
                shared.take_fault(ProjectsFault::RawSizeMismatch),
            )
        }
        "write-doc" => store.create_doc(
            &field(request.file_name, "file_name_required")?,
            &field(request.content, "content_required")?,
            now(),
        ),
        "delete-doc" => store.delete_doc(&field(request.doc_uuid, "doc_uuid_required")?),
        "kb-search" => {
            let query = field(request.query, "query_required")?;
            if shared.take_fault(ProjectsFault::SearchForbidden) {
                return Err(forbidden());
            }
            store.search(&query, search_count(request.n))
        }
        _ => Err(StoreError::bad_request("unknown_op")),
    }
}

/// RFC 3339 time of a new doc (the sandbox is an I/O adapter, so it may read the clock).
fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
