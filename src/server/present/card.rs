//! server::present::card: one approval rendered for a person — exactly what its JSON card says
//! (kind, scope sentence, message, paths with writes and deletes apart, the server-verified
//! project identity with its URL as text), who asks, from which session and tool call, and the
//! time left. Every untrusted string goes through [`shown`].

use maud::{html, Markup};
use time::OffsetDateTime;

use super::shown::{needs_care, shown, shown_prose};
use crate::authz::{Approval, ApprovalKind};
use crate::store::approvals::{ApprovalStatus, ApprovalView};

/// What the approver is asked to give, in words.
pub fn kind_label(kind: ApprovalKind) -> &'static str {
    match kind {
        ApprovalKind::Consent => "Connect Claude Design",
        ApprovalKind::Grant => "Project write grant",
        ApprovalKind::Plan => "Plan: these paths for 15 minutes",
        ApprovalKind::Batch => "This call only",
    }
}

/// `4 min 12 s left`, or `expired`.
pub fn time_left(expires_at: OffsetDateTime, now: OffsetDateTime) -> String {
    let left = (expires_at - now).whole_seconds();
    if left <= 0 {
        return "expired".to_string();
    }
    let (minutes, seconds) = (left / 60, left % 60);
    if minutes > 0 {
        format!("{minutes} min {seconds} s left")
    } else {
        format!("{seconds} s left")
    }
}

/// The card body (no forms): the same on the list, the approval's page and in history.
pub fn card(view: &ApprovalView, now: OffsetDateTime) -> Markup {
    let kind = view.card.kind();
    let summary = &view.summary;
    html! {
        div.card data-approval=(view.id) data-kind=(kind.as_str()) {
            div.card-head {
                span.kind { (kind_label(kind)) }
                span.status { (view.status.as_str()) }
                @if view.status == ApprovalStatus::Pending {
                    span.left { (time_left(view.expires_at, now)) }
                }
            }
            p.scope { strong { "Scope: " } (shown_prose(view.card.scope())) }
            p.message { (shown_prose(view.card.message())) }
            (details(&view.card))
            dl.who {
                dt { "Agent" } dd { (shown(&view.requested_by)) }
                dt { "Session" } dd { (shown(&view.session_id)) }
                dt { "Tool call" } dd {
                    (shown(&summary.tool)) " " (shown(&summary.operation))
                    @if let Some(project) = &summary.project_id { " on " (shown(project)) }
                }
                dt { "Approval" } dd { code { (shown(&view.id)) } }
                @if let Some(by) = &view.approved_by { dt { "Decided by" } dd { (shown(by)) } }
                @if let Some(why) = view.withdrawn_because() { dt { "Withdrawn" } dd { (shown_prose(why)) } }
            }
        }
    }
}

fn details(card: &Approval) -> Markup {
    match card {
        Approval::Consent { operation, .. } => html! {
            p { "The call that asked: " (shown(operation)) }
        },
        Approval::Grant {
            project_id,
            name,
            sharing_label,
            url,
            writes,
            ..
        } => html! {
            dl.identity {
                dt { "Project (verified by the server)" } dd { (shown(name)) }
                dt { "Sharing" } dd { (shown(sharing_label)) }
                dt { "URL (not a link)" } dd { code { (shown(url)) } }
                dt { "Project id" } dd { code { (shown(project_id)) } }
            }
            (paths("Writes now", writes))
        },
        Approval::Plan {
            project_id,
            writes,
            deletes,
            ..
        } => html! {
            p { "Project " code { (shown(project_id)) } }
            (paths("Writes", writes))
            (paths("Deletes", deletes))
        },
        // A finalize_plan names its plan's writes and deletes instead of targets.
        Approval::Batch {
            writes, deletes, ..
        } if !(writes.is_empty() && deletes.is_empty()) => html! {
            (paths("Writes", writes))
            (paths("Deletes", deletes))
        },
        Approval::Batch {
            operation, targets, ..
        } => {
            let label = if operation.contains("delete") {
                "Deletes"
            } else {
                "Paths"
            };
            paths(label, targets)
        }
    }
}

fn paths(label: &str, list: &[String]) -> Markup {
    html! {
        div.paths {
            h4 { (label) " (" (list.len()) ")" }
            @if list.is_empty() {
                p.none { "none" }
            } @else {
                @if list.iter().any(|path| needs_care(path)) {
                    p.warning { "Some paths hold invisible or non-ASCII characters: they are marked." }
                }
                ul { @for path in list { li { code { (shown(path)) } } } }
            }
        }
    }
}
