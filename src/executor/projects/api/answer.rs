//! Owns reading one upstream answer: the body cap, the `Projects API: … failed (HTTP …)` error
//! of a non-success status with its detail, and JSON decoding of a success. It must not send
//! requests or interpret a result's fields.

use reqwest::Response;
use serde_json::{Map, Value};

use super::super::error::ProjectsError;
use super::Action;

/// `maxContentLength` of a raw download: ceil(20,971,520 × 4 / 3) + 65,536 bytes.
pub(crate) const RAW_MAX_RESPONSE_BYTES: usize = 28_027_563;
/// How many characters of an error body go into the message.
const ERROR_DETAIL_CHARS: usize = 200;

/// Reads the body (capped), then turns a non-success status into the reference error and a
/// success into JSON.
pub(super) async fn read_answer(
    action: &Action<'_>,
    mut response: Response,
) -> Result<Value, ProjectsError> {
    let status = response.status();
    // One cap for every answer: the largest legitimate one is a raw download.
    let limit = RAW_MAX_RESPONSE_BYTES;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| ProjectsError::Transport {
            action: action.name(),
            message: error.to_string(),
        })?
    {
        if body.len().saturating_add(chunk.len()) > limit {
            return Err(ProjectsError::Transport {
                action: action.name(),
                message: format!("the response is larger than {limit} bytes"),
            });
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        return Err(ProjectsError::Api {
            action: action.name(),
            status: status.as_u16(),
            detail: error_detail(&body),
        });
    }
    serde_json::from_slice(&body).map_err(|error| ProjectsError::InvalidResponse {
        action: action.name(),
        message: error.to_string(),
    })
}

/// `: <first 200 characters of the error string or the body>`, or nothing for an empty body.
fn error_detail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let parsed: Option<Map<String, Value>> = serde_json::from_slice(body).ok();
    let error_string = parsed
        .as_ref()
        .and_then(|object| match object.get("error") {
            Some(Value::String(text)) => Some(text.clone()),
            Some(Value::Object(inner)) => inner
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        });
    let detail: String = error_string
        .unwrap_or_else(|| text.trim().to_owned())
        .chars()
        .take(ERROR_DETAIL_CHARS)
        .collect();
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_detail_prefers_the_error_string() {
        assert_eq!(error_detail(br#"{"error":"not_found"}"#), ": not_found");
        assert_eq!(
            error_detail(br#"{"error":{"type":"x","message":"nope"}}"#),
            ": nope"
        );
        assert_eq!(error_detail(b"plain text"), ": plain text");
        assert_eq!(error_detail(b""), "");
    }

    #[test]
    fn error_detail_keeps_200_characters() {
        let body = "é".repeat(201);
        let detail = error_detail(body.as_bytes());
        assert_eq!(detail.chars().count(), 202, "\": \" plus 200 characters");
        let exact = "x".repeat(200);
        assert_eq!(error_detail(exact.as_bytes()), format!(": {exact}"));
    }
}
