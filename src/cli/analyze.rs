//! cli::analyze: the `--analyze` report of `askgate validate` — policies that can fail to
//! evaluate for a real call (each with a request that makes it err) and rules no real call
//! reaches. Findings are printed as `file:line: policy `id`: ...` lines and exit 1; exit 4
//! when the solver is missing or failed.

use std::time::Instant;

use super::{EXIT_FAILED, EXIT_IO, EXIT_OK};
use crate::analysis::analyze;
use crate::authz::PolicySnapshot;
use crate::sources::{self, PolicyArgs};

pub fn run(args: &PolicyArgs, snapshot: &PolicySnapshot) -> u8 {
    let started = Instant::now();
    let report = sources::read(args)
        .map_err(|error| {
            format!(
                "the schema cannot be read ({} problem(s))",
                error.problems.len()
            )
        })
        .and_then(|(schema, _)| {
            schema
                .text
                .parse::<cedar_policy::Schema>()
                .map_err(|error| format!("the schema cannot be parsed: {error}"))
        })
        .and_then(|schema| analyze(&schema, snapshot).map_err(|error| error.to_string()));
    let report = match report {
        Ok(report) => report,
        Err(message) => {
            eprintln!("{message}");
            return EXIT_IO;
        }
    };
    for erring in &report.can_error {
        let request = erring
            .request
            .as_ref()
            .and_then(|request| serde_json::to_string(request).ok())
            .unwrap_or_else(|| "(no request recovered)".to_string());
        println!(
            "{}:{}: policy `{}` can fail to evaluate (Cedar skips it and askgate denies the call), e.g. in `{}`: {request}",
            erring.file, erring.line, erring.policy, erring.environment
        );
    }
    for dead in &report.dead {
        println!(
            "{}:{}: policy `{}` never applies: its {} condition holds for no request a call can produce, in any environment (dead rule)",
            dead.file, dead.line, dead.policy, dead.effect
        );
    }
    println!(
        "analyzed {} policies in {} (policy, environment) pairs in {:.2}s: {} can fail to evaluate, {} dead",
        report.policies,
        report.checked,
        started.elapsed().as_secs_f64(),
        report.can_error.len(),
        report.dead.len()
    );
    if report.is_clean() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
