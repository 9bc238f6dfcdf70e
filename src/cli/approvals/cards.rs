//! cli::approvals::cards: an approval as a person reads it in a terminal — kind, time left,
//! scope, the call, the verified project identity and the exact paths — from the service's
//! JSON. Untrusted strings are made visible (`\u202e`, `С[U+0421]`) so that a terminal never
//! renders a control or bidi character.

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::authz::ApprovalKind;
use crate::server::present::card::{kind_label, time_left};
use crate::server::present::shown::visible_text;

/// The readable card of one approval (as `GET /v1/approvals` returns it).
pub fn card_text(approval: &Value, now: OffsetDateTime) -> String {
    let text = |value: &Value| visible_text(value.as_str().unwrap_or(""));
    let card = &approval["card"];
    let summary = &approval["summary"];
    let kind = serde_json::from_value::<ApprovalKind>(card["kind"].clone())
        .map(kind_label)
        .unwrap_or("unknown kind");
    let left = OffsetDateTime::parse(approval["expires_at"].as_str().unwrap_or(""), &Rfc3339)
        .map(|expires| time_left(expires, now))
        .unwrap_or_else(|_| "expiry unknown".to_string());
    let mut lines = vec![
        format!(
            "{}  {kind}  ({left}, {})",
            text(&approval["id"]),
            text(&approval["status"])
        ),
        format!("  scope:    {}", text(&card["scope"])),
        format!("  message:  {}", text(&card["message"])),
        format!(
            "  call:     {} {}{}   agent: {}   session: {}",
            text(&summary["tool"]),
            text(&summary["operation"]),
            summary["project_id"]
                .as_str()
                .map(|project| format!(" on {}", visible_text(project)))
                .unwrap_or_default(),
            text(&approval["requested_by"]),
            text(&approval["session_id"]),
        ),
    ];
    if card["kind"] == "grant" {
        lines.push(format!(
            "  project:  \"{}\" ({})  {}",
            text(&card["name"]),
            text(&card["sharing_label"]),
            text(&card["url"])
        ));
    }
    for (label, key) in [
        ("writes", "writes"),
        ("deletes", "deletes"),
        ("paths", "targets"),
    ] {
        lines.extend(paths(label, &card[key]));
    }
    lines.join("\n")
}

fn paths(label: &str, list: &Value) -> Vec<String> {
    let Some(items) = list.as_array().filter(|items| !items.is_empty()) else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .map(|(index, path)| {
            let head = if index == 0 {
                format!("{label}:")
            } else {
                String::new()
            };
            format!("  {head:<9} {}", visible_text(path.as_str().unwrap_or("")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use serde_json::json;
    use time::macros::datetime;

    use super::*;

    #[test]
    fn a_plan_card_lists_writes_and_deletes_apart_with_hostile_characters_visible() {
        let approval = json!({
            "id": "ap_1", "status": "pending", "requested_by": "agent-1", "session_id": "s1",
            "expires_at": "2026-12-01T10:04:12Z",
            "summary": {"tool": "ClaudeDesign", "operation": "finalize_plan", "project_id": "p1"},
            "card": {"kind": "plan", "scope": "exactly these paths", "writes": ["a.html", "b\u{202e}.html"],
                     "deletes": ["old.css"]}
        });
        let text = card_text(&approval, datetime!(2026-12-01 10:00 UTC));
        assert!(text.contains("Plan: these paths for 15 minutes"), "{text}");
        assert!(text.contains("4 min 12 s left"), "{text}");
        assert!(text.contains("writes:   a.html"), "{text}");
        assert!(text.contains("b\\u202e.html"), "{text}");
        assert!(!text.contains('\u{202e}'), "{text}");
        assert!(text.contains("deletes:  old.css"), "{text}");
        assert!(text.contains("finalize_plan on p1"), "{text}");
    }

    #[test]
    fn a_subagents_finalize_plan_card_says_this_call_only_and_no_plan_is_kept() {
        let approval = json!({
            "id": "ap_2", "status": "pending", "requested_by": "agent-1", "session_id": "s1",
            "expires_at": "2026-12-01T10:04:12Z",
            "summary": {"tool": "ClaudeDesign", "operation": "finalize_plan", "project_id": "p1"},
            "card": {"kind": "batch", "scope": "this call only; no plan is kept for a subagent",
                     "message": "Design finalize_plan writes to claude.ai/design. Approving runs this finalize_plan once and keeps nothing.",
                     "targets": [], "writes": ["a.html"], "deletes": ["old.css"]}
        });
        let text = card_text(&approval, datetime!(2026-12-01 10:00 UTC));
        assert!(text.contains("This call only"), "{text}");
        assert!(!text.contains("15 minutes"), "{text}");
        assert!(
            text.contains("scope:    this call only; no plan is kept for a subagent"),
            "{text}"
        );
        assert!(
            text.contains("message:  Design finalize_plan writes"),
            "{text}"
        );
        assert!(text.contains("writes:   a.html"), "{text}");
        assert!(text.contains("deletes:  old.css"), "{text}");
    }
}
