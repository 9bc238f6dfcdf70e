//! analysis::diff: what a policy change could ever do, environment by environment. For each
//! request environment the solver is asked, per question, for a request one side allows and
//! the other does not (`check_implies` with a counterexample, both directions); each request
//! it proposes is then decided by askgate on both sides (`concrete`) and filed by the real
//! transition: newly allowed without a human (deny/ask → allow), newly askable (deny → ask),
//! newly stricter (allow → ask/deny, ask → deny). One counterexample per finding.

use std::collections::BTreeSet;

use cedar_policy::Schema;
use serde::Serialize;

use super::concrete::{decide_raw, RawRequest};
use super::environments::{compile, environments, reaching, Environment, Question};
use super::render::{render, Rendered};
use super::solver::Solver;
use super::AnalysisError;
use crate::authz::{Outcome, PolicySnapshot};

/// The kind of change a finding shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    NewlyAllowed,
    NewlyAskable,
    NewlyStricter,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NewlyAllowed => "newly allowed without a human",
            Self::NewlyAskable => "newly askable",
            Self::NewlyStricter => "newly stricter",
        }
    }

    /// The category of a transition, `None` when askgate decides both sides alike.
    pub fn of(before: Outcome, after: Outcome) -> Option<Self> {
        use Outcome::{Allow, Ask, Deny};
        match (before, after) {
            (Ask | Deny, Allow) => Some(Self::NewlyAllowed),
            (Deny, Ask) => Some(Self::NewlyAskable),
            (Allow, Ask | Deny) | (Ask, Deny) => Some(Self::NewlyStricter),
            _ => None,
        }
    }

    /// Whether the change widens what an agent may do (the exit-5 categories).
    pub fn widens(self) -> bool {
        self != Self::NewlyStricter
    }
}

/// One kind of request a change decides differently, with one example.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub category: Category,
    pub principal_type: String,
    pub action: String,
    pub resource_type: String,
    /// askgate's decisions of the synthesized request before and after.
    pub before: Outcome,
    pub after: Outcome,
    /// The synthesized Cedar request (principal, action, resource, context).
    pub request: RawRequest,
    #[serde(flatten)]
    pub scenario: Rendered,
}

/// Everything `diff` found, in environment order.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    pub environments: usize,
    pub findings: Vec<Finding>,
    /// Requests the solver proposed that askgate decides alike on both sides (a Cedar-level
    /// difference the tri-state does not show, e.g. a second question only one side asks).
    pub alike: usize,
    /// Environments whose policies are the same text on both sides (decided alike, not asked).
    pub identical: usize,
}

impl DiffReport {
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

/// Compares `sides` for every request environment of `schema`.
pub async fn diff(
    solver: &mut Solver,
    schema: &Schema,
    sides: &Sides<'_>,
) -> Result<DiffReport, AnalysisError> {
    let all = environments(schema);
    let mut report = DiffReport {
        environments: all.len(),
        findings: Vec::new(),
        alike: 0,
        identical: 0,
    };
    for environment in &all {
        if reaching(
            sides.before.policies(),
            environment,
            sides.before.action_entities(),
        ) == reaching(
            sides.after.policies(),
            environment,
            sides.after.action_entities(),
        ) {
            report.identical += 1;
            continue;
        }
        let questions: &[Question] = if environment.is_target() {
            &[Question::Target]
        } else {
            &[Question::Unapproved, Question::Approved]
        };
        let mut seen = BTreeSet::new();
        for question in questions {
            for request in candidates(solver, schema, sides, environment, *question).await? {
                file(&mut report, &mut seen, environment, sides, request);
            }
        }
    }
    Ok(report)
}

/// The solver's requests for one question: one the after side allows and the before side
/// does not, and one the other way round.
async fn candidates(
    solver: &mut Solver,
    schema: &Schema,
    sides: &Sides<'_>,
    environment: &Environment,
    question: Question,
) -> Result<Vec<RawRequest>, AnalysisError> {
    let before = compile(sides.before.policies(), question, environment, schema)?;
    let after = compile(sides.after.policies(), question, environment, schema)?;
    let mut found = Vec::new();
    for (wider, narrower) in [(&after, &before), (&before, &after)] {
        let example = solver
            .compiler
            .check_implies_with_counterexample_opt(wider, narrower)
            .await
            .map_err(|error| AnalysisError::Solver {
                action: environment.label(),
                message: error.to_string(),
            })?;
        found.extend(example.and_then(|env| RawRequest::of(&env.request)));
    }
    Ok(found)
}

/// Decides `request` on both sides and files it under its category, once per category.
fn file(
    report: &mut DiffReport,
    seen: &mut BTreeSet<Category>,
    environment: &Environment,
    sides: &Sides<'_>,
    request: RawRequest,
) {
    let target = environment.is_target();
    let before = decide_raw(&request, sides.before, target);
    let after = decide_raw(&request, sides.after, target);
    let Some(category) = Category::of(before, after) else {
        report.alike += 1;
        return;
    };
    if !seen.insert(category) {
        return;
    }
    let scenario = render(&request, target, sides, category);
    report.findings.push(Finding {
        category,
        principal_type: environment.principal.clone(),
        action: environment.action.clone(),
        resource_type: environment.resource.clone(),
        before,
        after,
        request,
        scenario,
    });
}
