//! cli::log::verify: `askgate log verify DIR… [--key PUBKEY…]` — checks every replica's chain
//! and checkpoint signatures (`audit::chain::verify`) and prints one line per finding, then one
//! per chain and a verdict. Exit 0: every chain holds (notes may be printed); 1: tampering
//! found; 2: a bad argument (an unreadable or malformed `--key`); 4: a log cannot be read.

use std::path::PathBuf;

use clap::Args;

use super::super::{EXIT_BAD_INPUT, EXIT_FAILED, EXIT_IO, EXIT_OK};
use crate::audit::chain::key::parse_public;
use crate::audit::chain::verify::verify;

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
    let report = match verify(&args.logs, &keys) {
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
