//! cli::replay: `askgate replay LOG... [--policies DIR]...` — reads the logs, replays each
//! decision on the set of its kind (the live set the arguments name, or the hook-mode set built
//! from the same directories) and prints the report as a table or JSON, warning when the log
//! was written by other snapshots than the replay's. Exit 0 when nothing changed, 5 when a
//! decision changed, 4 when a log cannot be read or holds no readable record, 3 when the
//! policies do not load. A log whose hash chain does not hold is a warning (the replay still
//! runs: `log verify` says what is wrong). Problem lines of a log that has records are reported but do not
//! change the exit code. The log reading and the report are shared with `diff --replay`.

pub mod logs;
pub mod report;
mod stats;

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};

use super::{EXIT_CHANGED, EXIT_IO, EXIT_OK, EXIT_POLICIES};
use crate::audit::replay::{replay, ReplaySets};
use crate::authz::PolicySnapshot;
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

/// The live set and the hook-mode set the same arguments name.
pub struct LoadedSets {
    pub live: PolicySnapshot,
    pub hook: PolicySnapshot,
}

impl LoadedSets {
    /// Loads both; a set that does not load prints its problems under `label`.
    pub fn load(args: &PolicyArgs, label: &str) -> Option<Self> {
        let loaded = sources::load(args).and_then(|live| Ok((live, sources::load_hook(args)?)));
        match loaded {
            Ok((live, hook)) => Some(Self { live, hook }),
            Err(error) => {
                for problem in &error.problems {
                    eprintln!("{problem}");
                }
                eprintln!("{label} failed to load");
                None
            }
        }
    }

    pub fn sets(&self) -> ReplaySets<'_> {
        ReplaySets {
            live: &self.live,
            hook: &self.hook,
        }
    }
}

pub fn run(args: &ReplayArgs) -> u8 {
    let logs = match logs::read(&args.logs) {
        Ok(logs) => logs,
        Err(message) => {
            eprintln!("{message}");
            return EXIT_IO;
        }
    };
    let Some(loaded) = LoadedSets::load(&args.policies, "policies") else {
        return EXIT_POLICIES;
    };
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let (report, elapsed, broken) = std::thread::scope(|scope| {
        // The chains are checked beside the replay, on the same files.
        let chain = scope.spawn(|| super::log::verify::broken_chain(&args.logs));
        let started = Instant::now();
        let report = replay(&logs, &loaded.sets(), jobs);
        let elapsed = started.elapsed();
        (report, elapsed, chain.join().ok().flatten())
    });
    let mut warnings = report::warnings(&report, &loaded.sets(), &args.logs, &args.policies);
    warnings.extend(broken);
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    match args.format {
        ReportFormat::Json => {
            report::print_json(&report, &loaded.sets(), &warnings, args.only_changes)
        }
        ReportFormat::Table => {
            report::print_table(&report, &loaded.sets(), &warnings, args.only_changes)
        }
    }
    if args.stats {
        stats::print(&logs, &loaded.live, report.records, elapsed, jobs);
    }
    if report.changed > 0 {
        EXIT_CHANGED
    } else {
        EXIT_OK
    }
}

/// The available parallelism.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}
