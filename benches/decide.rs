//! benches/decide: the decision benchmark. Times `authz::decide` on four calls (a read, a
//! plan-covered 20-target write, a tokenless write under a grant, a 256-target batch) against
//! three policy sets, each beside the engine floor: one raw Cedar `is_authorized` call on the
//! whole set. Informational only: it never exits non-zero.
//!
//! Each case is timed three ways, every iteration deciding a call gathered beforehand
//! (untimed):
//! - cold (the headline): a new call every iteration (a new project for reads, new paths for
//!   writes) with the snapshot's answer cache emptied first, so every answer is Cedar's;
//! - distinct: a new call every iteration with the cache kept, as real traffic runs (calls
//!   differing only in facts no policy reads share an answer);
//! - repeat: the same call again and again (the cache answers everything it may).
//!
//! Run: `cargo bench --bench decide` (add `-- --quick` or `ASKGATE_BENCH_QUICK=1` for a
//! ~10x shorter smoke run).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::str::FromStr;
use std::time::{Duration, Instant};

use askgate::authz::decision::RequestContext;
use askgate::authz::CallFacts;
use askgate::authz::{baseline, decide, Decision, Outcome, PolicySnapshot, Question, Source};
use askgate::facts::{Environment, ServerGrants, Session};
use askgate::scenario::run::gather;
use askgate::scenario::{Scenario, ScenarioCall, ScenarioPlan, ScenarioState};
use cedar_policy::{Authorizer, Context, Decision as CedarDecision, EntityUid, Request, Schema};
use serde_json::{json, Value};

const NOW: &str = "2026-11-30T10:00:00Z";
const PLAN_EXPIRY: &str = "2026-11-30T10:10:00Z";
const EXTRA_POLICIES: usize = 1_000;

/// How long each measurement runs.
struct Budget {
    warmup: usize,
    max_iterations: usize,
    max_time: Duration,
}

