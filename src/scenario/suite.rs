//! scenario::suite: runs scenario files with `expect` blocks and reports per-file results —
//! shared by `askgate test` and `cargo test`. Snapshots are loaded once per distinct set of
//! `policy_files`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{run, Mismatch, Scenario, ScenarioOutcome};
use crate::authz::{LoadError, PolicySnapshot, Source};

/// The result of one scenario file.
#[derive(Debug)]
pub struct CaseResult {
    pub path: PathBuf,
    pub name: String,
    pub outcome: Result<ScenarioOutcome, String>,
    pub mismatches: Vec<String>,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.outcome.is_ok() && self.mismatches.is_empty()
    }
}

/// Every `.json` file under `paths` (files as given, directories recursively), sorted.
pub fn collect(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    Ok(files)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// Runs scenarios against `schema` + `sources` (+ each scenario's `policy_files`).
pub struct Suite {
    schema: Source,
    sources: Vec<Source>,
    snapshots: HashMap<Vec<String>, Result<PolicySnapshot, LoadError>>,
}

impl Suite {
    pub fn new(schema: Source, sources: Vec<Source>) -> Self {
        Self {
            schema,
            sources,
            snapshots: HashMap::new(),
        }
    }

    pub fn run_file(&mut self, path: &Path) -> CaseResult {
        let name = path.display().to_string();
        let scenario = match std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read: {error}"))
            .and_then(|text| {
                serde_json::from_str::<Scenario>(&text)
                    .map_err(|error| format!("invalid scenario: {error}"))
            }) {
            Ok(scenario) => scenario,
            Err(error) => {
                return CaseResult {
                    path: path.to_path_buf(),
                    name,
                    outcome: Err(error),
                    mismatches: Vec::new(),
                }
            }
        };
        let name = scenario.name.clone().unwrap_or(name);
        let outcome = self.decide(&scenario);
        let mismatches = match (&outcome, &scenario.expect) {
            (Ok(outcome), Some(expect)) => expect
                .compare(outcome)
                .iter()
                .map(Mismatch::to_string)
                .collect(),
            (Ok(_), None) => vec!["the scenario has no `expect` block".to_string()],
            (Err(_), _) => Vec::new(),
        };
        CaseResult {
            path: path.to_path_buf(),
            name,
            outcome,
            mismatches,
        }
    }

    pub fn decide(&mut self, scenario: &Scenario) -> Result<ScenarioOutcome, String> {
        let snapshot = self.snapshot(&scenario.policy_files)?;
        run(scenario, snapshot).map_err(|error| error.to_string())
    }

    /// How many answers the suite's policy snapshots hold in their caches.
    pub fn cached_answers(&self) -> usize {
        self.snapshots
            .values()
            .filter_map(|snapshot| snapshot.as_ref().ok())
            .map(|snapshot| snapshot.cache().len())
            .sum()
    }

    fn snapshot(&mut self, files: &[String]) -> Result<&PolicySnapshot, String> {
        let key = files.to_vec();
        if !self.snapshots.contains_key(&key) {
            let loaded = self.load(files);
            self.snapshots.insert(key.clone(), loaded);
        }
        match self.snapshots.get(&key) {
            Some(Ok(snapshot)) => Ok(snapshot),
            Some(Err(error)) => Err(error
                .problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")),
            None => Err("snapshot cache lost an entry".to_string()),
        }
    }

    fn load(&self, files: &[String]) -> Result<PolicySnapshot, LoadError> {
        let mut sources = self.sources.clone();
        for file in files {
            sources.push(crate::sources::read_file(Path::new(file))?);
        }
        PolicySnapshot::load(&self.schema, &sources)
    }
}
