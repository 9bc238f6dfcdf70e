//! cli::replay: `askgate replay LOG... [--policies DIR]...` — reads the logs, replays them on
//! the policy set and prints the report as a table or JSON. Exit 0 when nothing changed, 5
//! when a decision changed, 4 when a log cannot be read, 3 when the policies do not load.
//! Problem lines (torn, malformed, ...) are reported but do not change the exit code.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde_json::json;

use super::{EXIT_CHANGED, EXIT_IO, EXIT_OK, EXIT_POLICIES};
use crate::audit::record::Verdict;
use crate::audit::replay::{replay, Change, LogText, ReplayReport};
use crate::audit::{log_files, ReadError};
use crate::sources::{self, PolicyArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Log files, or directories of `decisions-*.jsonl` files.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    #[command(flatten)]
    pub policies: PolicyArgs,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    /// Print only the changed decisions.
    #[arg(long)]
    pub only_changes: bool,
    /// Worker threads (default: the available parallelism).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print throughput (records per second) to stderr at the end.
    #[arg(long)]
    pub stats: bool,
}

pub fn run(args: &ReplayArgs) -> u8 {
    let logs = match read_logs(&args.logs) {
        Ok(logs) => logs,
        Err(error) => {
            eprintln!("{error}");
            return EXIT_IO;
        }
    };
    let snapshot = match sources::load(&args.policies) {
        Ok(snapshot) => snapshot,
        Err(error) => {
            for problem in &error.problems {
                eprintln!("{problem}");
            }
            eprintln!("policies failed to load");
            return EXIT_POLICIES;
        }
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let started = Instant::now();
    let report = replay(&logs, &snapshot, jobs);
    let elapsed = started.elapsed();
    match args.format {
        ReportFormat::Json => print_json(&report, snapshot.hash(), args.only_changes),
        ReportFormat::Table => print_table(&report, snapshot.hash(), args.only_changes),
    }
    if args.stats {
        let seconds = elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        #[allow(clippy::cast_precision_loss)]
        let rate = report.records as f64 / seconds;
        eprintln!(
            "replayed {} records in {:.3}s: {:.0} records/s on {} job(s)",
            report.records, seconds, rate, jobs
        );
        raw_decide_rate(&logs, &snapshot);
    }
    if report.changed > 0 {
        EXIT_CHANGED
    } else {
        EXIT_OK
    }
}

/// Every named log file's bytes; any unreadable one fails the whole replay.
fn read_logs(paths: &[PathBuf]) -> Result<Vec<LogText>, ReadError> {
    log_files(paths)?
        .into_iter()
        .map(|path| {
            std::fs::read(&path)
                .map(|bytes| LogText {
                    file: path.display().to_string(),
                    bytes,
                })
                .map_err(|error| ReadError {
                    path: path.display().to_string(),
                    message: error.to_string(),
                })
        })
        .collect()
}

fn print_json(report: &ReplayReport, snapshot: &str, only_changes: bool) {
    let value = if only_changes {
        json!({ "changes": report.changes })
    } else {
        let problems: serde_json::Map<String, serde_json::Value> = report
            .problem_counts()
            .into_iter()
            .map(|(kind, count)| (kind.as_str().to_string(), json!(count)))
            .collect();
        json!({
            "snapshot": snapshot,
            "records": report.records,
            "decisions": report.decisions,
            "changed": report.changed,
            "problem_counts": problems,
            "problems": report.problems,
            "transitions": report.transitions,
            "changes": report.changes,
        })
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&value).unwrap_or_default()
    );
}

fn print_table(report: &ReplayReport, snapshot: &str, only_changes: bool) {
    if !only_changes {
        print_totals(report, snapshot);
    }
    for change in &report.changes {
        print_change(change);
    }
}

fn print_totals(report: &ReplayReport, snapshot: &str) {
    println!(
        "replayed {} records ({} decisions) against {snapshot}: {} changed",
        report.records, report.decisions, report.changed
    );
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

fn print_change(change: &Change) {
    println!(
        "{} {} → {}  {}  {}/{}  project {}  ({}:{})",
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
}

/// For `--stats`: the same decisions' facts, already decoded, through `decide` alone on one
/// thread — the floor replay is measured against.
fn raw_decide_rate(logs: &[LogText], snapshot: &crate::authz::PolicySnapshot) {
    use crate::audit::reader::{parse_record, split_lines};
    use crate::audit::record::Record;
    let facts: Vec<crate::facts::CallFacts> = logs
        .iter()
        .flat_map(|log| {
            split_lines(&log.bytes)
                .filter(|line| !line.torn)
                .filter_map(|line| parse_record(line.text).ok())
        })
        .filter_map(|record| match record {
            Record::Decision(decision) => decision.facts.to_facts().ok(),
            _ => None,
        })
        .collect();
    let rate = decide_rate(&facts, snapshot, false);
    eprintln!(
        "raw decide on the same {} decisions: {:.0} decisions/s on 1 thread",
        facts.len(),
        rate
    );
    // The same without the answer cache: every answer evaluated by Cedar (on a sample).
    let sample = facts.get(..facts.len().min(COLD_SAMPLE)).unwrap_or(&[]);
    let cold = decide_rate(sample, snapshot, true);
    eprintln!(
        "raw decide with a cold cache on {} of them: {:.0} decisions/s on 1 thread",
        sample.len(),
        cold
    );
}

/// How many decisions the cold-cache rate is measured on (each is a full Cedar evaluation).
const COLD_SAMPLE: usize = 20_000;

/// Decisions per second of `decide` on `facts`, emptying the answer cache first each time if `cold`.
fn decide_rate(
    facts: &[crate::facts::CallFacts],
    snapshot: &crate::authz::PolicySnapshot,
    cold: bool,
) -> f64 {
    let started = Instant::now();
    for call in facts {
        if cold {
            snapshot.cache().clear();
        }
        std::hint::black_box(crate::authz::decide(call, snapshot));
    }
    let seconds = started.elapsed().as_secs_f64().max(f64::MIN_POSITIVE);
    #[allow(clippy::cast_precision_loss)]
    let rate = facts.len() as f64 / seconds;
    rate
}