impl Budget {
    fn from_environment() -> Self {
        let quick = std::env::args().any(|argument| argument == "--quick")
            || std::env::var("ASKGATE_BENCH_QUICK").is_ok_and(|value| value == "1");
        if quick {
            Self {
                warmup: 20,
                max_iterations: 2_000,
                max_time: Duration::from_millis(200),
            }
        } else {
            Self {
                warmup: 200,
                max_iterations: 20_000,
                max_time: Duration::from_secs(2),
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Stats {
    median: f64,
    p99: f64,
    samples: usize,
}

/// Times every iteration on its own; dropping the result is part of the iteration.
fn measure<T>(budget: &Budget, mut body: impl FnMut() -> T) -> Stats {
    for _ in 0..budget.warmup {
        black_box(body());
    }
    measure_each(budget, |_| (), |()| body())
}

/// Like `measure` without warm-up, running `before(n)` untimed ahead of the n-th iteration
/// (to make its input, or to empty the cache) and timing `body` on what it made.
fn measure_each<I, T>(
    budget: &Budget,
    mut before: impl FnMut(usize) -> I,
    mut body: impl FnMut(I) -> T,
) -> Stats {
    let mut samples: Vec<Duration> = Vec::with_capacity(budget.max_iterations);
    let started = Instant::now();
    while samples.len() < budget.max_iterations
        && (started.elapsed() < budget.max_time || samples.len() < 10)
    {
        let input = before(samples.len());
        let start = Instant::now();
        black_box(body(input));
        samples.push(start.elapsed());
    }
    samples.sort_unstable();
    let micros = |duration: Duration| duration.as_secs_f64() * 1e6;
    let p99_rank = (samples.len() * 99).div_ceil(100).max(1) - 1;
    Stats {
        median: micros(samples[samples.len() / 2]),
        p99: micros(samples[p99_rank]),
        samples: samples.len(),
    }
}

// ---------------------------------------------------------------------------------------
// Cases: each a `Scenario` built in code and gathered into `CallFacts` once.

struct Case {
    name: &'static str,
    /// The n-th distinct call of this case (0 is the repeated one).
    variant: Box<dyn Fn(usize) -> CallFacts>,
}

fn scenario(state: ScenarioState, operation: &str, arguments: Value) -> Scenario {
    Scenario {
        name: None,
        description: None,
        now: NOW.to_string(),
        session: Session::default(),
        environment: Environment::default(),
        state,
        call: ScenarioCall {
            tool: "ClaudeDesign".to_string(),
            input: json!({"operation": operation, "arguments": arguments}),
        },
        policy_files: Vec::new(),
        expect: None,
    }
}

fn granted_state() -> ScenarioState {
    let mut state = ScenarioState {
        consent: Some(true),
        verified_grants: vec!["p1".to_string()],
        server_grants: ServerGrants {
            available: true,
            projects: ["p1".to_string()].into(),
        },
        ..ScenarioState::default()
    };
    state.project_identity.insert(
        "p1".to_string(),
        json!({"name": "Q3 deck", "sharing": {"scope": "invited"},
               "url": "https://claude.ai/design/p/p1"}),
    );
    state
}

fn paths(count: usize, prefix: &str) -> Vec<String> {
    (0..count)
        .map(|n| format!("{prefix}/page-{n:03}.html"))
        .collect()
}

fn files(paths: &[String]) -> Value {
    Value::Array(
        paths
            .iter()
            .map(|path| json!({"path": path, "data": "<h1>hi</h1>"}))
            .collect(),
    )
}

fn gathered(scenario: &Scenario) -> CallFacts {
    gather(scenario)
        .expect("the benchmark scenario is well formed")
        .expect("the benchmark call passes local validation")
}

fn read(n: usize) -> CallFacts {
    let project = format!("p{n}");
    gathered(&scenario(
        ScenarioState {
            consent: Some(true),
            ..ScenarioState::default()
        },
        "get_project",
        json!({"project_id": project}),
    ))
}

fn plan_write(n: usize) -> CallFacts {
    let planned = paths(20, &format!("site/v{n}"));
    let mut plan_state = granted_state();
    plan_state.verified_grants.clear();
    plan_state.server_grants.projects.clear();
    plan_state.plans.push(ScenarioPlan {
        token: "tok-1".to_string(),
        project_id: "p1".to_string(),
        writes: planned.clone(),
        deletes: Vec::new(),
        expires_at: PLAN_EXPIRY.to_string(),
    });
    gathered(&scenario(
        plan_state,
        "write_files",
        json!({"project_id": "p1", "plan_token": "tok-1", "files": files(&planned)}),
    ))
}

fn tokenless(n: usize, count: usize) -> CallFacts {
    gathered(&scenario(
        granted_state(),
        "write_files",
        json!({"project_id": "p1", "files": files(&paths(count, &format!("assets/v{n}")))}),
    ))
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "read get_project",
            variant: Box::new(read),
        },
        Case {
            name: "plan-covered write (20)",
            variant: Box::new(plan_write),
        },
        Case {
            name: "tokenless write (1), grant",
            variant: Box::new(|n| tokenless(n, 1)),
        },
        Case {
            name: "tokenless batch (256), grant",
            variant: Box::new(|n| tokenless(n, 256)),
        },
    ]
}

// ---------------------------------------------------------------------------------------
// Policy sets.

struct PolicySetCase {
    name: &'static str,
    snapshot: PolicySnapshot,
}

/// 1,000 per-project rules for other projects, pinned in the scope (`resource == …`), in
/// five shapes: forbids and permits, call and target actions, an `@ask`. A bare `action`
/// scope cannot read `context.design`: strict validation refuses it for the target actions.
fn scope_pinned_policies() -> String {
    (0..EXTRA_POLICIES)
        .map(|n| {
            let project = format!("DesignProject::\"other-{n}\"");
            let head = format!("@id(\"managed.other-{n}\")\n");
            let body = match n % 5 {
                0 => format!(
                    "@reason(\"tokenless writes to other-{n} are not allowed\")\n\
                     forbid (principal, action in Action::\"ClaudeDesign\", resource == {project})\n\
                     when {{ context.design.tokenless }};"
                ),
                1 => format!(
                    "@reason(\"reads of other-{n} are allowed once connected\")\n\
                     permit (principal, action == Action::\"get_project\", resource == {project})\n\
                     when {{ context.design.consent == \"granted\" }};"
                ),
                2 => format!(
                    "@ask(\"batch\")\n@reason(\"every write to other-{n} asks\")\n\
                     forbid (principal, action in Action::\"ClaudeDesign\", resource == {project})\n\
                     when {{ !context.design.read_only }}\n\
                     unless {{ context.approvals.contains(\"batch\") }};"
                ),
                3 => format!(
                    "@reason(\"secrets of other-{n} are reserved\")\n\
                     forbid (principal, action in Action::\"DesignTarget\", resource == {project})\n\
                     when {{ context.lowercase like \"secrets/*\" }};"
                ),
                _ => format!(
                    "@reason(\"the main agent may write other-{n} under a grant\")\n\
                     permit (principal == Agent::\"main\", \
                     action in [Action::\"write_files\", Action::\"delete_files\"], \
                     resource == {project})\n\
                     when {{ context.design.grant.verified && !context.design.tokenless }};"
                ),
            };
            format!("{head}{body}\n\n")
        })
        .collect()
}

/// The un-indexable worst case: 1,000 rules on `write_files` whose other-project test is in
/// the condition, so no scope index can leave them out.
fn condition_policies() -> String {
    (0..EXTRA_POLICIES)
        .map(|n| {
            let head = format!("@id(\"managed.cond-other-{n}\")\n");
            let test = format!("context.design.project_id == \"other-{n}\"");
            let body = match n % 3 {
                0 => format!(
                    "@reason(\"writes to other-{n} are not allowed\")\n\
                     forbid (principal, action == Action::\"write_files\", resource)\n\
                     when {{ {test} }};"
                ),
                1 => format!(
                    "@reason(\"verified writes to other-{n} are allowed\")\n\
                     permit (principal, action == Action::\"write_files\", resource)\n\
                     when {{ {test} && context.design.grant.verified }};"
                ),
                _ => format!(
                    "@ask(\"batch\")\n@reason(\"planned writes to other-{n} ask\")\n\
                     forbid (principal, action == Action::\"write_files\", resource)\n\
                     when {{ {test} && !context.design.tokenless }}\n\
                     unless {{ context.approvals.contains(\"batch\") }};"
                ),
            };
            format!("{head}{body}\n\n")
        })
        .collect()
}

fn load(extra: Option<Source>) -> PolicySnapshot {
    let mut sources = baseline::policy_sources();
    sources.extend(extra);
    PolicySnapshot::load(&baseline::schema_source(), &sources)
        .expect("the benchmark policy set loads")
}

fn policy_sets() -> Vec<PolicySetCase> {
    vec![
        PolicySetCase {
            name: "baseline",
            snapshot: load(None),
        },
        PolicySetCase {
            name: "+1,000 scope-pinned",
            snapshot: load(Some(Source::new(
                "managed/other-projects.cedar",
                scope_pinned_policies(),
            ))),
        },
        PolicySetCase {
            name: "+1,000 in condition",
            snapshot: load(Some(Source::new(
                "managed/other-projects-in-condition.cedar",
                condition_policies(),
            ))),
        },
    ]
}

// ---------------------------------------------------------------------------------------
// The engine floor: the case's main ("unapproved") request on the whole set.

fn floor_request(decision: &Decision, schema: &Schema) -> Request {
    let asked = decision
        .requests
        .iter()
        .find(|request| request.question == Question::Unapproved)
        .expect("decide asked the unapproved question");
    let context = match &asked.context {
        RequestContext::Call(context) => Some(context),
        RequestContext::Target(_) => None,
    }
    .expect("the unapproved question carries a call context");
    let uid = |text: &str| EntityUid::from_str(text).expect("a request names valid entities");
    let action = uid(&asked.action);
    let json = serde_json::to_value(context).expect("a call context serializes");
    let context = Context::from_json_value(json, Some((schema, &action)))
        .expect("a call context matches the schema");
    Request::new(
        uid(&asked.principal),
        action,
        uid(&asked.resource),
        context,
        None,
    )
    .expect("the request is well formed")
}

struct Row {
    case: &'static str,
    set: &'static str,
    outcome: Outcome,
    floor_decision: CedarDecision,
    requests: usize,
    /// A new call every iteration, the answer cache emptied first.
    cold: Stats,
    /// A new call every iteration, the cache kept.
    distinct: Stats,
    /// The same call every iteration.
    repeat: Stats,
    floor: Stats,
}

fn run_row(budget: &Budget, case: &Case, set: &PolicySetCase, schema: &Schema) -> Row {
    let snapshot = &set.snapshot;
    let first = (case.variant)(0);
    let decided = decide(&first, snapshot);
    let request = floor_request(&decided, schema);
    let authorizer = Authorizer::new();
    let floor_decision = authorizer
        .is_authorized(&request, snapshot.policies(), snapshot.action_entities())
        .decision();
    // Variants never repeat within a row: each measurement starts past the last one's.
    let mut next = 1;
    let mut fresh = |clear: bool| {
        let n = next;
        next += 1;
        if clear {
            snapshot.cache().clear();
        }
        (case.variant)(n)
    };
    let cold = measure_each(budget, |_| fresh(true), |facts| decide(&facts, snapshot));
    let distinct = measure_each(budget, |_| fresh(false), |facts| decide(&facts, snapshot));
    let repeat = measure(budget, || decide(black_box(&first), snapshot));
    let floor = measure(budget, || {
        authorizer.is_authorized(
            black_box(&request),
            snapshot.policies(),
            snapshot.action_entities(),
        )
    });
    Row {
        case: case.name,
        set: set.name,
        outcome: decided.decision,
        floor_decision,
        requests: decided.requests.len(),
        cold,
        distinct,
        repeat,
        floor,
    }
}

// ---------------------------------------------------------------------------------------
// Report.

fn find<'a>(rows: &'a [Row], case: &str, set: &str) -> Option<&'a Row> {
    rows.iter().find(|row| row.case == case && row.set == set)
}

