//! analysis::solver: the `cvc5` processes behind Cedar's symbolic compiler. The solver's path
//! is `$CVC5` or `cvc5` on `PATH` (the convention of `cedar-policy-symcc`); a solver that cannot
//! be started is `AnalysisError::SolverMissing`, naming `cvc5`. Work is spread over workers,
//! one thread each. A worker asks a question whose policies read `like` of a solver process
//! started with the string options (`STRINGS`), any other of a plain one, and replaces each
//! process once it has spent `PROCESS_BUDGET` answering (cvc5 is reset between questions).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cedar_policy::{Policy, Schema};
use cedar_policy_core::ast;
use cedar_policy_symcc::err::Error as SymccError;
use cedar_policy_symcc::solver::LocalSolver;
use cedar_policy_symcc::{CedarSymCompiler, CompiledPolicy, CompiledPolicySet, Env};
use tokio::runtime::Runtime;

use super::environments::Environment;
use super::AnalysisError;

/// cvc5 arguments: the string solver `like` needs on cvc5 1.0.3 (each kind adds its limit).
const ARGUMENTS: [&str; 3] = ["--lang", "smt", "--strings-exp"];

/// A plain process's limit per question, unless the caller sets one (`diff
/// --question-timeout`): a question not answered within it is `unknown`.
pub const QUESTION_LIMIT: Duration = Duration::from_secs(60);

/// A `Strings` process's limit per question (or the caller's, when shorter). Its answers come
/// in well under a second or not at all: on `secrets-resolved-path-dropped` (a Projects write)
/// it ran out whatever the limit and the plain process answered in 2 s, so a limit of 10 s made
/// that diff take 12.5 s (debug build) and one of 3 s 5.5 s, the other fixtures unchanged.
const STRINGS_LIMIT: Duration = Duration::from_secs(3);

/// Added for a question that reads `like`: finite model finding for strings (string lengths
/// bounded, the bound raised as needed; a bound is a decision, not an assumption, so an
/// `unsat` stays an `unsat`). Measured on `secrets-pattern-narrowed`'s questions with cvc5
/// 1.0.3: a satisfiable one 2.2–3.6 s without it, 0.25–0.44 s with it. Without `like` it is
/// much slower (the wide fixtures took 23–54 s with it), hence two kinds of process. Its limit
/// is short: a question it cannot answer in time (`unknown`) is asked again of a plain process.
const STRINGS: &str = "--strings-fmf";

/// A question's wall-clock deadline is its process's limit plus this: cvc5's own limit
/// (`--tlimit-per`) does not cover all of its work (on a pattern with hundreds of wildcards it
/// ran for minutes past a limit of 20 s), so the process is killed when the deadline passes.
const GRACE: Duration = Duration::from_secs(2);

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

/// A solver process is replaced by a fresh one once it has spent this long answering. cvc5
/// 1.0.3 slows down across `(reset)`s: on `dont-ask-deleted`'s 44 questions of one worker,
/// the n-th question took about 42 ms + 2.2 ms × n in one process: 4.0 s for all 44, against
/// 2.0 s in fresh processes. A start costs about 12 ms, so a process that answers many small
/// questions (`validate --analyze`) is kept longer than one answering a few large ones.
const PROCESS_BUDGET: Duration = Duration::from_millis(150);

/// Which options a question's solver process runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    /// `STRINGS` added: for a question that reads `like`.
    Strings,
}

/// What a question mostly ends in, which decides the options of the process it is asked of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// An example (`diff`: a request the two sides answer differently): a question that reads
    /// `like` is asked of a `Strings` process.
    Example,
    /// A proof that there is none (`validate --analyze`: a rule that cannot err, that applies):
    /// always a plain process. With `--strings-fmf` the baseline's analysis took 7.6 s, not 3.4.
    Proof,
}

impl Kind {
    fn of(policy: &Policy, expect: Expect) -> Self {
        if expect == Expect::Proof {
            return Self::Plain;
        }
        let condition = AsRef::<ast::Policy>::as_ref(policy).condition();
        let reads_like = condition
            .subexpressions()
            .any(|node| matches!(node.expr_kind(), ast::ExprKind::Like { .. }));
        if reads_like {
            Self::Strings
        } else {
            Self::Plain
        }
    }

    fn of_both(first: &Question, second: &Question) -> Self {
        if first.kind == Self::Strings || second.kind == Self::Strings {
            Self::Strings
        } else {
            Self::Plain
        }
    }
}

