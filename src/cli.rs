//! cli: the `askgate` command line. One file per subcommand; each is a thin adapter that reads
//! files, calls the library and prints. Exit codes are documented in the README. Every
//! `println!` and `eprintln!` below is [`print`]'s: a closed standard output (`askgate … |
//! head`) ends the command quietly with 141 instead of a panic.

#[macro_use]
pub mod print;

pub mod analyze;
pub mod approvals;
pub mod check;
pub mod connect;
pub mod diff;
pub mod hook;
pub mod log;
pub mod replay;
pub mod sandbox;
pub mod serve;
pub mod test;
pub mod token;
pub mod validate;

use clap::{Parser, Subcommand};

/// Success.
pub const EXIT_OK: u8 = 0;
/// Tests failed, or policies have problems (`validate`).
pub const EXIT_FAILED: u8 = 1;
/// The input (scenario or call) is invalid.
pub const EXIT_BAD_INPUT: u8 = 2;
/// The policy set could not be loaded.
pub const EXIT_POLICIES: u8 = 3;
/// A file could not be read.
pub const EXIT_IO: u8 = 4;
/// `replay`: at least one decision changed.
pub const EXIT_CHANGED: u8 = 5;
/// `diff`: not proven — an environment could not be settled (and nothing was found that
/// widens); a CI gate fails on it unless `--accept-unsettled` is given.
pub const EXIT_NOT_PROVEN: u8 = 6;

#[derive(Debug, Parser)]
#[command(
    name = "askgate",
    version,
    about = "Cedar permission service for AI agents on claude.ai Design and Projects"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decide one scenario (a JSON file, or `-` for stdin) and print the decision as JSON.
    Check(check::CheckArgs),
    /// Validate the schema and policies strictly; report file, line and message per problem.
    Validate(validate::ValidateArgs),
    /// Run scenario files that carry an `expect` block; prints `N passed, N failed`.
    Test(test::TestArgs),
    /// Run the HTTP service (on embedded defaults: shipped policies, in-process sandbox).
    Serve(serve::ServeArgs),
    /// The approver's command line against a running service.
    Approvals(approvals::ApprovalsArgs),
    /// Answer an agent client's hook from the running service (fails closed: exit 2 blocks),
    /// or install that hook into the client's settings.
    Hook(hook::HookArgs),
    /// Connect an agent client to askgate in one step (`claude-code`: its MCP server and its
    /// hook; no token is written).
    Connect(connect::ConnectArgs),
    /// Make a caller token of the right strength and print its `callers` entry.
    Token(token::TokenArgs),
    /// Re-decide logged decisions against a policy set and report what changes.
    Replay(replay::ReplayArgs),
    /// Prove what a policy change newly allows, makes askable or makes stricter (needs `cvc5`).
    Diff(Box<diff::DiffArgs>),
    /// Read decision logs: `tail`, `show`, `stats`.
    Log(log::LogArgs),
    /// Run the upstream sandbox (a fake claude.ai for Design and Projects) on loopback.
    Sandbox(sandbox::SandboxArgs),
}

pub fn run(cli: Cli) -> u8 {
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Test(args) => test::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Approvals(args) => approvals::run(&args),
        Command::Hook(args) => hook::run(&args),
        Command::Connect(args) => connect::run(&args),
        Command::Token(args) => token::run(&args),
        Command::Sandbox(args) => sandbox::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Log(args) => log::run(&args),
        Command::Diff(args) => diff::run(&args),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
