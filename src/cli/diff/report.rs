//! cli::diff::report: the `diff` report as a table or as one JSON object — the findings (one
//! per transition, each with its reproducing scenario), the Cedar-only differences apart, the
//! approving set's half (who may answer an approval), and the replay half (`replay::report` prints its transition table and changes).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::DiffArgs;
use crate::analysis::approving::{ApprovingReport, Direction};
use crate::analysis::render::set;
use crate::analysis::{Category, DiffReport, Finding};
use crate::audit::replay::ReplayReport;
use crate::cli::replay::report::{json_body, kind_counts, print_change, print_transitions};

/// Everything one `diff` run shows.
pub(super) struct Shown<'a> {
    pub args: &'a DiffArgs,
    pub report: &'a DiffReport,
    /// Who may answer an approval, before and after (issue 35).
    pub approving: &'a ApprovingReport,
    pub replayed: Option<&'a ReplayReport>,
    /// Scenario files: the findings', then the Cedar-only requests'.
    pub files: &'a [Option<PathBuf>],
    pub seconds: f64,
}

impl Shown<'_> {
    fn files(&self) -> (&[Option<PathBuf>], &[Option<PathBuf>]) {
        let split = self.report.findings.len().min(self.files.len());
        self.files.split_at(split)
    }

    pub fn print_json(&self) {
        let report = self.report;
        let (finding_files, cedar_files) = self.files();
        let mut value = json!({
            "before": self.args.before.display().to_string(),
            "after": self.args.after.display().to_string(),
            "environments": report.environments,
            "identical": report.identical,
            "queries": report.queries,
            "probes": report.probes,
            "seconds": self.seconds,
            "counts": {
                "newly_allowed": report.count(Category::NewlyAllowed),
                "newly_askable": report.count(Category::NewlyAskable),
                "newly_stricter": report.count(Category::NewlyStricter),
                "cedar_only": report.cedar_only.len(),
            },
            "alike": report.alike,
            "unsettled": report.unsettled,
            "proven": report.unsettled.is_empty() && self.approving.unsettled.is_empty(),
            "approving": self.approving,
            "findings": with_files(&report.findings, finding_files),
            "cedar_only": with_files(&report.cedar_only, cedar_files),
        });
        if let Some(replayed) = self.replayed {
            set(&mut value, "replay", json_body(replayed));
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    }

    pub fn print_table(&self) {
        let (args, report) = (self.args, self.report);
        println!(
            "diff {} → {}: {} environments ({} alike by text, not solved), {} questions and {} probes in {:.2}s",
            args.before.display(),
            args.after.display(),
            report.environments,
            report.identical,
            report.queries,
            report.probes,
            self.seconds
        );
        println!(
            "newly allowed without a human: {}, newly askable: {}, newly stricter: {}, unsettled environments: {}",
            report.count(Category::NewlyAllowed),
            report.count(Category::NewlyAskable),
            report.count(Category::NewlyStricter),
            report.unsettled.len()
        );
        let (finding_files, cedar_files) = self.files();
        for (finding, file) in report.findings.iter().zip(finding_files) {
            self.print_finding(finding, file.as_deref());
        }
        if !report.cedar_only.is_empty() {
            println!(
                "\nCedar requests only ({}): differences of synthesized requests that no call shows; they do not set exit 5",
                report.cedar_only.len()
            );
            for (finding, file) in report.cedar_only.iter().zip(cedar_files) {
                self.print_finding(finding, file.as_deref());
            }
        }
        if report.alike > 0 {
            println!(
                "\n{} proposed requests were decided alike by askgate and asked past",
                report.alike
            );
        }
        if !report.unsettled.is_empty() {
            println!(
                "\nNOT PROVEN: {} environment(s) could not be settled; a change there is neither found nor ruled out",
                report.unsettled.len()
            );
            for unsettled in &report.unsettled {
                println!(
                    "  {}: {}; open: {}",
                    unsettled.environment,
                    unsettled.reason,
                    unsettled.open.join(", ")
                );
            }
        }
        self.print_approving();
        if let Some(replayed) = self.replayed {
            print_replay(replayed);
        }
    }

    /// The approving set's half: who newly may (or no longer may) answer an approval, with
    /// the solver's example of each, and what it could not settle.
    fn print_approving(&self) {
        let approving = self.approving;
        let count = |direction: Direction| {
            (approving.findings.iter())
                .filter(|finding| finding.direction == direction)
                .count()
        };
        println!(
            "\napproving set (who may answer an approval): {} environments ({} alike by text); newly may answer: {}, no longer may: {}, unsettled: {}",
            approving.environments,
            approving.identical,
            count(Direction::Widens),
            count(Direction::Narrows),
            approving.unsettled.len()
        );
        for finding in &approving.findings {
            let (label, counts) = match finding.direction {
                Direction::Widens => ("NEWLY MAY", "counts: exit 5"),
                Direction::Narrows => ("NO LONGER MAY", "stricter: does not count"),
            };
            println!(
                "  [{label} {}] ({counts}) approver {} on approval {}, context {}",
                finding.action,
                person(&finding.entities, &finding.request.principal.id),
                approval(&finding.entities, &finding.request.resource.id),
                finding.request.context
            );
        }
        for unsettled in &approving.unsettled {
            println!(
                "  NOT PROVEN {}: {}; open: who may answer may widen or narrow",
                unsettled.action, unsettled.reason
            );
        }
    }

    fn print_finding(&self, finding: &Finding, file: Option<&Path>) {
        let args = self.args;
        println!(
            "\n[{}] {} {} {}: {} → {}",
            finding.category.as_str(),
            finding.principal_type,
            finding.action,
            finding.resource_type,
            finding.before.label(),
            finding.after.label()
        );
        let request = &finding.request;
        println!(
            "  request: principal {} action Action::\"{}\" resource {} ({} → {})",
            request.principal,
            request.action,
            request.resource,
            finding.request_before.label(),
            finding.request_after.label()
        );
        println!("  context: {}", request.context);
        let rendered = &finding.scenario;
        if let (Some(before), Some(after)) = (&rendered.check_before, &rendered.check_after) {
            let verdict = if finding.reproduces {
                "reproduces"
            } else {
                "does not reproduce"
            };
            println!("  check: before {before}, after {after} ({verdict})");
        }
        if let Some(note) = rendered.note.as_ref().filter(|_| !finding.reproduces) {
            println!("  note: {note}");
        }
        match (file, &rendered.scenario) {
            (Some(path), _) => {
                println!("  scenario: {}", path.display());
                for dir in [&args.before, &args.after] {
                    println!(
                        "    askgate check {} {}",
                        path.display(),
                        args.check_flags(dir)
                    );
                }
            }
            (None, Some(scenario)) => println!("  scenario: {scenario}"),
            (None, None) => {}
        }
    }
}

