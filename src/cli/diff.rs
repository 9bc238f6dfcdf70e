//! cli::diff: `askgate diff BEFORE AFTER` — proves, for every request environment of the
//! schema, what a policy change newly allows without a human, newly makes askable and newly
//! makes stricter, one finding per transition, each with a scenario file `askgate check`
//! reproduces; differences of Cedar requests no call can produce are listed apart. The
//! approving sets (who may answer an approval) are compared too: someone newly allowed to
//! approve or refuse counts like a newly allowed call, an unsettled question like one.
//! `--replay LOG...` adds those logs decided on BEFORE and on AFTER and the transitions between
//! the two. Exit 0 when nothing is newly allowed or askable (and no replayed decision became
//! looser or changed its card: a stricter one, or one whose deciding rules were only renamed,
//! is shown and does not count) and every environment was settled, 5 when something is, 6 ("not proven") when nothing was
//! found but an environment could not be settled (the solver's `unknown`, a time bound, a
//! search that stopped finding anything new; `--accept-unsettled` makes that 0), 3 when a side
//! does not load, 4 when the solver is missing or failed or a log cannot be read or holds no
//! readable record.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;

mod report;

use super::replay::{default_jobs, logs, LoadedSets, ReportFormat};
use super::{EXIT_CHANGED, EXIT_IO, EXIT_NOT_PROVEN, EXIT_OK, EXIT_POLICIES};
use crate::analysis::approving::{diff_approving, ApprovingReport};
use crate::analysis::diff::{Limits, Sides};
use crate::analysis::{diff, DiffReport, Finding};
use crate::audit::replay::compare;
use crate::authz::PolicySnapshot;
use crate::sources::{self, PolicyArgs};

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The policy directory before the change (layered on the baseline unless `--raw`).
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The policy directory after the change.
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    /// Use this directory as the baseline of both sides instead of the embedded `policies/`.
    #[arg(long, value_name = "DIR", conflicts_with = "raw")]
    pub baseline: Option<PathBuf>,
    /// Compare BEFORE and AFTER as complete policy sets (no baseline).
    #[arg(long)]
    pub raw: bool,
    /// Use this schema file instead of the embedded `schema/askgate.cedarschema`.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,
    /// Write each finding's scenario file into this directory.
    #[arg(long, value_name = "DIR")]
    pub scenarios: Option<PathBuf>,
    /// Also decide these decision logs (files or directories) on BEFORE and on AFTER.
    #[arg(long, value_name = "LOG", num_args = 1..)]
    pub replay: Vec<PathBuf>,
    /// The solver's limit for one question, in seconds; a question it cannot answer within it
    /// leaves its environment unsettled.
    #[arg(long, value_name = "SECONDS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub question_timeout: u64,
    /// The bound of the whole search, in seconds (checked between questions); environments
    /// not settled when it runs out are reported unsettled.
    #[arg(long, value_name = "SECONDS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub timeout: u64,
    /// Exit 0 instead of 6 when environments were left unsettled (they are still reported).
    #[arg(long)]
    pub accept_unsettled: bool,
}

impl DiffArgs {
    /// The policy arguments of one side, as `check` takes them.
    pub fn side(&self, dir: &Path) -> PolicyArgs {
        if self.raw {
            PolicyArgs {
                policies: Vec::new(),
                baseline: Some(dir.to_path_buf()),
                schema: self.schema.clone(),
            }
        } else {
            PolicyArgs {
                policies: vec![dir.to_path_buf()],
                baseline: self.baseline.clone(),
                schema: self.schema.clone(),
            }
        }
    }

    /// `check`'s flags for one side, for the report's reproduction commands.
    pub(crate) fn check_flags(&self, dir: &Path) -> String {
        let side = self.side(dir);
        let mut flags = Vec::new();
        if let Some(baseline) = &side.baseline {
            flags.push(format!("--baseline {}", baseline.display()));
        }
        for policies in &side.policies {
            flags.push(format!("--policies {}", policies.display()));
        }
        if let Some(schema) = &side.schema {
            flags.push(format!("--schema {}", schema.display()));
        }
        flags.join(" ")
    }
}

