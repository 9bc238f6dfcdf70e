//! cli::log: `askgate log tail|show|stats LOG...` — decision logs read as a person would.
//! Lines that are not records are reported on stderr and skipped; an unreadable log exits 4,
//! an unknown decision id (`show`) exits 1, a bad filter exits 2. Several replicas' logs are
//! read as one, merged by decision time. `log verify` checks the logs' chains and signatures
//! (`verify`); the other commands warn on stderr when a chain does not hold.

pub mod verify;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{EXIT_FAILED, EXIT_IO, EXIT_OK};
use crate::audit::query::{self, RecordFilter};
use crate::audit::record::Verdict;
use crate::audit::{read_log, LogLine, ProblemKind, Record};

#[derive(Debug, Args)]
pub struct LogArgs {
    #[command(subcommand)]
    pub command: LogCommand,
}

#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// The last N matching decisions, one line each.
    Tail(TailArgs),
    /// One decision with its approval and outcome records, as pretty JSON.
    Show(ShowArgs),
    /// Counts by tool and operation: decisions and execution outcomes.
    Stats(StatsArgs),
    /// Checks every replica's hash chain and signed checkpoints: exit 0 ok, 1 tampered,
    /// 2 bad --key, 4 unreadable log.
    Verify(verify::VerifyArgs),
}

#[derive(Debug, Clone, Args, Default)]
pub struct FilterArgs {
    #[arg(long)]
    pub session: Option<String>,
    #[arg(long)]
    pub project: Option<String>,
    /// `allow`, `ask` or `deny`.
    #[arg(long, value_parser = parse_verdict)]
    pub decision: Option<Verdict>,
    /// A determining policy id.
    #[arg(long, value_name = "ID")]
    pub policy: Option<String>,
    /// RFC 3339 time; decisions at or after it.
    #[arg(long, value_parser = parse_time)]
    pub since: Option<OffsetDateTime>,
    /// RFC 3339 time; decisions at or before it.
    #[arg(long, value_parser = parse_time)]
    pub until: Option<OffsetDateTime>,
}

#[derive(Debug, Args)]
pub struct TailArgs {
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    #[arg(short = 'n', default_value_t = 20)]
    pub lines: usize,
    #[command(flatten)]
    pub filter: FilterArgs,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    pub decision_id: String,
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
}

pub fn run(args: &LogArgs) -> u8 {
    match &args.command {
        LogCommand::Tail(tail) => with_records(&tail.logs, |records| {
            for record in query::tail(records, &filter(&tail.filter), tail.lines) {
                println!("{}", query::summary_line(record));
            }
            EXIT_OK
        }),
        LogCommand::Show(show) => with_records(&show.logs, |records| show_one(records, show)),
        LogCommand::Verify(verify) => verify::run(verify),
        LogCommand::Stats(stats) => with_records(&stats.logs, |records| {
            print_stats(records, &filter(&stats.filter));
            EXIT_OK
        }),
    }
}

/// Reads every record of `logs` (problems to stderr) and hands them to `then`.
pub(super) fn with_records(logs: &[PathBuf], then: impl FnOnce(&[Record]) -> u8) -> u8 {
    let lines = match read_log(logs) {
        Ok(lines) => lines,
        Err(error) => {
            eprintln!("{error}");
            return EXIT_IO;
        }
    };
    let mut records = Vec::new();
    let mut unreadable = false;
    for line in lines {
        match line {
            LogLine::Record(record) => records.push(record),
            LogLine::Problem(problem) => {
                unreadable |= problem.kind == ProblemKind::Unreadable;
                eprintln!(
                    "{}:{}: {}: {}",
                    problem.file,
                    problem.line_number,
                    problem.kind.as_str(),
                    problem.message
                );
            }
        }
    }
    if unreadable {
        return EXIT_IO;
    }
    if let Some(warning) = verify::broken_chain(logs) {
        eprintln!("warning: {warning}");
    }
    then(&records)
}

fn show_one(records: &[Record], args: &ShowArgs) -> u8 {
    let Some((decision, linked)) = query::show(records, &args.decision_id) else {
        eprintln!("no decision `{}` in the log", args.decision_id);
        return EXIT_FAILED;
    };
    println!(
        "{}",
        serde_json::to_string_pretty(decision).unwrap_or_default()
    );
    for record in linked {
        println!(
            "{}",
            serde_json::to_string_pretty(record).unwrap_or_default()
        );
    }
    EXIT_OK
}

fn print_stats(records: &[Record], filter: &RecordFilter) {
    let counts = query::stats(records, filter);
    println!(
        "{:<14}{:<26}{:>8}{:>8}{:>8}{:>8}{:>8}",
        "tool", "operation", "allow", "ask", "deny", "ok", "error"
    );
    for ((tool, operation), count) in &counts {
        println!(
            "{tool:<14}{operation:<26}{:>8}{:>8}{:>8}{:>8}{:>8}",
            count.allow, count.ask, count.deny, count.ok, count.error
        );
    }
}

fn filter(args: &FilterArgs) -> RecordFilter {
    RecordFilter {
        session: args.session.clone(),
        project: args.project.clone(),
        decision: args.decision,
        policy: args.policy.clone(),
        since: args.since,
        until: args.until,
    }
}

fn parse_verdict(value: &str) -> Result<Verdict, String> {
    Verdict::ALL
        .into_iter()
        .find(|verdict| verdict.as_str() == value)
        .ok_or_else(|| format!("`{value}` is not a decision: use allow, ask or deny"))
}

pub(super) fn parse_time(value: &str) -> Result<OffsetDateTime, String> {
    OffsetDateTime::parse(value, &Rfc3339).map_err(|_| format!("`{value}` is not an RFC 3339 time"))
}
