//! cli::approvals::cards: an approval as a person reads it in a terminal — kind, time left,
//! scope, the call, who asked (main agent or subagent, mode, attested), whether a client
//! waits, the verified project identity, the exact paths, and the votes against the quorum
//! (`1 of 2 approvals`, who voted when, their notes) — from the service's JSON. Untrusted strings are made visible (`\u202e`, `С[U+0421]`) so that a terminal never
//! renders a control or bidi character.

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::authz::ApprovalKind;
use crate::server::present::card::{asked_as, kind_label, time_left, CONSENT_FOLLOWS};
use crate::server::present::shown::visible_text;
use crate::store::approvals::ClientWait;

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
    let asked = &approval["asked_as"];
    lines.push(format!(
        "  asked as: {}",
        asked_as(
            asked["agent"].as_str().unwrap_or("main"),
            asked["agent_id"].as_str(),
            asked["mode"].as_str().unwrap_or("default"),
            asked["attestation"].as_str().unwrap_or("none"),
        )
    ));
    let client =
        serde_json::from_value::<ClientWait>(approval["client"].clone()).unwrap_or_default();
    if client != ClientWait::Polls {
        lines.push(format!("  client:   {}", client.describe()));
    }
    if card["kind"] == "consent" {
        lines.push(format!("  next:     {CONSENT_FOLLOWS}"));
    }
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
    lines.extend(votes(approval));
    lines.extend(bound(approval));
    lines.join("\n")
}

/// What the approval is bound to (issue 35 §3): the held call's digest and the policy set
/// that asked; nothing for an approval held before bindings.
fn bound(approval: &Value) -> Option<String> {
    let bound = &approval["bound"];
    let (call, policies) = (bound["call"].as_str()?, bound["policies"].as_str()?);
    Some(format!(
        "  bound:    call {} asked under policies {}",
        visible_text(call),
        visible_text(policies)
    ))
}