pub fn run(args: &DiffArgs) -> u8 {
    let before = LoadedSets::load(
        &args.side(&args.before),
        &side_label("BEFORE", &args.before),
    );
    let after = LoadedSets::load(&args.side(&args.after), &side_label("AFTER", &args.after));
    let (Some(before), Some(after)) = (before, after) else {
        return EXIT_POLICIES;
    };
    let approving = (
        load_approving(
            &args.side(&args.before),
            &side_label("BEFORE", &args.before),
        ),
        load_approving(&args.side(&args.after), &side_label("AFTER", &args.after)),
    );
    let (Some(approving_before), Some(approving_after)) = approving else {
        return EXIT_POLICIES;
    };
    let logs = match logs::read(&args.replay) {
        Ok(logs) => logs,
        Err(message) => {
            eprintln!("{message}");
            return EXIT_IO;
        }
    };
    let started = Instant::now();
    let report = match analyze(args, &before.live, &after.live) {
        Ok(report) => report,
        Err(message) => {
            eprintln!("{message}");
            return EXIT_IO;
        }
    };
    let approving = match analyze_approving(args, &approving_before, &approving_after) {
        Ok(report) => report,
        Err(message) => {
            eprintln!("{message}");
            return EXIT_IO;
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let replayed = (!args.replay.is_empty())
        .then(|| compare(&logs, &before.sets(), &after.sets(), default_jobs()));
    let files = match write_scenarios(args, &report) {
        Ok(files) => files,
        Err(message) => {
            eprintln!("{message}");
            return EXIT_IO;
        }
    };
    let shown = report::Shown {
        args,
        report: &report,
        approving: &approving,
        replayed: replayed.as_ref(),
        files: &files,
        seconds,
    };
    match args.format {
        ReportFormat::Json => shown.print_json(),
        ReportFormat::Table => shown.print_table(),
    }
    // Issue 38 §3: a replayed decision counts when a call gets through more easily or its
    // card changed, not when only the deciding rules' names did or it became stricter.
    let changed = replayed
        .as_ref()
        .is_some_and(|replayed| replayed.widened() > 0);
    let widens = report.widens() || approving.widens() || changed;
    let unsettled: Vec<String> = (report.unsettled.iter())
        .map(|unsettled| unsettled.environment.clone())
        .chain(
            (approving.unsettled.iter())
                .map(|unsettled| format!("approving set: {}", unsettled.action)),
        )
        .collect();
    if !unsettled.is_empty() {
        eprintln!(
            "diff: not proven: {} environment(s) could not be settled ({}); {}",
            unsettled.len(),
            unsettled.join(", "),
            if widens {
                "exit 5 for what widens"
            } else if args.accept_unsettled {
                "accepted by --accept-unsettled"
            } else {
                "exit 6 unless --accept-unsettled"
            }
        );
    }
    if widens {
        EXIT_CHANGED
    } else if !unsettled.is_empty() && !args.accept_unsettled {
        EXIT_NOT_PROVEN
    } else {
        EXIT_OK
    }
}

/// One side's approving set (who may answer an approval); its problems printed under `label`.
fn load_approving(args: &PolicyArgs, label: &str) -> Option<PolicySnapshot> {
    match sources::load_approving(args) {
        Ok(approving) => Some(approving),
        Err(error) => {
            for problem in &error.problems {
                eprintln!("{problem}");
            }
            eprintln!("{label}: the approving set failed to load");
            None
        }
    }
}

/// Who may answer an approval, before and after (issue 35): the approving schema's
/// environments, within the same limits as the live set's.
fn analyze_approving(
    args: &DiffArgs,
    before: &PolicySnapshot,
    after: &PolicySnapshot,
) -> Result<ApprovingReport, String> {
    let schema: cedar_policy::Schema = crate::authz::baseline::approving_schema_source()
        .text
        .parse()
        .map_err(|error| format!("the approving schema cannot be parsed: {error}"))?;
    diff_approving(
        &schema,
        before,
        after,
        Duration::from_secs(args.question_timeout),
        Duration::from_secs(args.timeout),
    )
    .map_err(|error| error.to_string())
}

fn side_label(label: &str, dir: &Path) -> String {
    format!("{label} (`{}`)", dir.display())
}

fn analyze(
    args: &DiffArgs,
    before: &PolicySnapshot,
    after: &PolicySnapshot,
) -> Result<DiffReport, String> {
    let (schema_source, _) = sources::read(&args.side(&args.after))
        .map_err(|error| format!("the schema cannot be read: {}", error.problems.len()))?;
    let schema: cedar_policy::Schema = schema_source
        .text
        .parse()
        .map_err(|error| format!("the schema cannot be parsed: {error}"))?;
    let limits = Limits {
        question: Duration::from_secs(args.question_timeout),
        run: Duration::from_secs(args.timeout),
    };
    diff(&schema, &Sides { before, after }, &limits).map_err(|error| error.to_string())
}

/// Each finding's scenario as `NNN-<category>-<action>.json`, each Cedar-only request's as
/// `NNN-cedar-only-<action>.json`; the paths, findings first.
fn write_scenarios(args: &DiffArgs, report: &DiffReport) -> Result<Vec<Option<PathBuf>>, String> {
    let all: Vec<(&Finding, String)> = report
        .findings
        .iter()
        .map(|finding| (finding, format!("{:?}", finding.category).to_lowercase()))
        .chain(
            report
                .cedar_only
                .iter()
                .map(|finding| (finding, "cedar-only".to_string())),
        )
        .collect();
    let Some(dir) = &args.scenarios else {
        return Ok(vec![None; all.len()]);
    };
    std::fs::create_dir_all(dir)
        .map_err(|error| format!("cannot create `{}`: {error}", dir.display()))?;
    let mut files = Vec::new();
    for (index, (finding, slug)) in all.iter().enumerate() {
        let Some(scenario) = &finding.scenario.scenario else {
            files.push(None);
            continue;
        };
        let path = dir.join(format!("{:03}-{slug}-{}.json", index + 1, finding.action));
        let text = serde_json::to_string_pretty(scenario).unwrap_or_default();
        std::fs::write(&path, text + "\n")
            .map_err(|error| format!("cannot write `{}`: {error}", path.display()))?;
        files.push(Some(path));
    }
    Ok(files)
}