fn with_files(findings: &[Finding], files: &[Option<PathBuf>]) -> Vec<Value> {
    findings
        .iter()
        .zip(files.iter().chain(std::iter::repeat(&None)))
        .map(|(finding, file)| {
            let mut value = serde_json::to_value(finding).unwrap_or_default();
            let file = file.as_ref().map(|path| path.display().to_string());
            set(&mut value, "scenario_file", json!(file));
            value
        })
        .collect()
}

fn print_replay(report: &ReplayReport) {
    println!(
        "\nreplay on BEFORE and on AFTER: {} records ({} decisions), {} changed: {}; {} set exit 5 (looser or another card)",
        report.records,
        report.decisions,
        report.changed,
        kind_counts(report),
        report.widened()
    );
    print_transitions(report, "BEFORE", "AFTER");
    for change in &report.changes {
        print_change(change);
    }
}

/// An example entity's attributes from Cedar's entity JSON, by type and id.
fn attrs<'a>(entities: &'a Value, kind: &str, id: &str) -> Option<&'a Value> {
    (entities.as_array()?.iter())
        .find(|entity| {
            entity.pointer("/uid/type").and_then(Value::as_str) == Some(kind)
                && entity.pointer("/uid/id").and_then(Value::as_str) == Some(id)
        })
        .and_then(|entity| entity.get("attrs"))
}

/// The example's approver: `Person::"id"` with its groups and email.
fn person(entities: &Value, id: &str) -> String {
    let attrs = attrs(entities, "Person", id).cloned().unwrap_or_default();
    format!("Person::{} {attrs}", Value::String(id.to_string()))
}

/// The example's approval, as its attributes.
fn approval(entities: &Value, id: &str) -> String {
    attrs(entities, "Approval", id)
        .map(ToString::to_string)
        .unwrap_or_else(|| format!("Approval::{}", Value::String(id.to_string())))
}
