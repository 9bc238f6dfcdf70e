//! Owns the route table of client-facts §10.2: each upstream [`Action`] as a method, path and
//! body on the org route and as an `{op, …}` body on the CCR session route. Pure data: it must
//! not send anything, add headers or read answers (that is `api`).

use reqwest::Method;
use serde_json::{json, Value};

/// One upstream request, named by the action of the route table.
#[derive(Debug, Clone)]
pub(crate) enum Action<'a> {
    Detail,
    ReadDoc {
        doc_uuid: &'a str,
    },
    ReadFileText {
        file_uuid: &'a str,
    },
    RawDownload {
        file_uuid: &'a str,
    },
    CreateDoc {
        file_name: &'a str,
        content: &'a str,
    },
    ReplaceDoc {
        doc_uuid: &'a str,
        content: &'a str,
    },
    DeleteDoc {
        doc_uuid: &'a str,
    },
    Search {
        query: &'a str,
        n: u8,
    },
}

impl Action<'_> {
    /// The action's name in error texts.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Action::Detail => "detail",
            Action::ReadDoc { .. } => "read doc",
            Action::ReadFileText { .. } => "read file text",
            Action::RawDownload { .. } => "raw download",
            Action::CreateDoc { .. } => "create doc",
            Action::ReplaceDoc { .. } => "replace doc",
            Action::DeleteDoc { .. } => "delete doc",
            Action::Search { .. } => "search",
        }
    }

    /// Method, path below the project, and JSON body on the org route.
    pub(super) fn org_request(&self) -> (Method, String, Option<Value>) {
        match self {
            Action::Detail => (Method::GET, "/detail".to_owned(), None),
            Action::ReadDoc { doc_uuid } => (Method::GET, format!("/docs/{doc_uuid}"), None),
            Action::ReadFileText { file_uuid } => {
                (Method::GET, format!("/files/{file_uuid}/extracted"), None)
            }
            Action::RawDownload { file_uuid } => {
                (Method::GET, format!("/files/{file_uuid}/raw"), None)
            }
            Action::CreateDoc { file_name, content } => (
                Method::POST,
                "/docs".to_owned(),
                Some(json!({"file_name": file_name, "content": content})),
            ),
            Action::ReplaceDoc { doc_uuid, content } => (
                Method::PATCH,
                format!("/docs/{doc_uuid}"),
                Some(json!({"content": content})),
            ),
            Action::DeleteDoc { doc_uuid } => (Method::DELETE, format!("/docs/{doc_uuid}"), None),
            Action::Search { .. } => (Method::GET, "/kb/search".to_owned(), None),
        }
    }

    /// The `{op, …}` body on the session route; `None` for a replace, which has no op there.
    pub(super) fn session_body(&self) -> Option<Value> {
        let body = match self {
            Action::Detail => json!({"op": "detail"}),
            Action::ReadDoc { doc_uuid } => json!({"op": "read-doc", "doc_uuid": doc_uuid}),
            Action::ReadFileText { file_uuid } => {
                json!({"op": "read-file", "file_uuid": file_uuid})
            }
            Action::RawDownload { file_uuid } => {
                json!({"op": "read-file-raw", "file_uuid": file_uuid})
            }
            Action::CreateDoc { file_name, content } => {
                json!({"op": "write-doc", "file_name": file_name, "content": content})
            }
            Action::DeleteDoc { doc_uuid } => json!({"op": "delete-doc", "doc_uuid": doc_uuid}),
            Action::Search { query, n } => json!({"op": "kb-search", "query": query, "n": n}),
            Action::ReplaceDoc { .. } => return None,
        };
        Some(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_route_has_no_replace_op() {
        let replace = Action::ReplaceDoc {
            doc_uuid: "d",
            content: "c",
        };
        assert!(replace.session_body().is_none());
        let search = Action::Search { query: "q", n: 3 };
        assert_eq!(
            search.session_body().unwrap(),
            json!({"op": "kb-search", "query": "q", "n": 3})
        );
    }
}
