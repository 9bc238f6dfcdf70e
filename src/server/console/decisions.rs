//! server::console::decisions: recent decisions from the decision log, for approvers — filtered
//! by outcome, session, project and policy id, each with its reason, its policies and the
//! Cedar requests re-derived from the logged facts; and approval fatigue (`fatigue_list`). Reads the newest log files only, up to a
//! byte bound, off the request's thread; it never writes.

use std::path::{Path, PathBuf};

use maud::{html, Markup};
use serde::Deserialize;

use crate::audit::fatigue::AskGroup;
use crate::audit::query::{tail, RecordFilter};
use crate::audit::reader::read_file;
use crate::audit::record::{DecisionRecord, Verdict};
use crate::audit::{log_files, LogLine, Record};
use crate::authz::{decide, PolicySnapshot};
use crate::server::present::shown::{shown, shown_dump};

/// The most log bytes one page reads (newest files first).
pub const READ_BYTES: u64 = 32 * 1024 * 1024;
/// The most decisions one page shows.
pub const SHOWN: usize = 50;

/// The page's filters, as the form sends them (empty means any).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DecisionQuery {
    pub outcome: String,
    pub session: String,
    pub project: String,
    pub policy: String,
}

impl DecisionQuery {
    /// The log filter, or which field is not valid.
    pub fn filter(&self) -> Result<RecordFilter, String> {
        let text = |value: &str| Some(value.trim().to_string()).filter(|value| !value.is_empty());
        let decision = match self.outcome.trim() {
            "" => None,
            outcome => Some(
                Verdict::ALL
                    .into_iter()
                    .find(|verdict| verdict.as_str() == outcome)
                    .ok_or_else(|| {
                        format!("`{outcome}` is not an outcome: use allow, ask or deny")
                    })?,
            ),
        };
        Ok(RecordFilter {
            session: text(&self.session),
            project: text(&self.project),
            decision,
            policy: text(&self.policy),
            since: None,
            until: None,
        })
    }
}

/// The newest decisions of the log in `dir` that pass `filter`, newest first.
pub fn recent(dir: &Path, filter: &RecordFilter) -> Result<Vec<DecisionRecord>, String> {
    let records = newest(dir)?;
    Ok(tail(&records, filter, SHOWN)
        .into_iter()
        .rev()
        .cloned()
        .collect())
}

/// The records of the newest log files in `dir`, up to `READ_BYTES`, in log order.
pub fn newest(dir: &Path) -> Result<Vec<Record>, String> {
    let files = log_files(&[dir.to_path_buf()]).map_err(|error| error.to_string())?;
    let mut chosen: Vec<PathBuf> = Vec::new();
    let mut bytes = 0u64;
    for file in files.into_iter().rev() {
        bytes = bytes.saturating_add(std::fs::metadata(&file).map_or(0, |meta| meta.len()));
        chosen.push(file);
        if bytes >= READ_BYTES {
            break;
        }
    }
    Ok(chosen
        .iter()
        .rev()
        .flat_map(|file| read_file(file))
        .filter_map(|line| match line {
            LogLine::Record(record) => Some(record),
            LogLine::Problem(_) => None,
        })
        .collect())
}

/// Approval fatigue (issue 35 §4): each kind of ask in the newest log files, how it ended,
/// who approved it, and the suggestion for one approved every time (at least `min` times).
pub fn fatigue_list(groups: &[AskGroup], min: usize) -> Markup {
    html! {
        p { "From the newest decision log files: each kind of ask, how it ended and who approved it. "
            "A kind approved every time (at least " (min) " approvals, none refused) says what would stop it asking. "
            "The same from the command line: " code { "askgate approvals stats LOG" } "." }
        @if groups.is_empty() { p.empty { "No ask in the log." } }
        @for group in groups {
            section.approval.fatigue data-operation=(group.asked.operation) data-every-time=(group.approved_every_time(min)) {
                div.card-head {
                    span.kind { (shown(&group.asked.card)) }
                    span.status {
                        (shown(&group.asked.tool)) " " (shown(&group.asked.operation))
                        @if let Some(project) = &group.asked.project { " on " (shown(project)) }
                    }
                }
                dl.who {
                    dt { "Asks" } dd.counts {
                        (group.asks) " asked: " (group.approved) " approved, " (group.refused) " refused, "
                        (group.unanswered) " unanswered, " (group.open) " open"
                    }
                    dt { "Approved by" } dd { (shown(&group.approvers_line())) }
                    dt { "Asked by policies" } dd { code { (shown(&group.asked.policies.join(", "))) } }
                    dt { "Between" } dd { (shown(&group.first)) " and " (shown(&group.last)) }
                }
                @if let Some(suggestion) = &group.suggestion { p.suggestion { (shown(suggestion)) } }
            }
        }
    }
}

/// The filter form and the decisions.
pub fn list(
    query: &DecisionQuery,
    records: &[DecisionRecord],
    snapshot: &PolicySnapshot,
) -> Markup {
    html! {
        form.filters method="get" action="/console/decisions" {
            label { "Outcome " select name="outcome" {
                @for value in ["", "allow", "ask", "deny"] {
                    option value=(value) selected[query.outcome == value] { (if value.is_empty() { "any" } else { value }) }
                }
            } }
            label { "Session " input type="text" name="session" value=(query.session); }
            label { "Project " input type="text" name="project" value=(query.project); }
            label { "Policy id " input type="text" name="policy" value=(query.policy); }
            button type="submit" { "Filter" }
        }
        @if records.is_empty() { p.empty { "No decision matches." } }
        @for record in records { (one(record, snapshot)) }
    }
}

fn one(record: &DecisionRecord, snapshot: &PolicySnapshot) -> Markup {
    let requests = record
        .facts
        .to_facts()
        .map(|facts| decide(&facts, snapshot).requests)
        .ok()
        .and_then(|requests| serde_json::to_string_pretty(&requests).ok())
        .unwrap_or_else(|| "the logged facts cannot be read again".to_string());
    html! {
        section.approval.decision data-decision=(record.id) {
            div.card-head {
                span.kind { (record.decision.as_str()) }
                span.status { (shown(&record.tool)) " " (shown(&record.operation)) }
                span.left { (shown(&record.time)) }
            }
            p.message { (shown(&record.reason)) }
            dl.who {
                dt { "Policies" } dd { code { (shown(&record.policies.join(", "))) } }
                dt { "Session" } dd { (shown(&record.session)) }
                dt { "Agent" } dd { (shown(&record.agent)) }
                @if let Some(project) = &record.project { dt { "Project" } dd { (shown(project)) } }
                @if !record.targets.is_empty() { dt { "Targets" } dd { (shown(&record.targets.join(", "))) } }
                dt { "Decision" } dd { code { (shown(&record.id)) } }
            }
            details {
                summary { "Cedar requests (from the logged facts)" }
                // The dump quotes agent input (paths, ids): badged like every untrusted text.
                pre.result { (shown_dump(&requests)) }
            }
        }
    }
}
