//! cli::log::verify: `askgate log verify DIR… [--key PUBKEY…] [--from T] [--to T]` — checks
//! every replica's chain and checkpoint signatures (`audit::chain::verify`), over the files that
//! hold records of the window when one is given, and prints one line per finding, then one per
//! chain and a verdict. Exit 0: every chain holds (notes may be printed); 1: tampering found;
//! 2: a bad argument (an unreadable or malformed `--key`); 4: a log cannot be read. The other
//! commands that read logs (`log tail|show|stats`, `replay`) say with [`broken_chain`] when
//! a chain does not hold.

use std::path::PathBuf;

use clap::Args;

use super::super::{EXIT_BAD_INPUT, EXIT_FAILED, EXIT_IO, EXIT_OK};
use crate::audit::chain::key::parse_public;
use time::OffsetDateTime;

use crate::audit::chain::verify::{verify_links, verify_within};
use crate::audit::reader::Window;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Log directories (every replica's files) or log files.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// A public key checkpoints may be signed with (64 hex digits, or a file holding them),
    /// as `serve` prints it and `GET /v1/admin/log-key` serves it; repeat for several
    /// replicas. Without one, any valid signature is accepted and its key is printed.
    #[arg(long = "key", value_name = "PUBKEY")]
    pub keys: Vec<String>,
    /// RFC 3339 time: check only the files that hold records at or after it (each chain is
    /// checked whole across the files kept; a chain starting before them is a note).
    #[arg(long, value_parser = super::parse_time, value_name = "TIME")]
    pub from: Option<OffsetDateTime>,
    /// RFC 3339 time: check only the files that hold records at or before it.
    #[arg(long, value_parser = super::parse_time, value_name = "TIME")]
    pub to: Option<OffsetDateTime>,
}

pub fn run(args: &VerifyArgs) -> u8 {
    let mut keys = Vec::new();
    for given in &args.keys {
        match parse_public(given) {
            Ok(key) => keys.push(key),
            Err(error) => {
                eprintln!("--key {error}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    if let (Some(from), Some(to)) = (args.from, args.to) {
        if from > to {
            eprintln!("--from must not be after --to");
            return EXIT_BAD_INPUT;
        }
    }
    let window = Window {
        from: args.from,
        to: args.to,
    };
    let report = match verify_within(&args.logs, &keys, window) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("{error}");
            return EXIT_IO;
        }
    };
    for finding in &report.findings {
        let label = if finding.kind.is_tampering() {
            "TAMPERED"
        } else {
            "note"
        };
        println!(
            "{label} {}: {}: {}",
            finding.kind.as_str(),
            finding.place,
            finding.message
        );
    }
    for chain in &report.chains {
        let signers = if chain.signers.is_empty() {
            "no valid checkpoint".to_string()
        } else {
            format!("signed by {}", chain.signers.join(", "))
        };
        println!(
            "chain {}: {} file(s), {} line(s), {} checkpoint(s) {signers}",
            chain.name, chain.files, chain.lines, chain.checkpoints
        );
    }
    if report.tampered() {
        let count = report
            .findings
            .iter()
            .filter(|finding| finding.kind.is_tampering())
            .count();
        println!("verify: TAMPERED ({count} finding(s))");
        EXIT_FAILED
    } else if keys.is_empty() && report.chains.iter().any(|chain| !chain.signers.is_empty()) {
        println!("verify: ok (signatures checked against the keys the log names: pass --key to pin them)");
        EXIT_OK
    } else {
        println!("verify: ok");
        EXIT_OK
    }
}

/// A warning when a chain of `logs` does not hold (tampering, not mere notes): how many
/// findings, the first one, and the command that says more. `None` when every chain holds or
/// the logs cannot be read (the reading itself reports that).
pub fn broken_chain(logs: &[PathBuf]) -> Option<String> {
    let report = verify_links(logs).ok()?;
    let mut tampering = report
        .findings
        .iter()
        .filter(|finding| finding.kind.is_tampering());
    let first = tampering.next()?;
    let more = tampering.count();
    let more = if more == 0 {
        String::new()
    } else {
        format!(" and {more} more")
    };
    Some(format!(
        "the log's hash chain does not hold: {} at {}: {}{more}; what was read may not be what \
         was written (`askgate log verify` checks every chain and signature)",
        first.kind.as_str(),
        first.place,
        first.message
    ))
}
