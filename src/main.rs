//! The `askgate` binary: parses the command line and runs one subcommand.

use std::process::ExitCode;

use clap::Parser;

// Decisions allocate many small short-lived values on every worker thread; mimalloc keeps
// that cheap under concurrency (glibc malloc showed up at the top of the serve profile).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = askgate::cli::Cli::parse();
    ExitCode::from(askgate::cli::run(cli))
}