fn verdict(value: f64, limit: f64) -> &'static str {
    if value <= limit {
        "PASS"
    } else {
        "MISS"
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "| case | policy set | cold median µs | cold p99 µs | distinct median µs | repeat median µs | engine floor median µs | cold / floor |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |",
            row.case,
            row.set,
            row.cold.median,
            row.cold.p99,
            row.distinct.median,
            row.repeat.median,
            row.floor.median,
            row.cold.median / row.floor.median,
        );
    }
    println!();
    println!("outcomes (decide / raw Cedar on the unapproved request), requests, samples:");
    for row in rows {
        let expected = if row.outcome == Outcome::Allow {
            ""
        } else {
            "  <-- expected allow"
        };
        println!(
            "  {} / {}: {} / {:?}, {} requests, {} cold + {} distinct samples, floor p99 {:.1} µs{expected}",
            row.case,
            row.set,
            row.outcome.as_str(),
            row.floor_decision,
            row.requests,
            row.cold.samples,
            row.distinct.samples,
            row.floor.p99,
        );
    }
}

fn print_targets(rows: &[Row], cases: &[Case]) {
    let single = "tokenless write (1), grant";
    let batch = "tokenless batch (256), grant";
    println!();
    println!("targets (cold: every call new, every answer Cedar's):");
    if let Some(row) = find(rows, single, "baseline") {
        let ratio = row.cold.median / row.floor.median;
        println!(
            "  single-target decision / engine floor (baseline): {ratio:.2} (target <= 3) {}",
            verdict(ratio, 3.0)
        );
    }
    for set in ["baseline", "+1,000 scope-pinned", "+1,000 in condition"] {
        if let (Some(one), Some(many)) = (find(rows, single, set), find(rows, batch, set)) {
            let ratio = many.cold.median / one.cold.median;
            println!(
                "  256-batch / single-target decision ({set}): {ratio:.2} (target <= 25) {}",
                verdict(ratio, 25.0)
            );
        }
    }
    for set in ["+1,000 scope-pinned", "+1,000 in condition"] {
        let (limit, worst) = if set == "+1,000 in condition" {
            (f64::INFINITY, " [un-indexable worst case, no target]")
        } else {
            (1.2, " (target <= 1.2)")
        };
        for case in cases {
            if let (Some(base), Some(more)) = (
                find(rows, case.name, "baseline"),
                find(rows, case.name, set),
            ) {
                let ratio = more.cold.median / base.cold.median;
                println!(
                    "  {set} / baseline, {}: {ratio:.2}{worst} {}",
                    case.name,
                    verdict(ratio, limit)
                );
            }
        }
    }
}

fn main() {
    let budget = Budget::from_environment();
    let schema = Schema::from_str(baseline::SCHEMA.1).expect("the baseline schema parses");
    let sets = policy_sets();
    let cases = cases();
    for set in &sets {
        println!("policy set {}: {} policies", set.name, set.snapshot.len());
    }
    // `ASKGATE_BENCH_ONLY=text` keeps the rows whose case or set name holds `text` (profiling).
    let only = std::env::var("ASKGATE_BENCH_ONLY").unwrap_or_default();
    let mut rows = Vec::new();
    for set in &sets {
        for case in &cases {
            if !only.is_empty() && !case.name.contains(&only) && !set.name.contains(&only) {
                continue;
            }
            rows.push(run_row(&budget, case, set, &schema));
        }
    }
    println!();
    print_table(&rows);
    print_targets(&rows, &cases);
}
