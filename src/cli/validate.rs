//! cli::validate: `askgate validate` — strict validation of the schema and every policy file,
//! one line per problem (`file:line: policy `id`: message`). `--analyze` then proves, with the
//! solver (`crate::analysis::lint`), which policies can fail to evaluate and which never apply.

use clap::Args;

use super::{EXIT_FAILED, EXIT_OK};
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
    match sources::load(&args.policies) {
        Ok(snapshot) => {
            println!(
                "ok: {} policies valid ({})",
                snapshot.len(),
                snapshot.hash()
            );
            if args.analyze {
                return super::analyze::run(&args.policies, &snapshot);
            }
            EXIT_OK
        }
        Err(error) => {
            for problem in &error.problems {
                eprintln!("{problem}");
            }
            eprintln!("{} problem(s)", error.problems.len());
            EXIT_FAILED
        }
    }
}
