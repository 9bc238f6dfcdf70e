//! The `askgate` binary: parses the command line and runs one subcommand.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = askgate::cli::Cli::parse();
    ExitCode::from(askgate::cli::run(cli))
}
