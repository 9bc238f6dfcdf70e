//! cli::validate: `askgate validate` — strict validation of the schema and every policy file,
//! one line per problem (`file:line: policy `id`: message`).

use super::sources::{self, PolicyArgs};
use super::{EXIT_FAILED, EXIT_OK};

pub fn run(args: &PolicyArgs) -> u8 {
    match sources::load(args) {
        Ok(snapshot) => {
            println!(
                "ok: {} policies valid ({})",
                snapshot.len(),
                snapshot.hash()
            );
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
