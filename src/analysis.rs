//! analysis: what a policy set could ever decide, proved by Cedar's symbolic compiler
//! (`cedar-policy-symcc`) and the `cvc5` SMT solver — `askgate diff` and
//! `askgate validate --analyze`. Spawns solver processes, so it lives apart from the decision
//! core (`authz` stays pure and synchronous); every counterexample it reports is decided by the
//! real `decide` and checked as a scenario before it is shown.
//!
//! Map: `solver` (the `cvc5` workers, the one place the solver is named), `environments` (the
//! schema's request environments, the policies reaching each), `expr` (Cedar expressions in
//! the JSON policy format), `outcome` (a set's tri-state answer as one expression; `approved`:
//! the second question read on the first question's request; `answer`: the answers and kinds
//! of change), `wellformed` (the requests real calls produce), `diff` (what one policy change
//! does, environment by environment; `block`: a request ruled out when asking again;
//! `approving`: the same for the approving set, who may answer an approval),
//! `concrete` (a synthesized request decided the way `decide` would), `render` (a
//! counterexample as a scenario file, checked on both sides), `lint` (policies that can err,
//! dead rules).

pub mod answer;
pub mod approved;
pub mod approving;
pub mod block;
pub mod concrete;
pub mod diff;
pub mod environments;
pub mod expr;
pub mod lint;
pub mod outcome;
pub mod probe;
pub mod render;
pub mod solver;
pub mod wellformed;

pub use answer::{Answer, Category};
pub use diff::{diff, DiffReport, Finding};
pub use lint::{analyze, LintReport};

/// Why an analysis could not run. Every variant ends the command with exit 4: an analysis
/// that did not run never reports "nothing changed".
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("the SMT solver `cvc5` could not be started (`{path}`: {message}): install it (`apt-get install cvc5`) or set `CVC5` to its path")]
    SolverMissing { path: String, message: String },
    #[error("the SMT solver `cvc5` failed on `{action}`: {message}")]
    Solver { action: String, message: String },
    #[error("the SMT solver `cvc5` could not settle `{action}` within its limit of {seconds} s a question (unknown)")]
    Unknown { action: String, seconds: f64 },
    #[error("cannot compile the policies for `{action}` symbolically: {message}")]
    Compile { action: String, message: String },
    #[error("the schema cannot be analyzed: {0}")]
    Schema(String),
    #[error("cannot start the analysis runtime: {0}")]
    Runtime(String),
}