/// A policy compiled for one request environment, with the kind of process it is asked of.
pub struct Question {
    compiled: CompiledPolicy,
    kind: Kind,
}

impl Question {
    /// Compiles `policy` for `environment`; an error names the environment.
    pub fn compile(
        policy: &Policy,
        environment: &Environment,
        schema: &Schema,
        expect: Expect,
    ) -> Result<Self, AnalysisError> {
        let compiled =
            CompiledPolicy::compile(policy, &environment.env, schema).map_err(|error| {
                AnalysisError::Compile {
                    action: environment.label(),
                    message: error.to_string(),
                }
            })?;
        Ok(Self {
            compiled,
            kind: Kind::of(policy, expect),
        })
    }
}

/// One solver process and the symbolic compiler over it, with the time it spent answering.
struct Process {
    compiler: CedarSymCompiler<LocalSolver>,
    busy: Duration,
}

/// What a question does with a solver process: it is given the worker's runtime, the process
/// and the question's wall-clock deadline (see `within`).
type Asking<'q, T> =
    dyn Fn(&Runtime, &mut CedarSymCompiler<LocalSolver>, Duration) -> Result<T, Unanswered> + 'q;

/// Runs one question's `future` on `runtime`, for at most `wall`.
fn within<T>(
    runtime: &Runtime,
    wall: Duration,
    future: impl std::future::Future<Output = Result<T, SymccError>>,
) -> Result<T, Unanswered> {
    match runtime.block_on(async { tokio::time::timeout(wall, future).await }) {
        Ok(answer) => answer.map_err(Unanswered::from),
        Err(_) => Err(Unanswered::Stuck),
    }
}

/// One worker: its solver processes, driven from a synchronous caller on the worker's own
/// runtime, each started on its first question and replaced after `PROCESS_BUDGET`.
pub struct Worker {
    runtime: Runtime,
    /// The plain process's limit per question.
    limit: Duration,
    plain: Option<Process>,
    strings: Option<Process>,
}

impl Worker {
    pub fn start(limit: Duration) -> Result<Self, AnalysisError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| AnalysisError::Runtime(error.to_string()))?;
        Ok(Self {
            runtime,
            limit,
            plain: None,
            strings: None,
        })
    }

    /// Asks `question` of the process of `kind`: a fresh one when there is none or this one
    /// has spent its budget.
    fn ask_of<T>(
        &mut self,
        kind: Kind,
        question: &Asking<'_, T>,
    ) -> Result<Result<T, Unanswered>, AnalysisError> {
        let wall = process_limit(kind, self.limit) + GRACE;
        let slot = match kind {
            Kind::Plain => &mut self.plain,
            Kind::Strings => &mut self.strings,
        };
        let process = match slot {
            Some(process) if process.busy < PROCESS_BUDGET => process,
            _ => {
                // The old process is dropped (and killed) before the new one starts.
                *slot = None;
                slot.insert(Process {
                    compiler: spawn(&self.runtime, kind, self.limit)?,
                    busy: Duration::ZERO,
                })
            }
        };
        let started = Instant::now();
        let answer = question(&self.runtime, &mut process.compiler, wall);
        process.busy += started.elapsed();
        if matches!(answer, Err(Unanswered::Stuck)) {
            // Cut off mid-question: the process is in no known state; drop (and kill) it.
            *slot = None;
        }
        Ok(answer)
    }

    /// Asks `question` of a process of `kind`; a `Strings` process's `unknown` (its short
    /// limit ran out) is asked again of a plain one.
    fn ask<T>(
        &mut self,
        kind: Kind,
        label: &str,
        question: impl Fn(
            &Runtime,
            &mut CedarSymCompiler<LocalSolver>,
            Duration,
        ) -> Result<T, Unanswered>,
    ) -> Result<T, AnalysisError> {
        let answer = match self.ask_of(kind, &question)? {
            Err(Unanswered::Unknown | Unanswered::Stuck) if kind == Kind::Strings => {
                self.strings = None;
                self.ask_of(Kind::Plain, &question)?
            }
            answer => answer,
        };
        answer.map_err(|unanswered| match unanswered {
            Unanswered::Unknown | Unanswered::Stuck => AnalysisError::Unknown {
                action: label.to_string(),
                seconds: self.limit.as_secs_f64(),
            },
            Unanswered::Failed(message) => solver_error(label, &message),
        })
    }

    /// A request `question` matches, if there is one.
    pub fn example(
        &mut self,
        question: &Question,
        label: &str,
    ) -> Result<Option<Env>, AnalysisError> {
        let compiled = &question.compiled;
        self.ask(question.kind, label, |runtime, compiler, wall| {
            within(
                runtime,
                wall,
                compiler.check_never_matches_with_counterexample_opt(compiled),
            )
        })
    }

    /// Whether `question` matches no request.
    pub fn never_matches(
        &mut self,
        question: &Question,
        label: &str,
    ) -> Result<bool, AnalysisError> {
        let compiled = &question.compiled;
        self.ask(question.kind, label, |runtime, compiler, wall| {
            within(runtime, wall, compiler.check_never_matches_opt(compiled))
        })
    }

    /// A request on which `question` fails to evaluate, if there is one.
    pub fn erring(
        &mut self,
        question: &Question,
        label: &str,
    ) -> Result<Option<Env>, AnalysisError> {
        let compiled = &question.compiled;
        self.ask(question.kind, label, |runtime, compiler, wall| {
            within(
                runtime,
                wall,
                compiler.check_never_errors_with_counterexample_opt(compiled),
            )
        })
    }

    /// A request `first` matches and `second` does not, if there is one.
    pub fn beyond(
        &mut self,
        first: &Question,
        second: &Question,
        label: &str,
    ) -> Result<Option<Env>, AnalysisError> {
        let (first_compiled, second_compiled) = (&first.compiled, &second.compiled);
        self.ask(
            Kind::of_both(first, second),
            label,
            |runtime, compiler, wall| {
                within(
                    runtime,
                    wall,
                    compiler.check_matches_implies_with_counterexample_opt(
                        first_compiled,
                        second_compiled,
                    ),
                )
            },
        )
    }
}