/// `1 of 2 approvals` from an approval's JSON; `None` for a quorum of one.
fn tally_of(approval: &Value) -> Option<String> {
    let quorum = approval["quorum"].as_u64().filter(|quorum| *quorum > 1)?;
    let given = approval["votes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|ballot| ballot["vote"] == "approve")
        .count();
    Some(format!("{given} of {quorum} approvals"))
}

/// The quorum line and one line per vote: who, which way, when, and the note.
fn votes(approval: &Value) -> Vec<String> {
    let text = |value: &Value| visible_text(value.as_str().unwrap_or(""));
    let mut lines: Vec<String> = tally_of(approval)
        .map(|tally| format!("  quorum:   {tally}"))
        .into_iter()
        .collect();
    for (index, ballot) in approval["votes"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let head = if index == 0 { "votes:" } else { "" };
        let vote = match ballot["vote"].as_str() {
            Some("approve") => "approved",
            Some("refuse") => "refused",
            _ => "answered",
        };
        let note = ballot["note"]
            .as_str()
            .map(|note| format!(": {}", visible_text(note)))
            .unwrap_or_default();
        lines.push(format!(
            "  {head:<9} {} {vote} at {}{note}",
            text(&ballot["by"]),
            text(&ballot["at"])
        ));
    }
    lines
}

/// What became of an approval just approved or refused (as `POST …/approve` answers it): its
/// status, who decided, the result as the agent reads it, and the approval its call moved on
/// to, if any (a consent card's next card, A2).
pub fn decided_text(approval: &Value) -> String {
    let text = |value: &Value| visible_text(value.as_str().unwrap_or(""));
    let card = &approval["card"];
    let kind = serde_json::from_value::<ApprovalKind>(card["kind"].clone())
        .map(kind_label)
        .unwrap_or("unknown kind");
    let head = match tally_of(approval) {
        Some(tally) if approval["status"] == "pending" => format!(
            "{}  {kind}  (pending, {tally}; waiting for another approver)",
            text(&approval["id"]),
        ),
        _ => format!(
            "{}  {kind}  ({}, decided by {})",
            text(&approval["id"]),
            text(&approval["status"]),
            visible_text(approval["approved_by"].as_str().unwrap_or("nobody"))
        ),
    };
    let mut lines = vec![head];
    let result = &approval["result"];
    let said: Vec<String> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .map(visible_text)
        .collect();
    if !said.is_empty() {
        let error = result["error"]
            .as_str()
            .map(|kind| format!("error `{}`: ", visible_text(kind)))
            .unwrap_or_default();
        lines.push(format!("  result:   {error}{}", said.join(" ")));
    }
    if approval["status"] == "running" {
        lines.push(format!(
            "  running:  follow it with `askgate approvals list` or GET {}",
            text(&approval["poll"])
        ));
    }
    if let Some(next) = result["next_approval"].as_str() {
        lines.push(format!(
            "  next:     the same call now waits on approval {0}: read its card with `askgate \
             approvals list`, then `askgate approvals approve {0}`",
            visible_text(next)
        ));
    }
    lines.extend(votes(approval));
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

    /// A17: the card says a subagent asked (and which), its mode, and that the client's hook
    /// attested it; A16: that its client has not come back yet.
    #[test]
    fn a17_a_subagents_card_says_who_asked_in_which_mode_and_whether_attested() {
        let approval = json!({
            "id": "ap_3", "status": "pending", "requested_by": "agent-1", "session_id": "s1",
            "expires_at": "2026-12-01T10:04:12Z",
            "summary": {"tool": "ClaudeDesign", "operation": "write_files", "project_id": "p2"},
            "card": {"kind": "batch", "scope": "this call only", "message": "m", "targets": ["a.html"]},
            "asked_as": {"agent": "subagent", "agent_id": "a3e2d3b8cda945110", "mode": "acceptEdits",
                         "attestation": "attested"},
            "client": "not_yet"
        });
        let text = card_text(&approval, datetime!(2026-12-01 10:00 UTC));
        assert!(
            text.contains("  asked as: subagent a3e2d3b8cda945110, permission mode acceptEdits, attested by the client's hook"),
            "{text}"
        );
        assert!(
            text.contains("  client:   not yet: the agent's MCP client"),
            "{text}"
        );
        let main = json!({"id": "ap_4", "status": "pending", "card": {"kind": "consent"},
            "asked_as": {"agent": "main", "mode": "default", "attestation": "none"}, "client": "polls"});
        let text = card_text(&main, datetime!(2026-12-01 10:00 UTC));
        assert!(
            text.contains(
                "asked as: the main agent, permission mode default, as the caller stated them"
            ),
            "{text}"
        );
        assert!(!text.contains("client:"), "{text}");
        assert!(
            text.contains("  next:     Approving connects Claude Design"),
            "{text}"
        );
    }

    /// A2: approving a consent card says the call moved on, and to which approval.
    #[test]
    fn a2_an_approved_consent_card_names_the_next_approval() {
        let approved = json!({"id": "ap_1", "status": "completed", "approved_by": "alice",
            "card": {"kind": "consent"},
            "result": {"content": [{"type": "text", "text": "Claude Design is now connected"}],
                       "isError": false, "next_approval": "ap_2"}});
        let text = decided_text(&approved);
        assert!(
            text.starts_with("ap_1  Connect Claude Design  (completed, decided by alice)"),
            "{text}"
        );
        assert!(
            text.contains("  result:   Claude Design is now connected"),
            "{text}"
        );
        assert!(text.contains("`askgate approvals approve ap_2`"), "{text}");
        let failed = json!({"id": "ap_3", "status": "failed", "approved_by": "alice",
            "card": {"kind": "batch"},
            "result": {"content": [{"type": "text", "text": "needs a plan_token"}], "error": "upstream"}});
        assert!(decided_text(&failed).contains("result:   error `upstream`: needs a plan_token"));
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

    /// Issue 35: a quorum card says `1 of 2 approvals` and who voted, when, with their note;
    /// a counted approval answers pending and waiting, not decided.
    #[test]
    fn i35_a_quorum_card_says_1_of_2_and_who_voted() {
        let approval = json!({
            "id": "ap_5", "status": "pending", "requested_by": "agent-1", "session_id": "s1",
            "expires_at": "2026-12-01T10:04:12Z", "quorum": 2,
            "summary": {"tool": "Projects", "operation": "project_delete", "project_id": "p1"},
            "card": {"kind": "batch", "scope": "this call only", "message": "m", "targets": ["a.md"]},
            "votes": [{"by": "alice", "vote": "approve", "at": "2026-12-01T10:01:00Z",
                       "note": "checked \u{202e}it"}],
            "bound": {"call": "sha256:0123", "policies": "sha256:abcd"}
        });
        let text = card_text(&approval, datetime!(2026-12-01 10:02 UTC));
        assert!(
            text.ends_with("\n  bound:    call sha256:0123 asked under policies sha256:abcd"),
            "{text}"
        );
        assert!(text.contains("  quorum:   1 of 2 approvals"), "{text}");
        assert!(
            text.contains("  votes:    alice approved at 2026-12-01T10:01:00Z: checked \\u202eit"),
            "{text}"
        );
        let decided = decided_text(&approval);
        assert!(
            decided.starts_with(
                "ap_5  This call only  (pending, 1 of 2 approvals; waiting for another approver)"
            ),
            "{decided}"
        );
        let single = json!({"id": "ap_6", "status": "pending", "quorum": 1, "votes": [],
            "card": {"kind": "batch"}});
        let text = card_text(&single, datetime!(2026-12-01 10:02 UTC));
        assert!(
            !text.contains("quorum:") && !text.contains("votes:") && !text.contains("bound:"),
            "{text}"
        );
    }
}
