//! cli::validate: `askgate validate` — strict validation of the schema and every policy file,
//! one line per problem (`file:line: policy `id`: message`), for the live set and the
//! approving set (who may answer an approval), then each warning (a `@gate` that reads facts
//! known only after the upstream is asked). `--analyze` then proves, with the
//! solver (`crate::analysis::lint`), which policies can fail to evaluate and which never apply.

use clap::Args;

use super::{EXIT_FAILED, EXIT_OK};
use crate::authz::LoadError;
use crate::sources::{self, PolicyArgs};

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub policies: PolicyArgs,
    /// Also prove which policies can fail to evaluate and which never apply (needs `cvc5`).
    #[arg(long)]
    pub analyze: bool,
}

pub fn run(args: &ValidateArgs) -> u8 {
    let snapshot = match sources::load(&args.policies) {
        Ok(snapshot) => snapshot,
        Err(error) => return problems(&error),
    };
    println!(
        "ok: {} policies valid ({})",
        snapshot.len(),
        snapshot.hash()
    );
    // Issue 38 §5: what loads but cannot do what it says is printed, not refused.
    for warning in snapshot.warnings() {
        eprintln!("{warning}");
    }
    // The approving set (who may answer an approval) is loaded by `serve` from the same
    // arguments: an admin's `approving/` file is checked here too, not first at boot.
    match sources::load_approving(&args.policies) {
        Ok(approving) => println!(
            "ok: {} approving policies valid ({})",
            approving.len(),
            approving.hash()
        ),
        Err(error) => return problems(&error),
    }
    if args.analyze {
        return super::analyze::run(&args.policies, &snapshot);
    }
    EXIT_OK
}

fn problems(error: &LoadError) -> u8 {
    for problem in &error.problems {
        eprintln!("{problem}");
    }
    eprintln!("{} problem(s)", error.problems.len());
    EXIT_FAILED
}
