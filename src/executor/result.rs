//! Mapping a Design MCP `tools/call` result into the content handed back to the agent, with the
//! per-image and aggregate caps of client-facts §7 (`yoS`, `boS`), and the result of a call that
//! failed before or while it ran ([`error_json`]). Pure: it must not do I/O.

use crate::paths::js_length;
use serde_json::{json, Value};

/// A failed call's result as the agent and the log see it: one text block, `isError`, and the
/// kind of failure (`deadline`, `withdrawn`, …).
pub fn error_json(kind: &str, message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true, "error": kind})
}

/// Largest base64 image, and largest aggregate of all blocks, in characters (JavaScript length).
pub const CONTENT_CAP: usize = 130_000;
/// Image media types kept as image blocks.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A mapped result: `content` is exactly what the agent sees (notices included as text blocks
/// where the reference puts them); `notices` repeats those notice texts for logs and metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedResult {
    pub content: Vec<Value>,
    pub is_error: bool,
    pub notices: Vec<String>,
}

/// Maps a JSON-RPC `result` object (`{content, isError}`); anything else counts as empty.
pub fn map_result(result: &Value) -> MappedResult {
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if blocks.is_empty() {
        let text = if is_error {
            "(error with no message)"
        } else {
            "(empty result)"
        };
        return MappedResult {
            content: vec![text_block(text)],
            is_error,
            notices: Vec::new(),
        };
    }
    let mut notices = Vec::new();
    let mapped: Vec<Value> = blocks
        .iter()
        .map(|block| map_block(block, &mut notices))
        .collect();
    let mut content = apply_aggregate_cap(mapped, &mut notices);
    if is_error {
        content = vec![text_block(&join_error_text(&content))];
    }
    MappedResult {
        content,
        is_error,
        notices,
    }
}

/// A JSON-RPC `error` object as an error result: `message`, plus " — <data JSON>" when there is data.
pub fn map_rpc_error(error: &Value) -> MappedResult {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .filter(|message| !message.is_empty())
        .unwrap_or("(error with no message)");
    let text = match error.get("data") {
        Some(data) if !data.is_null() => format!("{message} — {data}"),
        _ => message.to_owned(),
    };
    MappedResult {
        content: vec![text_block(&text)],
        is_error: true,
        notices: Vec::new(),
    }
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// One block: text stays text, a supported image stays an image unless over the cap, and
/// anything else becomes its JSON text.
fn map_block(block: &Value, notices: &mut Vec<String>) -> Value {
    let kind = block.get("type").and_then(Value::as_str);
    if kind == Some("text") {
        if let Some(text) = block.get("text").and_then(Value::as_str) {
            return text_block(text);
        }
    }
    if kind == Some("image") {
        let data = block.get("data").and_then(Value::as_str);
        let mime = block.get("mimeType").and_then(Value::as_str);
        if let (Some(data), Some(mime)) = (data, mime) {
            if IMAGE_TYPES.contains(&mime) {
                return map_image(data, mime, notices);
            }
        }
    }
    text_block(&block.to_string())
}

fn map_image(data: &str, mime: &str, notices: &mut Vec<String>) -> Value {
    let length = js_length(data);
    if length <= CONTENT_CAP {
        return json!({"type": "image", "data": data, "mimeType": mime});
    }
    let notice = format!(
        "[render_preview image omitted — {}KB exceeds {}KB cap]",
        kibibytes(length),
        kibibytes(CONTENT_CAP)
    );
    notices.push(notice.clone());
    text_block(&notice)
}

/// Greedy in order: a block that does not fit is dropped, a later smaller one may still fit.
fn apply_aggregate_cap(blocks: Vec<Value>, notices: &mut Vec<String>) -> Vec<Value> {
    let mut used = 0usize;
    let mut omitted_blocks = 0usize;
    let mut omitted_chars = 0usize;
    let mut kept = Vec::with_capacity(blocks.len());
    for block in blocks {
        let size = block_size(&block);
        if used.saturating_add(size) <= CONTENT_CAP {
            used = used.saturating_add(size);
            kept.push(block);
        } else {
            omitted_blocks += 1;
            omitted_chars = omitted_chars.saturating_add(size);
        }
    }
    if omitted_blocks > 0 {
        let notice = format!(
            "[ClaudeDesign result truncated — {omitted_blocks} block(s) ({}k chars) omitted; aggregate over {}k-char cap]",
            kibibytes(omitted_chars),
            kibibytes(CONTENT_CAP)
        );
        notices.push(notice.clone());
        kept.push(text_block(&notice));
    }
    kept
}

/// An image counts as its base64 length, text as its length.
fn block_size(block: &Value) -> usize {
    let field = if block.get("type").and_then(Value::as_str) == Some("image") {
        "data"
    } else {
        "text"
    };
    block
        .get(field)
        .and_then(Value::as_str)
        .map(js_length)
        .unwrap_or_default()
}

fn join_error_text(blocks: &[Value]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    let joined = texts.join("\n");
    if joined.is_empty() {
        "(error with no message)".to_owned()
    } else {
        joined
    }
}

/// Rounded kibibytes, as the reference prints its caps (130,000 characters → "127").
fn kibibytes(length: usize) -> usize {
    length.saturating_add(512) / 1024
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;
