//! analysis: what a policy set could ever decide, proved by Cedar's symbolic compiler
//! (`cedar-policy-symcc`) and the `cvc5` SMT solver — `askgate diff` and
//! `askgate validate --analyze`. Async and spawns a solver process, so it lives apart from
//! the decision core (`authz` stays pure and synchronous); every counterexample it reports
//! is re-decided by the real `decide` before it is shown.
//!
//! Map: `solver` (starting `cvc5`, the one place the solver is named), `environments` (the
//! schema's request environments and the guard policies of the two questions), `wellformed`
//! (guards confining the solver to requests askgate can build), `diff` (what
//! one policy change newly allows, makes askable or makes stricter), `concrete` (a
//! synthesized Cedar request decided the way `decide` would), `render` (a counterexample as a
//! scenario file, checked against both sides), `lint` (policies that can error, dead rules).

pub mod concrete;
pub mod diff;
pub mod environments;
pub mod lint;
pub mod render;
pub mod solver;
pub mod wellformed;

pub use diff::{diff, Category, DiffReport, Finding};
pub use lint::{analyze, LintReport};
pub use solver::Solver;

/// Why an analysis could not run. Every variant ends the command with exit 4: an analysis
/// that did not run never reports "nothing changed".
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("the SMT solver `cvc5` could not be started (`{path}`: {message}): install it (`apt-get install cvc5`) or set `CVC5` to its path")]
    SolverMissing { path: String, message: String },
    #[error("the SMT solver `cvc5` failed on `{action}`: {message}")]
    Solver { action: String, message: String },
    #[error("cannot compile the policies for `{action}` symbolically: {message}")]
    Compile { action: String, message: String },
    #[error("the schema cannot be analyzed: {0}")]
    Schema(String),
    #[error("cannot start the analysis runtime: {0}")]
    Runtime(String),
}
