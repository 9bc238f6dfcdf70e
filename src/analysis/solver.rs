//! analysis::solver: starts one `cvc5` process for a whole analysis and wraps Cedar's
//! symbolic compiler around it. The solver's path is `$CVC5` or `cvc5` on `PATH` (the
//! convention of `cedar-policy-symcc`); a solver that cannot be started is
//! `AnalysisError::SolverMissing`, naming `cvc5`.

use cedar_policy_symcc::solver::LocalSolver;
use cedar_policy_symcc::CedarSymCompiler;

use super::AnalysisError;

/// cvc5 arguments: a 60 s limit per query, and the string solver `like` needs on cvc5 1.0.3.
const ARGUMENTS: [&str; 4] = ["--lang", "smt", "--tlimit=60000", "--strings-exp"];

/// The environment variable naming the solver executable.
pub const SOLVER_VARIABLE: &str = "CVC5";

/// One running solver behind the symbolic compiler; queries run one at a time.
pub struct Solver {
    pub(crate) compiler: CedarSymCompiler<LocalSolver>,
}

impl Solver {
    /// Starts `cvc5`. Must run inside a tokio runtime (the solver is a child process).
    pub fn start() -> Result<Self, AnalysisError> {
        let path = std::env::var(SOLVER_VARIABLE).unwrap_or_else(|_| "cvc5".to_string());
        let missing = |message: String| AnalysisError::SolverMissing {
            path: path.clone(),
            message,
        };
        // Probe first: a spawn error from inside the compiler would only say "IO error".
        let probe = std::process::Command::new(&path)
            .arg("--version")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|error| missing(error.to_string()))?;
        if !probe.success() {
            return Err(missing(format!("`--version` exited with {probe}")));
        }
        let mut command = tokio::process::Command::new(&path);
        command.args(ARGUMENTS).kill_on_drop(true);
        let solver =
            LocalSolver::from_command(&mut command).map_err(|error| missing(error.to_string()))?;
        let compiler = CedarSymCompiler::new(solver).map_err(|error| missing(error.to_string()))?;
        Ok(Self { compiler })
    }
}

/// Runs an analysis on a fresh current-thread runtime (the command line is synchronous).
pub fn block_on<T>(
    work: impl std::future::Future<Output = Result<T, AnalysisError>>,
) -> Result<T, AnalysisError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| AnalysisError::Runtime(error.to_string()))?;
    runtime.block_on(work)
}
