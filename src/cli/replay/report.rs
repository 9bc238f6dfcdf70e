//! cli::replay::report: a replay report as a person reads it (totals, which snapshots wrote
//! the log and which decide it now, problems, the transition table, each change) or as one
//! JSON object, and the warning when the log was written by other snapshots than the
//! replay's. The transition table and the changes are printed here for `diff --replay` too.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::analysis::render::set;
use crate::audit::record::{PolicySetV1, Verdict};
use crate::audit::replay::{Change, ChangeKind, ReplayReport, ReplaySets};
use crate::server::present::shown::visible_text;
use crate::sources::{self, PolicyArgs};

pub fn print_json(
    report: &ReplayReport,
    sets: &ReplaySets<'_>,
    warnings: &[String],
    only_changes: bool,
) {
    let value = if only_changes {
        json!({ "changes": report.changes })
    } else {
        let mut value = json_body(report);
        set(&mut value, "snapshot", json!(sets.live.hash()));
        let replayed_on = json!({ "live": sets.live.hash(), "hook": sets.hook.hash() });
        set(&mut value, "replayed_on", replayed_on);
        set(&mut value, "warnings", json!(warnings));
        value
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    );
}

/// The report's totals, problems, transitions and changes as JSON.
pub fn json_body(report: &ReplayReport) -> Value {
    let problems: serde_json::Map<String, Value> = report
        .problem_counts()
        .into_iter()
        .map(|(kind, count)| (kind.as_str().to_string(), json!(count)))
        .collect();
    json!({
        "records": report.records,
        "decisions": report.decisions,
        "changed": report.changed,
        "kinds": report.kinds,
        "widened": report.widened(),
        "logged": report.logged,
        "problem_counts": problems,
        "problems": report.problems,
        "transitions": report.transitions,
        "changes": report.changes,
    })
}

pub fn print_table(
    report: &ReplayReport,
    sets: &ReplaySets<'_>,
    warnings: &[String],
    only_changes: bool,
) {
    if !only_changes {
        println!(
            "replayed {} records ({} decisions): {} changed ({})",
            report.records,
            report.decisions,
            report.changed,
            kind_counts(report)
        );
        let logged: Vec<String> = report
            .logged
            .iter()
            .map(|logged| {
                format!(
                    "{} {} ({} decisions)",
                    logged.set.as_str(),
                    logged.snapshot,
                    logged.decisions
                )
            })
            .collect();
        let logged = if logged.is_empty() {
            "-".to_string()
        } else {
            logged.join(", ")
        };
        println!("logged by:   {logged}");
        println!(
            "replayed on: live {}, hook {}",
            sets.live.hash(),
            sets.hook.hash()
        );
        for warning in warnings {
            println!("warning: {warning}");
        }
        print_problems(report);
        print_transitions(report, "logged", "replayed");
    }
    for change in &report.changes {
        print_change(change);
    }
}

fn print_problems(report: &ReplayReport) {
    let counts: Vec<String> = report
        .problem_counts()
        .into_iter()
        .map(|(kind, count)| format!("{count} {}", kind.as_str()))
        .collect();
    if counts.is_empty() {
        println!("problems: none");
    } else {
        println!("problems: {}", counts.join(", "));
    }
    for problem in &report.problems {
        println!(
            "  {}:{}: {}: {} `{}`",
            problem.file,
            problem.line_number,
            problem.kind.as_str(),
            problem.message,
            problem.text_prefix
        );
    }
}

/// The transition table: how many decisions went from each outcome (rows) to each (columns).
pub fn print_transitions(report: &ReplayReport, rows: &str, columns: &str) {
    println!("transitions (rows: {rows}, columns: {columns})");
    println!("  {:<8}{:>10}{:>10}{:>10}", "", "allow", "ask", "deny");
    for from in Verdict::ALL {
        let cells: Vec<String> = Verdict::ALL
            .iter()
            .map(|to| format!("{:>10}", report.transition(from, *to)))
            .collect();
        println!("  {:<8}{}", from.as_str(), cells.concat());
    }
}

/// How many changes of each kind: `1 looser, 0 card, 2 stricter, 4 renamed`.
pub fn kind_counts(report: &ReplayReport) -> String {
    ChangeKind::ALL
        .iter()
        .map(|kind| format!("{} {}", report.count(*kind), kind.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One changed decision: how it changed, its outcomes, where it is, and both sides' policies
/// and reasons.
pub fn print_change(change: &Change) {
    println!(
        "[{}] {} {} → {}  {}  {}/{}  project {}  ({}:{})",
        change.kind.as_str(),
        change.id,
        change.old.decision.as_str(),
        change.new.decision.as_str(),
        change.time,
        change.tool,
        change.operation,
        change.project.as_deref().unwrap_or("-"),
        change.file,
        change.line_number
    );
    for (label, side) in [("old", &change.old), ("new", &change.new)] {
        let approval = side.approval.map_or("-", |kind| kind.as_str());
        println!(
            "  {label}: {} approval {approval} policies [{}]: {}",
            side.decision.as_str(),
            side.policies.join(", "),
            side.reason
        );
    }
    for answer in &change.answers {
        let note = answer
            .note
            .as_deref()
            .map(|note| format!(": {}", visible_text(note)))
            .unwrap_or_default();
        println!(
            "  answered: {} by {} at {}{note}",
            answer.action.as_str(),
            visible_text(&answer.by),
            answer.time
        );
    }
}

/// One warning per logged snapshot that is not the one this replay decides its set on, with
/// the command that replays on the logged set when it can be named.
pub fn warnings(
    report: &ReplayReport,
    sets: &ReplaySets<'_>,
    logs: &[PathBuf],
    args: &PolicyArgs,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for logged in &report.logged {
        let replaying = sets.of(logged.set).hash();
        if logged.snapshot == replaying {
            continue;
        }
        warnings.push(format!(
            "{} decisions were logged by the {} set {}, but this replay decides them on {replaying}: \
             their changes may be the difference between the two sets; {}",
            logged.decisions,
            logged.set.as_str(),
            logged.snapshot,
            reproduce(logged.set, &logged.snapshot, logs, args)
        ));
    }
    warnings
}

/// The command that replays on the logged set: the shipped policies alone when they are it,
/// else the same command with the directories `serve` was given.
fn reproduce(set: PolicySetV1, snapshot: &str, logs: &[PathBuf], args: &PolicyArgs) -> String {
    let logs: Vec<String> = logs
        .iter()
        .map(|path| quoted(&path.display().to_string()))
        .collect();
    let logs = logs.join(" ");
    let shipped = PolicyArgs {
        schema: args.schema.clone(),
        ..PolicyArgs::default()
    };
    let load = match set {
        PolicySetV1::Live => sources::load,
        PolicySetV1::Hook => sources::load_hook,
    };
    let shipped_hash = load(&shipped)
        .ok()
        .map(|snapshot| snapshot.hash().to_string());
    let schema = args
        .schema
        .as_ref()
        .map(|path| format!(" --schema {}", quoted(&path.display().to_string())))
        .unwrap_or_default();
    if shipped_hash.as_deref() == Some(snapshot) {
        return format!("the shipped policies alone wrote them: `askgate replay {logs}{schema}`");
    }
    format!(
        "to replay on the set that wrote them, name the directories `serve` ran with: \
         `askgate replay {logs} --policies DIR...{schema}` (`askgate validate --policies DIR...` prints a set's hash)"
    )
}

/// `text` as one shell word.
fn quoted(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@%,".contains(c));
    if plain && !text.is_empty() {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
