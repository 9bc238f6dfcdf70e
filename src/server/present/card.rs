//! server::present::card: one approval rendered for a person — exactly what its JSON card says
//! (kind, scope sentence, message, paths with writes and deletes apart, the server-verified
//! project identity with its URL as text), who asks — main agent or subagent, in which
//! permission mode, attested or not — from which session and tool call, whether a client
//! waits for the result, the time left, and the votes against the quorum (`1 of 2 approvals`,
//! who voted when, with their notes). Every untrusted string goes through [`shown`].

use maud::{html, Markup};
use time::OffsetDateTime;

use super::shown::{needs_care, shown, shown_prose, visible_text};
use crate::authz::{Approval, ApprovalKind};
use crate::facts::AgentKind;
use crate::store::approvals::{ApprovalStatus, ApprovalView, Vote};

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

/// Who asked, as the call's session facts said (A17): `subagent a3e2…, permission mode
/// default, attested by the client's hook`. The parts are the JSON's, so the CLI (which reads
/// the JSON) says it in the same words; `agent_id` is untrusted and made visible.
pub fn asked_as(agent: &str, agent_id: Option<&str>, mode: &str, attestation: &str) -> String {
    let who = match (agent, agent_id) {
        ("subagent", Some(id)) => format!("subagent {}", visible_text(id)),
        ("subagent", None) => "a subagent".to_string(),
        _ => "the main agent".to_string(),
    };
    let facts = match attestation {
        "attested" => "attested by the client's hook",
        "unattested" => "not attested: the caller's configured facts",
        "mismatched" => {
            "not attested (the hook attested another call): the caller's configured facts"
        }
        "foreign" => {
            "not attested (the hook posted with another token): the caller's configured facts"
        }
        _ => "as the caller stated them",
    };
    format!("{who}, permission mode {}, {facts}", visible_text(mode))
}

/// [`asked_as`] of an approval.
pub fn asked_as_of(view: &ApprovalView) -> String {
    let asked = &view.asked_as;
    let agent = match asked.agent {
        AgentKind::Main => "main",
        AgentKind::Subagent => "subagent",
    };
    asked_as(
        agent,
        asked.agent_id.as_deref(),
        asked.mode.as_str(),
        asked.attestation.as_str(),
    )
}

/// What approving a consent card goes on to do (A2), said on the card: the call is decided
/// again once connected, and a write asks for its own approval next.
pub const CONSENT_FOLLOWS: &str = "Approving connects Claude Design for this account, then \
    decides this call again: if it needs its own approval (a write asks for the project write \
    grant), that card comes next for the same call, which keeps waiting.";

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
                @if view.quorum > 1 {
                    span.quorum data-quorum=(view.quorum) { (view.tally()) }
                }
            }
            p.scope { strong { "Scope: " } (shown_prose(view.card.scope())) }
            p.message { (shown_prose(view.card.message())) }
            (details(&view.card))
            dl.who {
                dt { "Agent" } dd { (shown(&view.requested_by)) }
                dt { "Asked as" } dd.asked-as { (asked_as_of(view)) }
                dt { "Client" } dd.client data-client=(view.client.as_str()) { (view.client.describe()) }
                dt { "Session" } dd { (shown(&view.session_id)) }
                dt { "Tool call" } dd {
                    (shown(&summary.tool)) " " (shown(&summary.operation))
                    @if let Some(project) = &summary.project_id { " on " (shown(project)) }
                }
                dt { "Approval" } dd { code { (shown(&view.id)) } }
                @if let Some(by) = &view.approved_by { dt { "Decided by" } dd { (shown(by)) } }
                @if let Some(why) = view.withdrawn_because() { dt { "Withdrawn" } dd { (shown_prose(why)) } }
                @if let Some(bound) = &view.bound {
                    dt { "Bound to" } dd.bound {
                        "call " code { (shown(&bound.call)) } " asked under policies " code { (shown(&bound.policies)) }
                    }
                }
            }
            (votes(view))
        }
    }
}

/// Who voted, which way, when, and their note, oldest first.
fn votes(view: &ApprovalView) -> Markup {
    html! {
        @if !view.votes.is_empty() {
            div.votes {
                h4 { "Votes (" (view.tally()) ")" }
                ul {
                    @for ballot in &view.votes {
                        li data-vote=(ballot.vote.as_str()) {
                            (shown(&ballot.by)) " " (voted(ballot.vote)) " at " (stamp(ballot.at))
                            @if let Some(note) = &ballot.note { ": " q.note { (shown_prose(note)) } }
                        }
                    }
                }
            }
        }
    }
}

/// A vote, in words.
pub fn voted(vote: Vote) -> &'static str {
    match vote {
        Vote::Approve => "approved",
        Vote::Refuse => "refused",
    }
}

/// A vote's time as RFC 3339 (UTC, whole seconds).
fn stamp(at: OffsetDateTime) -> String {
    let at = at.replace_nanosecond(0).unwrap_or(at);
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn details(card: &Approval) -> Markup {
    match card {
        Approval::Consent { operation, .. } => html! {
            p { "The call that asked: " (shown(operation)) }
            p.follows { (CONSENT_FOLLOWS) }
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
