//! cli::diff::report: the `diff` report as a table or as one JSON object.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::DiffArgs;
use crate::analysis::render::set;
use crate::analysis::{Category, DiffReport, Finding};
use crate::audit::record::Verdict;
use crate::audit::replay::ReplayReport;

pub(super) fn print_json(
    args: &DiffArgs,
    report: &DiffReport,
    replayed: Option<&ReplayReport>,
    files: &[Option<PathBuf>],
    seconds: f64,
) {
    let findings: Vec<serde_json::Value> = report
        .findings
        .iter()
        .zip(files)
        .map(|(finding, file)| {
            let mut value = serde_json::to_value(finding).unwrap_or_default();
            set(
                &mut value,
                "scenario_file",
                json!(file.as_ref().map(|path| path.display().to_string())),
            );
            value
        })
        .collect();
    let mut value = json!({
        "before": args.before.display().to_string(),
        "after": args.after.display().to_string(),
        "environments": report.environments,
        "identical": report.identical,
        "seconds": seconds,
        "counts": {
            "newly_allowed": report.count(Category::NewlyAllowed),
            "newly_askable": report.count(Category::NewlyAskable),
            "newly_stricter": report.count(Category::NewlyStricter),
        },
        "alike": report.alike,
        "findings": findings,
    });
    if let Some(replayed) = replayed {
        set(
            &mut value,
            "replay",
            json!({
                "records": replayed.records,
                "decisions": replayed.decisions,
                "changed": replayed.changed,
                "transitions": replayed.transitions,
                "changes": replayed.changes,
            }),
        );
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    );
}

pub(super) fn print_table(
    args: &DiffArgs,
    report: &DiffReport,
    replayed: Option<&ReplayReport>,
    files: &[Option<PathBuf>],
    seconds: f64,
) {
    println!(
        "diff {} → {}: {} environments ({} alike by text, not solved) in {seconds:.2}s",
        args.before.display(),
        args.after.display(),
        report.environments,
        report.identical
    );
    println!(
        "newly allowed without a human: {}, newly askable: {}, newly stricter: {}",
        report.count(Category::NewlyAllowed),
        report.count(Category::NewlyAskable),
        report.count(Category::NewlyStricter)
    );
    for (finding, file) in report.findings.iter().zip(files) {
        print_finding(args, finding, file.as_deref());
    }
    if let Some(replayed) = replayed {
        print_replay(replayed);
    }
}

fn print_finding(args: &DiffArgs, finding: &Finding, file: Option<&Path>) {
    println!(
        "\n[{}] {} {} {}: {} → {}",
        finding.category.as_str(),
        finding.principal_type,
        finding.action,
        finding.resource_type,
        finding.before.as_str(),
        finding.after.as_str()
    );
    let request = &finding.request;
    println!(
        "  request: principal {} action Action::\"{}\" resource {}",
        request.principal, request.action, request.resource
    );
    println!("  context: {}", request.context);
    let rendered = &finding.scenario;
    if let (Some(before), Some(after)) = (&rendered.check_before, &rendered.check_after) {
        let verdict = if rendered.reproduces {
            "reproduces"
        } else {
            "does not reproduce"
        };
        println!("  check: before {before}, after {after} ({verdict})");
    }
    if let Some(note) = &rendered.note {
        println!("  note: {note}");
    }
    match (file, &rendered.scenario) {
        (Some(path), _) => {
            println!("  scenario: {}", path.display());
            println!(
                "    askgate check {} {}",
                path.display(),
                args.check_flags(&args.before)
            );
            println!(
                "    askgate check {} {}",
                path.display(),
                args.check_flags(&args.after)
            );
        }
        (None, Some(scenario)) => println!("  scenario: {scenario}"),
        (None, None) => {}
    }
}

fn print_replay(report: &ReplayReport) {
    println!(
        "\nreplay against AFTER: {} records ({} decisions), {} changed",
        report.records, report.decisions, report.changed
    );
    println!("transitions (rows: logged, columns: replayed)");
    println!("  {:<8}{:>10}{:>10}{:>10}", "", "allow", "ask", "deny");
    for from in Verdict::ALL {
        let cells: Vec<String> = Verdict::ALL
            .iter()
            .map(|to| format!("{:>10}", report.transition(from, *to)))
            .collect();
        println!("  {:<8}{}", from.as_str(), cells.concat());
    }
}
