//! analysis::diff: what a policy change could ever do, environment by environment. For each
//! request environment whose policies differ, the solver is asked for a request a real call
//! can produce (`wellformed`) on which the two sides answer differently (`outcome`: the
//! tri-state with its approval kind), among the transitions not found yet. Each request it
//! proposes is decided by askgate on both sides (`concrete`) and written as a scenario that is
//! checked on both sides (`render`): a scenario whose check shows a change is a finding, filed
//! under the transition the check shows (one counterexample per transition); a request whose
//! change no scenario shows is listed apart as a Cedar request only. Either way the request
//! is blocked and the solver asked again, a bounded number of times.
//!
//! Nothing is passed that was not settled (issue 38): an environment whose search ended
//! before every transition was found or ruled out (the proposals stopped showing anything new,
//! the solver answered `unknown`, its proposal was no request, the run's time bound ran out)
//! is `unsettled`, with the transitions left open, and the report says so. Before an
//! environment is given up, requests built from the change's own literals are tried (`probe`).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use cedar_policy::Schema;
use serde::Serialize;

use super::answer::{Answer, Category};
use super::block::block;
use super::concrete::{decide_raw, RawRequest};
use super::environments::{environments, reaching, Environment};
use super::expr::{self, Expr};
use super::outcome::outcome;
use super::probe;
use super::render::{render, Rendered};
use super::solver::{each, Expect, Question, Worker};
use super::wellformed::{self, Approvals, Literals};
use super::AnalysisError;
use crate::authz::PolicySnapshot;

/// How many proposed requests per environment may show no new real change before the
/// environment's remaining transitions are concluded alike.
pub const MAX_MISSES: usize = 4;

/// One kind of request a change decides differently, with one example.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub category: Category,
    pub principal_type: String,
    pub action: String,
    pub resource_type: String,
    /// askgate's answers before and after: for a finding, `check`'s on the scenario; for a
    /// Cedar request only, `decide`'s on the synthesized request.
    pub before: Answer,
    pub after: Answer,
    /// The synthesized Cedar request (principal, action, resource, context).
    pub request: RawRequest,
    /// `decide`'s answers to the synthesized request itself.
    pub request_before: Answer,
    pub request_after: Answer,
    /// The scenario's check shows this finding's change (always, for a counted finding).
    pub reproduces: bool,
    #[serde(flatten)]
    pub scenario: Rendered,
}

/// Everything `diff` found, in environment order.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    pub environments: usize,
    /// Changes a real call shows, each with a scenario `check` reproduces.
    pub findings: Vec<Finding>,
    /// Differences of Cedar requests that no scenario shows (none sets exit 5).
    pub cedar_only: Vec<Finding>,
    /// Proposed requests askgate decides alike on both sides (blocked, then asked again).
    pub alike: usize,
    /// Environments whose policies are the same text on both sides (decided alike, not asked).
    pub identical: usize,
    /// Environments whose search ended before every transition was found or ruled out.
    pub unsettled: Vec<Unsettled>,
    /// Questions asked of the solver.
    pub queries: usize,
    /// Requests built from the change's literals and decided (`probe`).
    pub probes: usize,
}

/// An environment `diff` could not settle: why, and the transitions it could neither find
/// nor rule out.
#[derive(Debug, Clone, Serialize)]
pub struct Unsettled {
    pub environment: String,
    pub why: Unsettling,
    /// What the reason means, in a sentence.
    pub reason: String,
    /// The transitions left open (`allow → ask`, ...): a change the policies may make there.
    pub open: Vec<String>,
}

/// Why an environment's search ended unsettled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unsettling {
    /// `MAX_MISSES` proposals in a row showed nothing new.
    Exhausted,
    /// The solver answered `unknown` (its limit a question ran out).
    Unknown,
    /// The solver's model was not a complete request.
    Unexpressed,
    /// The run's time bound ran out first.
    Deadline,
}

impl Unsettling {
    fn reason(self, limits: &Limits) -> String {
        match self {
            Self::Exhausted => format!(
                "the solver's last {MAX_MISSES} proposals were requests no call produces or \
                 askgate decides alike; the transitions left were never ruled out"
            ),
            Self::Unknown => format!(
                "the solver could not answer within its limit of {} s a question \
                 (--question-timeout)",
                limits.question.as_secs_f64()
            ),
            Self::Unexpressed => "the solver's proposal was not a complete request".to_string(),
            Self::Deadline => format!(
                "the run's time bound of {} s ran out first (--timeout)",
                limits.run.as_secs_f64()
            ),
        }
    }
}

/// How long `diff` may spend: a question, and the whole run (checked between questions, so
/// the run may pass it by at most one question).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub question: Duration,
    pub run: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            question: Duration::from_secs(20),
            run: Duration::from_secs(120),
        }
    }
}

