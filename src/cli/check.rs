//! cli::check: `askgate check [FILE|-]` — decides one scenario and prints the decision as one
//! JSON object; bad input prints `{"error": {"message", "field"}}` and exits 2.

use std::io::Read;
use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::{EXIT_BAD_INPUT, EXIT_IO, EXIT_OK, EXIT_POLICIES};
use crate::scenario::{self, Scenario, ScenarioOutcome};
use crate::sources::{self, PolicyArgs};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The scenario file; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub policies: PolicyArgs,
}

pub fn run(args: &CheckArgs) -> u8 {
    let text = match read_input(args.file.as_ref()) {
        Ok(text) => text,
        Err(error) => {
            print_error(&format!("cannot read the scenario: {error}"), "input");
            return EXIT_IO;
        }
    };
    let scenario: Scenario = match serde_json::from_str(&text) {
        Ok(scenario) => scenario,
        Err(error) => {
            print_error(&format!("invalid scenario: {error}"), "scenario");
            return EXIT_BAD_INPUT;
        }
    };
    let mut policy_args = args.policies.clone();
    let snapshot = match load_with_files(&mut policy_args, &scenario) {
        Ok(snapshot) => snapshot,
        Err(error) => {
            let problems: Vec<String> = error.problems.iter().map(ToString::to_string).collect();
            println!(
                "{}",
                json!({"error": {"message": "policies failed to load", "field": "policies", "problems": problems}})
            );
            return EXIT_POLICIES;
        }
    };
    match scenario::run(&scenario, &snapshot) {
        Ok(ScenarioOutcome::Decided(decision)) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&decision).unwrap_or_default()
            );
            EXIT_OK
        }
        Ok(ScenarioOutcome::Refused(error)) => {
            print_error(&error.message, &format!("call.input.{}", error.field));
            EXIT_BAD_INPUT
        }
        Err(error) => {
            print_error(&error.to_string(), error.field());
            EXIT_BAD_INPUT
        }
    }
}

/// Loads the snapshot for a scenario: the command line's policies plus its `policy_files`.
pub fn load_with_files(
    args: &mut PolicyArgs,
    scenario: &Scenario,
) -> Result<crate::authz::PolicySnapshot, crate::authz::LoadError> {
    let (schema, mut policy_sources) = sources::read(args)?;
    for file in &scenario.policy_files {
        policy_sources.push(sources::read_file(std::path::Path::new(file))?);
    }
    crate::authz::PolicySnapshot::load(&schema, &policy_sources)
}

fn read_input(file: Option<&PathBuf>) -> std::io::Result<String> {
    match file {
        Some(path) if path.as_os_str() != "-" => std::fs::read_to_string(path),
        _ => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            Ok(text)
        }
    }
}

fn print_error(message: &str, field: &str) {
    println!("{}", json!({"error": {"message": message, "field": field}}));
}
