//! sources: reads the schema and policy files the command line or the configuration names (or
//! the embedded baseline) and loads them into a snapshot. The only place policies are read from
//! disk (by `serve`, its reloads, the scenario suite and the subcommands); what a policy
//! directory holds is `listing`'s.

pub mod listing;

use std::path::{Path, PathBuf};

use clap::Args;

use crate::authz::baseline;
use crate::authz::{LoadError, LoadProblem, PolicySnapshot, Source};
use listing::PolicyEntry;

#[derive(Debug, Clone, Args, Default)]
pub struct PolicyArgs {
    /// A managed policy directory whose `.cedar` files are added to the baseline (repeatable).
    #[arg(long = "policies", value_name = "DIR")]
    pub policies: Vec<PathBuf>,
    /// Use this directory as the baseline instead of the embedded `policies/`.
    #[arg(long, value_name = "DIR")]
    pub baseline: Option<PathBuf>,
    /// Use this schema file instead of the embedded `schema/askgate.cedarschema`.
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
}

/// The schema and policy sources the arguments name, read from disk where asked.
pub fn read(args: &PolicyArgs) -> Result<(Source, Vec<Source>), LoadError> {
    let schema = match &args.schema {
        Some(path) => read_file(path)?,
        None => baseline::schema_source(),
    };
    let mut sources = match &args.baseline {
        Some(dir) => read_dir(dir)?,
        None => baseline::policy_sources(),
    };
    for dir in &args.policies {
        sources.extend(read_dir(dir)?);
    }
    Ok((schema, sources))
}

pub fn load(args: &PolicyArgs) -> Result<PolicySnapshot, LoadError> {
    let (schema, sources) = read(args)?;
    PolicySnapshot::load(&schema, &sources)
}

/// The hook-mode set for the same arguments: the baseline's shared files
/// ([`baseline::HOOK_SHARED_FILES`], from `--baseline DIR` when given), the embedded hook rules
/// and every managed directory.
pub fn load_hook(args: &PolicyArgs) -> Result<PolicySnapshot, LoadError> {
    let schema = match &args.schema {
        Some(path) => read_file(path)?,
        None => baseline::schema_source(),
    };
    let shared = |source: &Source| {
        Path::new(&source.name)
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| baseline::HOOK_SHARED_FILES.contains(&name))
    };
    let mut sources: Vec<Source> = match &args.baseline {
        Some(dir) => read_dir(dir)?,
        None => baseline::policy_sources(),
    };
    sources.retain(shared);
    sources.extend(baseline::hook_policy_sources());
    for dir in &args.policies {
        sources.extend(read_dir(dir)?);
    }
    PolicySnapshot::load(&schema, &sources)
}

/// The subdirectory of a managed policy directory that holds its approving rules.
pub const APPROVING_DIR: &str = "approving";

/// The approving set for the same arguments (who may answer an approval, issue 35): the
/// embedded `policies/approving/` (from `DIR/approving/` of `--baseline DIR` when that
/// exists) and the `approving/` subdirectory of every managed directory that has one.
pub fn load_approving(args: &PolicyArgs) -> Result<PolicySnapshot, LoadError> {
    let schema = baseline::approving_schema_source();
    let mut sources = match args.baseline.as_ref().map(|dir| dir.join(APPROVING_DIR)) {
        Some(dir) if dir.is_dir() => read_dir(&dir)?,
        _ => baseline::approving_policy_sources(),
    };
    for dir in &args.policies {
        let approving = dir.join(APPROVING_DIR);
        if approving.is_dir() {
            sources.extend(read_dir(&approving)?);
        }
    }
    PolicySnapshot::load(&schema, &sources)
}

/// The `.cedar` files directly in `dir` (through symlinks), sorted by name. An entry that is
/// not a readable policy file (a directory, a dangling or looping symlink) is a problem of the
/// load, with every other problem of the directory (C14).
pub fn read_dir(dir: &Path) -> Result<Vec<Source>, LoadError> {
    let entries = listing::policy_entries(dir).map_err(|error| io_problem(dir, &error))?;
    let mut sources = Vec::new();
    let mut problems = Vec::new();
    for entry in entries {
        let read =
            match &entry {
                PolicyEntry::File { path, .. } => read_file(path),
                PolicyEntry::Problem { path, message } => Err(LoadError::single(
                    LoadProblem::in_file(&path.display().to_string(), None, message.clone()),
                )),
            };
        match read {
            Ok(source) => sources.push(source),
            Err(error) => problems.extend(error.problems),
        }
    }
    if problems.is_empty() {
        Ok(sources)
    } else {
        Err(LoadError { problems })
    }
}

pub fn read_file(path: &Path) -> Result<Source, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|error| io_problem(path, &error))?;
    Ok(Source::new(path.display().to_string(), text))
}

fn io_problem(path: &Path, error: &std::io::Error) -> LoadError {
    LoadError::single(LoadProblem::in_file(
        &path.display().to_string(),
        None,
        format!("cannot read: {error}"),
    ))
}