impl DiffReport {
    /// Whether any environment was left unsettled.
    pub fn unsettled(&self) -> bool {
        !self.unsettled.is_empty()
    }

    pub fn widens(&self) -> bool {
        self.findings
            .iter()
            .any(|finding| finding.category.widens())
    }

    pub fn count(&self, category: Category) -> usize {
        self.findings
            .iter()
            .filter(|finding| finding.category == category)
            .count()
    }
}

/// The two sides of a change.
pub struct Sides<'a> {
    pub before: &'a PolicySnapshot,
    pub after: &'a PolicySnapshot,
}

/// What the search found in one environment.
#[derive(Default)]
struct Searched {
    findings: Vec<Finding>,
    cedar_only: Vec<Finding>,
    alike: usize,
    unsettled: Option<(Unsettling, Vec<String>)>,
    queries: usize,
    probes: usize,
}

/// Compares `sides` for every request environment of `schema`, environments in parallel,
/// within `limits`.
pub fn diff(
    schema: &Schema,
    sides: &Sides<'_>,
    limits: &Limits,
) -> Result<DiffReport, AnalysisError> {
    let deadline = Instant::now() + limits.run;
    let all = environments(schema);
    let literals = Literals::of(&[sides.before, sides.after]);
    let changed: Vec<&Environment> = all
        .iter()
        .filter(|environment| {
            let texts = |snapshot: &PolicySnapshot| {
                reaching(snapshot.policies(), environment, snapshot.action_entities())
            };
            texts(sides.before) != texts(sides.after)
        })
        .collect();
    let probes = probe::paths(sides.before, sides.after);
    let searched = each(&changed, limits.question, |worker, environment| {
        let searched = search(worker, schema, sides, &literals, environment, deadline)?;
        Ok(probed(searched, environment, sides, &probes))
    })?;
    let mut report = DiffReport {
        environments: all.len(),
        findings: Vec::new(),
        cedar_only: Vec::new(),
        alike: 0,
        identical: all.len() - changed.len(),
        unsettled: Vec::new(),
        queries: 0,
        probes: 0,
    };
    for (environment, searched) in changed.iter().zip(searched) {
        report.findings.extend(searched.findings);
        report.cedar_only.extend(searched.cedar_only);
        report.alike += searched.alike;
        report.queries += searched.queries;
        report.probes += searched.probes;
        if let Some((why, open)) = searched.unsettled {
            report.unsettled.push(Unsettled {
                environment: environment.label(),
                why,
                reason: why.reason(limits),
                open,
            });
        }
    }
    Ok(report)
}

/// A kind of transition: the outcomes before and after (allow 0, ask 1, deny 2), an ask whose
/// approval kind changed being `(1, 1)`. One finding is reported per transition.
type Transition = (u8, u8);

/// A transition as the report names it.
fn transition_label((before, after): Transition) -> String {
    let name = |outcome: u8| match outcome {
        0 => "allow",
        1 => "ask",
        _ => "deny",
    };
    if before == after {
        format!("{} → {} (another approval)", name(before), name(after))
    } else {
        format!("{} → {}", name(before), name(after))
    }
}

fn transition((before, after): (Answer, Answer)) -> Transition {
    let outcome = |answer: Answer| match answer {
        Answer::Allow => 0,
        Answer::Ask(_) => 1,
        Answer::Deny => 2,
    };
    (outcome(before), outcome(after))
}

/// Every pair of different answers an environment can show.
fn pairs(environment: &Environment) -> Vec<(Answer, Answer)> {
    let answers: &[Answer] = if environment.is_target() {
        &[Answer::Allow, Answer::Deny]
    } else {
        &Answer::ALL
    };
    answers
        .iter()
        .flat_map(|before| answers.iter().map(move |after| (*before, *after)))
        .filter(|(before, after)| before != after)
        .collect()
}

/// The question: a well-formed request, not blocked, whose pair of answers is one of a
/// transition still `open`. The pair is a record looked up in a set of records: the solver
/// compares it without arithmetic (a sum of scaled codes, bit-blasted with its overflow check,
/// made every question about 1.6× slower).
fn question(
    environment: &Environment,
    (wellformed, before, after): (&Expr, &Expr, &Expr),
    open: &BTreeSet<Transition>,
    blocked: &[Expr],
) -> Expr {
    let codes = expr::set(
        pairs(environment)
            .into_iter()
            .filter(|pair| open.contains(&transition(*pair)))
            .map(|(b, a)| expr::pair(expr::long(b.code()), expr::long(a.code()))),
    );
    let differ = expr::contains(codes, expr::pair(before.clone(), after.clone()));
    let unblocked = expr::all(blocked.iter().cloned().map(expr::not));
    expr::all([wellformed.clone(), unblocked, differ])
}

