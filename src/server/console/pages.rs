//! server::console::pages: the console's pages as server-rendered HTML (maud). Plain forms do
//! everything (sign in, approve, refuse, sign out) without JavaScript; `console.js` only
//! refreshes the pending list in place. No inline script or style (the CSP forbids them).

use maud::{html, Markup, DOCTYPE};
use time::OffsetDateTime;

use super::session::ConsoleSession;
use crate::server::present::card::card;
use crate::server::present::shown::shown;
use crate::store::approvals::{ApprovalStatus, ApprovalView};

fn layout(title: &str, session: Option<&ConsoleSession>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — askgate" }
                link rel="stylesheet" href="/console/assets/console.css";
                script src="/console/assets/console.js" defer {}
            }
            body {
                header {
                    a.brand href="/console" { "askgate approvals" }
                    @if let Some(session) = session {
                        nav {
                            a href="/console" { "Pending" }
                            a href="/console/history" { "History" }
                            a href="/console/decisions" { "Decisions" }
                            a href="/console/fatigue" { "Fatigue" }
                            span.who { "Signed in as " (shown(&session.principal)) }
                            form method="post" action="/console/sign-out" {
                                input type="hidden" name="csrf" value=(session.csrf);
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The sign-in page: the IdP's button when approvers sign in with it (`idp` names it), and the
/// approver-token form.
pub fn sign_in(csrf: &str, problem: Option<&str>, idp: Option<&str>) -> Markup {
    layout(
        "Sign in",
        None,
        html! {
            h1 { "Sign in" }
            @if let Some(problem) = problem { p.error role="alert" { (shown(problem)) } }
            @if let Some(idp) = idp {
                p.sign-in-idp { a.button href="/console/oidc/start" { "Sign in with " (idp) } }
                p.hint { "Or with an approver token:" }
            }
            form.sign-in method="post" action="/console/sign-in" {
                input type="hidden" name="csrf" value=(csrf);
                label for="token" { "Approver token" }
                input #token type="password" name="token" autocomplete="off" required;
                button type="submit" { "Sign in" }
            }
        },
    )
}

/// The pending approvals, newest first, each with its forms.
pub fn pending(session: &ConsoleSession, views: &[ApprovalView], now: OffsetDateTime) -> Markup {
    layout(
        "Pending approvals",
        Some(session),
        html! {
            h1 { "Pending approvals" }
            noscript { p.hint { "Reload the page to see new approvals." } }
            div #pending data-refresh="/console/fragments/pending" {
                (pending_list(session, views, now))
            }
        },
    )
}

/// The list itself (also served alone for the in-place refresh).
pub fn pending_list(
    session: &ConsoleSession,
    views: &[ApprovalView],
    now: OffsetDateTime,
) -> Markup {
    html! {
        @if views.is_empty() {
            p.empty { "Nothing is waiting for a decision." }
        }
        @for view in views {
            section.approval {
                (card(view, now))
                (decide_forms(session, view))
                a.open href=(format!("/console/approvals/{}", view.id)) { "Open this approval" }
            }
        }
    }
}

fn decide_forms(session: &ConsoleSession, view: &ApprovalView) -> Markup {
    html! {
        div.decide {
            form method="post" action=(format!("/console/approvals/{}/approve", view.id)) {
                input type="hidden" name="csrf" value=(session.csrf);
                label { "Note (optional) " input type="text" name="note" maxlength="500"; }
                button.approve type="submit" { "Approve" }
            }
            form method="post" action=(format!("/console/approvals/{}/refuse", view.id)) {
                input type="hidden" name="csrf" value=(session.csrf);
                label { "Note (optional) " input type="text" name="note" maxlength="500"; }
                button.refuse type="submit" { "Refuse" }
            }
        }
    }
}

/// One approval: its card, its forms while pending, and the outcome once decided.
pub fn approval(
    session: &ConsoleSession,
    view: &ApprovalView,
    now: OffsetDateTime,
    notice: Option<&str>,
) -> Markup {
    layout(
        "Approval",
        Some(session),
        html! {
            h1 { "Approval" }
            @if let Some(notice) = notice { p.notice role="status" { (shown(notice)) } }
            (card(view, now))
            @if view.status == ApprovalStatus::Pending {
                (decide_forms(session, view))
            }
            @if let Some(result) = &view.result {
                h2 { "Result" }
                pre.result { (shown(&result_text(result))) }
            }
        },
    )
}

/// Decided approvals, newest first.
pub fn history(session: &ConsoleSession, views: &[ApprovalView], now: OffsetDateTime) -> Markup {
    layout(
        "History",
        Some(session),
        html! {
            h1 { "Decided approvals" }
            @if views.is_empty() { p.empty { "No approval has been decided yet." } }
            @for view in views {
                section.approval.decided { (card(view, now)) }
            }
        },
    )
}

/// Recent decisions from the log (or why there are none to show).
pub fn decisions(session: &ConsoleSession, body: Result<Markup, &str>) -> Markup {
    layout(
        "Decisions",
        Some(session),
        html! {
            h1 { "Recent decisions" }
            @match body {
                Ok(body) => (body),
                Err(text) => p.empty { (text) },
            }
        },
    )
}

/// Approval fatigue: which asks are approved every time (issue 35 §4).
pub fn fatigue(session: &ConsoleSession, body: Result<Markup, &str>) -> Markup {
    layout(
        "Approval fatigue",
        Some(session),
        html! {
            h1 { "Approval fatigue" }
            @match body {
                Ok(body) => (body),
                Err(text) => p.empty { (text) },
            }
        },
    )
}

/// A page that only says something (an error, a refusal).
/// After a sign-in with the IdP: a page that moves on to the pending approvals by itself.
pub fn signed_in(session: &ConsoleSession) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="refresh" content="0; url=/console";
                title { "Signed in — askgate" }
                link rel="stylesheet" href="/console/assets/console.css";
            }
            body {
                main {
                    h1 { "Signed in" }
                    p { "Signed in as " (shown(&session.principal)) "." }
                    p { a #continue href="/console" { "Continue to the pending approvals" } }
                }
            }
        }
    }
}

pub fn message(session: Option<&ConsoleSession>, title: &str, text: &str) -> Markup {
    layout(
        title,
        session,
        html! {
            h1 { (title) }
            p.error role="alert" { (shown(text)) }
            p { a href="/console" { "Back to the pending approvals" } }
        },
    )
}

fn result_text(result: &serde_json::Value) -> String {
    let texts: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect();
    let error = if result["isError"] == true {
        "error: "
    } else {
        ""
    };
    format!("{error}{}", texts.join("\n"))
}
