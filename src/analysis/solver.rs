//! analysis::solver: the `cvc5` processes behind Cedar's symbolic compiler. The solver's path
//! is `$CVC5` or `cvc5` on `PATH` (the convention of `cedar-policy-symcc`); a solver that cannot
//! be started is `AnalysisError::SolverMissing`, naming `cvc5`. Work is spread over workers,
//! one thread each with its own solver process, started once and reused for every query of
//! that worker (cvc5 is reset between queries, not restarted).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cedar_policy_symcc::solver::LocalSolver;
use cedar_policy_symcc::{CedarSymCompiler, CompiledPolicy, Env};

use super::AnalysisError;

/// cvc5 arguments: a 60 s limit per query, and the string solver `like` needs on cvc5 1.0.3.
const ARGUMENTS: [&str; 4] = ["--lang", "smt", "--tlimit-per=60000", "--strings-exp"];

/// The environment variable naming the solver executable.
pub const SOLVER_VARIABLE: &str = "CVC5";

/// At most this many workers (solver processes) for one analysis.
const MAX_JOBS: usize = 4;

/// A worker's stack: the symbolic compiler and Cedar's validator recurse on expression depth.
const WORKER_STACK: usize = 64 << 20;

fn solver_path() -> String {
    std::env::var(SOLVER_VARIABLE).unwrap_or_else(|_| "cvc5".to_string())
}

/// Checks that the solver can be started at all (`--version`), before any work is spread.
pub fn probe() -> Result<(), AnalysisError> {
    let path = solver_path();
    // A spawn error from inside the compiler would only say "IO error".
    let status = std::process::Command::new(&path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|error| AnalysisError::SolverMissing {
            path: path.clone(),
            message: error.to_string(),
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(AnalysisError::SolverMissing {
            path,
            message: format!("`--version` exited with {status}"),
        })
    }
}

/// One worker: a solver process behind the symbolic compiler, driven from a synchronous
/// caller on the worker's own runtime.
pub struct Worker {
    runtime: tokio::runtime::Runtime,
    compiler: CedarSymCompiler<LocalSolver>,
}

impl Worker {
    pub fn start() -> Result<Self, AnalysisError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| AnalysisError::Runtime(error.to_string()))?;
        let path = solver_path();
        let missing = |message: String| AnalysisError::SolverMissing {
            path: path.clone(),
            message,
        };
        // The solver is a child process of the runtime's reactor.
        let _entered = runtime.enter();
        let mut command = tokio::process::Command::new(&path);
        command.args(ARGUMENTS).kill_on_drop(true);
        let solver = LocalSolver::from_command(&mut command).map_err(|e| missing(e.to_string()))?;
        let compiler = CedarSymCompiler::new(solver).map_err(|e| missing(e.to_string()))?;
        drop(_entered);
        Ok(Self { runtime, compiler })
    }

    /// A request `policy` matches, if there is one.
    pub fn example(
        &mut self,
        policy: &CompiledPolicy,
        label: &str,
    ) -> Result<Option<Env>, AnalysisError> {
        let compiler = &mut self.compiler;
        self.runtime
            .block_on(compiler.check_never_matches_with_counterexample_opt(policy))
            .map_err(|error| solver_error(label, &error))
    }

    /// Whether `policy` matches no request.
    pub fn never_matches(
        &mut self,
        policy: &CompiledPolicy,
        label: &str,
    ) -> Result<bool, AnalysisError> {
        let compiler = &mut self.compiler;
        self.runtime
            .block_on(compiler.check_never_matches_opt(policy))
            .map_err(|error| solver_error(label, &error))
    }

    /// A request on which `policy` fails to evaluate, if there is one.
    pub fn erring(
        &mut self,
        policy: &CompiledPolicy,
        label: &str,
    ) -> Result<Option<Env>, AnalysisError> {
        let compiler = &mut self.compiler;
        self.runtime
            .block_on(compiler.check_never_errors_with_counterexample_opt(policy))
            .map_err(|error| solver_error(label, &error))
    }

    /// A request `first` matches and `second` does not, if there is one.
    pub fn beyond(
        &mut self,
        first: &CompiledPolicy,
        second: &CompiledPolicy,
        label: &str,
    ) -> Result<Option<Env>, AnalysisError> {
        let compiler = &mut self.compiler;
        self.runtime
            .block_on(compiler.check_matches_implies_with_counterexample_opt(first, second))
            .map_err(|error| solver_error(label, &error))
    }
}

fn solver_error(label: &str, error: &impl std::fmt::Display) -> AnalysisError {
    AnalysisError::Solver {
        action: label.to_string(),
        message: error.to_string(),
    }
}

/// How many workers to use for `items` pieces of work.
pub fn jobs(items: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    cores.min(MAX_JOBS).min(items).max(1)
}

/// Runs `work` on every item, spread over `jobs(items.len())` workers; results in item order.
/// The first error stops the analysis (it is reported; no partial report is shown).
pub fn each<I: Sync, T: Send>(
    items: &[I],
    work: impl Fn(&mut Worker, &I) -> Result<T, AnalysisError> + Sync,
) -> Result<Vec<T>, AnalysisError> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    probe()?;
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<T>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let failure: Mutex<Option<AnalysisError>> = Mutex::new(None);
    let fail = |error: AnalysisError| {
        if let Ok(mut failure) = failure.lock() {
            failure.get_or_insert(error);
        }
    };
    let failed = || failure.lock().map_or(true, |failure| failure.is_some());
    std::thread::scope(|scope| {
        for _ in 0..jobs(items.len()) {
            let worker = std::thread::Builder::new().stack_size(WORKER_STACK);
            let spawned = worker.spawn_scoped(scope, || {
                let mut worker = match Worker::start() {
                    Ok(worker) => worker,
                    Err(error) => return fail(error),
                };
                while !failed() {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    match work(&mut worker, item) {
                        Ok(value) => {
                            if let Some(slot) = done
                                .lock()
                                .ok()
                                .as_mut()
                                .and_then(|done| done.get_mut(index))
                            {
                                *slot = Some(value);
                            }
                        }
                        Err(error) => fail(error),
                    }
                }
            });
            if let Err(error) = spawned {
                fail(AnalysisError::Runtime(error.to_string()));
            }
        }
    });
    if let Some(error) = failure.into_inner().ok().flatten() {
        return Err(error);
    }
    let done = done.into_inner().unwrap_or_default();
    let count = done.len();
    let results: Vec<T> = done.into_iter().flatten().collect();
    if results.len() == count {
        Ok(results)
    } else {
        Err(AnalysisError::Runtime(
            "a worker stopped unexpectedly".to_string(),
        ))
    }
}