impl Worker {
    /// A request `allows` allows and `refuses` does not, if there is one (the approving
    /// diff); `reads_like` when a policy of either set reads `like`.
    pub fn allowed_beyond(
        &mut self,
        allows: &CompiledPolicySet,
        refuses: &CompiledPolicySet,
        reads_like: bool,
        label: &str,
    ) -> Result<Option<Env>, AnalysisError> {
        let kind = if reads_like {
            Kind::Strings
        } else {
            Kind::Plain
        };
        self.ask(kind, label, |runtime, compiler, wall| {
            within(
                runtime,
                wall,
                compiler.check_implies_with_counterexample_opt(allows, refuses),
            )
        })
    }
}

/// Whether a policy of `policies` reads `like` (its questions go to a `Strings` process).
pub fn reads_like(policies: &cedar_policy::PolicySet) -> bool {
    policies
        .policies()
        .any(|policy| Kind::of(policy, Expect::Example) == Kind::Strings)
}

/// Why a solver process gave no answer: `unknown` (its limit ran out), no answer by the
/// question's wall-clock deadline, or any other failure.
enum Unanswered {
    Unknown,
    Stuck,
    Failed(String),
}

impl From<SymccError> for Unanswered {
    fn from(error: SymccError) -> Self {
        match error {
            SymccError::SolverUnknown => Self::Unknown,
            other => Self::Failed(other.to_string()),
        }
    }
}

/// A solver process of `kind` and the symbolic compiler over it (the process is a child of
/// the runtime's reactor, killed when the compiler is dropped).
fn spawn(
    runtime: &Runtime,
    kind: Kind,
    limit: Duration,
) -> Result<CedarSymCompiler<LocalSolver>, AnalysisError> {
    let path = solver_path();
    let missing = |message: String| AnalysisError::SolverMissing {
        path: path.clone(),
        message,
    };
    let _entered = runtime.enter();
    let mut command = tokio::process::Command::new(&path);
    command.args(ARGUMENTS).kill_on_drop(true);
    if kind == Kind::Strings {
        command.arg(STRINGS);
    }
    let limit = process_limit(kind, limit);
    command.arg(format!("--tlimit-per={}", limit.as_millis().max(1)));
    let solver = LocalSolver::from_command(&mut command).map_err(|e| missing(e.to_string()))?;
    CedarSymCompiler::new(solver).map_err(|e| missing(e.to_string()))
}

/// A process's limit per question: the caller's, and for a `Strings` process at most
/// `STRINGS_LIMIT`.
fn process_limit(kind: Kind, limit: Duration) -> Duration {
    match kind {
        Kind::Plain => limit,
        Kind::Strings => limit.min(STRINGS_LIMIT),
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
    limit: Duration,
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
                let mut worker = match Worker::start(limit) {
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