/// An environment the search left unsettled, probed with each of `paths` (built into the
/// search's last proposal) until every transition is found; settled when none is left open.
fn probed(
    (mut searched, last): (Searched, Option<RawRequest>),
    environment: &Environment,
    sides: &Sides<'_>,
    paths: &[String],
) -> Searched {
    let Some(last) = last else {
        return searched;
    };
    let Some((why, open)) = searched.unsettled.take() else {
        return searched;
    };
    let mut still: BTreeSet<Transition> = open.iter().filter_map(|label| parse(label)).collect();
    for path in paths {
        if still.is_empty() {
            break;
        }
        let Some(request) = probe::request(environment, &last, path) else {
            break;
        };
        searched.probes += 1;
        examine(&mut searched, &mut still, environment, sides, &request);
    }
    if !still.is_empty() {
        searched.unsettled = Some((why, still.into_iter().map(transition_label).collect()));
    }
    searched
}

/// The transition a label names (`transition_label`'s inverse).
fn parse(label: &str) -> Option<Transition> {
    let outcome = |name: &str| match name {
        "allow" => Some(0),
        "ask" => Some(1),
        "deny" => Some(2),
        _ => None,
    };
    let mut words = label.split(' ');
    let before = outcome(words.next()?)?;
    let _arrow = words.next()?;
    let after = outcome(words.next()?)?;
    Some((before, after))
}

fn search(
    worker: &mut Worker,
    schema: &Schema,
    sides: &Sides<'_>,
    literals: &Literals,
    environment: &Environment,
    deadline: Instant,
) -> Result<(Searched, Option<RawRequest>), AnalysisError> {
    let wellformed = wellformed::condition(environment, literals, Approvals::None)?;
    let before = outcome(sides.before, environment);
    let after = outcome(sides.after, environment);
    let mut open: BTreeSet<Transition> = pairs(environment).into_iter().map(transition).collect();
    let mut blocked = Vec::new();
    let mut misses = 0;
    let mut searched = Searched::default();
    let label = environment.label();
    let mut ended = None;
    let mut last = None;
    while !open.is_empty() {
        if misses >= MAX_MISSES {
            ended = Some(Unsettling::Exhausted);
            break;
        }
        if Instant::now() >= deadline {
            ended = Some(Unsettling::Deadline);
            break;
        }
        let body = question(environment, (&wellformed, &before, &after), &open, &blocked);
        let policy = expr::question("analysis.diff", body)?;
        let question = Question::compile(&policy, environment, schema, Expect::Example)?;
        searched.queries += 1;
        let example = match worker.example(&question, &label) {
            Ok(example) => example,
            Err(AnalysisError::Unknown { .. }) => {
                ended = Some(Unsettling::Unknown);
                break;
            }
            Err(error) => return Err(error),
        };
        // No request shows any open transition: the environment is settled.
        let Some(example) = example else {
            break;
        };
        let Some(request) = RawRequest::of(&example.request) else {
            ended = Some(Unsettling::Unexpressed);
            break;
        };
        let progress = examine(&mut searched, &mut open, environment, sides, &request);
        if !progress {
            misses += 1;
        }
        blocked.push(block(&request)?);
        last = Some(request);
    }
    searched.unsettled = ended.map(|why| (why, open.into_iter().map(transition_label).collect()));
    Ok((searched, last))
}

/// Decides `request` and its scenario on both sides and files it; true when it showed a real
/// change not found before.
fn examine(
    searched: &mut Searched,
    open: &mut BTreeSet<Transition>,
    environment: &Environment,
    sides: &Sides<'_>,
    request: &RawRequest,
) -> bool {
    let target = environment.is_target();
    let raw = (
        decide_raw(request, sides.before, target),
        decide_raw(request, sides.after, target),
    );
    let rendered = render(request, target, sides, raw);
    let finding = |pair: (Answer, Answer), reproduces: bool, rendered: Rendered| {
        Category::of(pair.0, pair.1).map(|category| Finding {
            category,
            principal_type: environment.principal.clone(),
            action: environment.action.clone(),
            resource_type: environment.resource.clone(),
            before: pair.0,
            after: pair.1,
            request: request.clone(),
            request_before: raw.0,
            request_after: raw.1,
            reproduces,
            scenario: rendered,
        })
    };
    if let Some(shown) = rendered.shown.filter(|_| rendered.changes()) {
        // A target's change shows as a change of the call that names it.
        let found = if target {
            transition(raw)
        } else {
            transition(shown)
        };
        if !open.remove(&found) {
            return false;
        }
        searched.findings.extend(finding(shown, true, rendered));
        return true;
    }
    match finding(raw, false, rendered) {
        Some(only) => {
            let known = searched
                .cedar_only
                .iter()
                .any(|seen| transition((seen.before, seen.after)) == transition(raw));
            if !known {
                searched.cedar_only.push(only);
            }
        }
        None => searched.alike += 1,
    }
    false
}
