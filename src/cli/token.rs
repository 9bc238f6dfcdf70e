//! cli::token: `askgate token new --role agent|approver --principal NAME` — a new bearer token
//! of the strength `serve` asks for (256 random bits, 64 hex characters, from the operating
//! system's generator) and the `callers` entry that configures it, with the variable its user
//! sets. The token is printed only here, for the operator to put in the config file; nothing
//! is written or sent.

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use super::approvals::APPROVER_TOKEN_VARIABLE;
use super::hook::AGENT_TOKEN_VARIABLE;
use super::{EXIT_BAD_INPUT, EXIT_OK};
use crate::server::caller::random_token;

/// The longest principal name.
const PRINCIPAL_CHARS: usize = 128;

#[derive(Debug, Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub action: TokenAction,
}

#[derive(Debug, Subcommand)]
pub enum TokenAction {
    /// Make a new token and print its `callers` entry.
    New(NewTokenArgs),
}

#[derive(Debug, Args)]
pub struct NewTokenArgs {
    /// What the token may do: ask (agent) or decide (approver).
    #[arg(long, value_enum)]
    pub role: TokenRole,
    /// Who it is: the name decisions, approvals and the log give the caller.
    #[arg(long)]
    pub principal: String,
    /// Print only the `callers` entry, as one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TokenRole {
    Agent,
    Approver,
}

impl TokenRole {
    fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Approver => "approver",
        }
    }

    /// The variable the token's user reads it from.
    fn variable(self) -> &'static str {
        match self {
            Self::Agent => AGENT_TOKEN_VARIABLE,
            Self::Approver => APPROVER_TOKEN_VARIABLE,
        }
    }
}

pub fn run(args: &TokenArgs) -> u8 {
    let TokenAction::New(args) = &args.action;
    if let Err(problem) = valid_principal(&args.principal) {
        eprintln!("askgate: {problem}");
        return EXIT_BAD_INPUT;
    }
    let token = random_token();
    // INVARIANT: `random_token` gives 64 characters, past the `MIN_TOKEN_CHARS` (32) `serve`
    // asks for (the unit test below holds it to that).
    let entry = json!({"token": token, "role": args.role.as_str(), "principal": args.principal});
    if args.json {
        println!("{entry}");
        return EXIT_OK;
    }
    println!(
        "# a new {} token for `{}`: it is shown only here, keep it secret",
        args.role.as_str(),
        args.principal
    );
    println!("# add this entry to `callers` in the config file (`serve --config FILE`); once");
    println!("# `callers` is set the demo tokens stop working, so list every agent and approver:");
    println!("{entry}");
    println!("# and give it to its user (the agent's client, or the approver's shell):");
    println!("export {}={token}", args.role.variable());
    EXIT_OK
}

fn valid_principal(principal: &str) -> Result<(), String> {
    let chars = principal.chars().count();
    if principal.trim().is_empty() || chars > PRINCIPAL_CHARS {
        return Err(format!(
            "`--principal` must be 1–{PRINCIPAL_CHARS} characters, not {chars}"
        ));
    }
    if let Some(bad) = principal
        .chars()
        .find(|c| crate::server::present::shown::is_invisible(*c) || c.is_whitespace())
    {
        return Err(format!(
            "`--principal` holds the character U+{:04X}: use visible characters without spaces",
            u32::from(bad)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_token_is_as_strong_as_serve_asks() {
        let token = random_token();
        assert!(token.len() >= 2 * crate::server::config::MIN_TOKEN_CHARS);
        assert!(token.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn a_principal_is_a_short_visible_name() {
        assert!(valid_principal("ci-agent").is_ok());
        for bad in ["", " ", "a b", "a\u{202e}b", &"x".repeat(129)] {
            assert!(valid_principal(bad).is_err(), "{bad:?}");
        }
    }
}
