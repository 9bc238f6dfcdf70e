//! cli::test: `askgate test DIR|FILE...` — runs scenario files with `expect` blocks and prints
//! a readable diff per failure and `N passed, N failed`.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_FAILED, EXIT_IO, EXIT_OK, EXIT_POLICIES};
use crate::scenario::suite::{collect, Suite};
use crate::sources::{self, PolicyArgs};

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Scenario files or directories (searched recursively for `.json`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub policies: PolicyArgs,
}

pub fn run(args: &TestArgs) -> u8 {
    let files = match collect(&args.paths) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("cannot read the scenarios: {error}");
            return EXIT_IO;
        }
    };
    let (schema, policy_sources) = match sources::read(&args.policies) {
        Ok(read) => read,
        Err(error) => {
            for problem in &error.problems {
                eprintln!("{problem}");
            }
            return EXIT_POLICIES;
        }
    };
    let mut suite = Suite::new(schema, policy_sources);
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        let result = suite.run_file(file);
        if result.passed() {
            passed += 1;
            continue;
        }
        failed += 1;
        println!("FAIL {} ({})", result.name, result.path.display());
        if let Err(error) = &result.outcome {
            println!("  {error}");
        }
        for mismatch in &result.mismatches {
            println!("  {mismatch}");
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
