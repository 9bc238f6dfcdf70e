//! analysis::lint: `validate --analyze` — per policy, whether it can fail to evaluate for a
//! request a real call produces (Cedar skips an erroring policy; askgate then denies the call,
//! so such a rule silently turns into a deny), with that request, and whether it applies to
//! any such request (a rule that applies to none is dead: a mode name with a typo, an upper
//! case literal compared with a lowercased path, a method that is not its action). "A real
//! call" is `wellformed`'s condition, the one `diff` uses. Policies are analyzed in parallel.

use std::collections::BTreeMap;

use cedar_policy::{Policy, Schema};
use serde::Serialize;

use super::concrete::RawRequest;
use super::environments::{environments, reaches, Environment};
use super::expr::{self, Expr};
use super::solver::{each, Expect, Question, Worker, QUESTION_LIMIT};
use super::wellformed::{self, Approvals, Literals};
use super::AnalysisError;
use crate::authz::PolicySnapshot;

/// A policy that can fail to evaluate, with one request that makes it err.
#[derive(Debug, Clone, Serialize)]
pub struct ErringPolicy {
    pub policy: String,
    pub file: String,
    pub line: usize,
    pub environment: String,
    pub request: Option<RawRequest>,
}

/// A policy that applies to no request a real call produces, in any environment.
#[derive(Debug, Clone, Serialize)]
pub struct DeadRule {
    pub policy: String,
    pub file: String,
    pub line: usize,
    pub effect: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LintReport {
    pub policies: usize,
    /// (policy, environment) pairs proved.
    pub checked: usize,
    pub can_error: Vec<ErringPolicy>,
    pub dead: Vec<DeadRule>,
}

impl LintReport {
    pub fn is_clean(&self) -> bool {
        self.can_error.is_empty() && self.dead.is_empty()
    }
}

/// What was found for one policy.
struct Linted {
    checked: usize,
    erring: Option<ErringPolicy>,
    dead: Option<DeadRule>,
}

/// Analyzes every policy of `snapshot` in every environment its action scope reaches.
pub fn analyze(schema: &Schema, snapshot: &PolicySnapshot) -> Result<LintReport, AnalysisError> {
    let all = environments(schema);
    let literals = Literals::of(&[snapshot]);
    let mut wellformed = BTreeMap::new();
    for (index, environment) in all.iter().enumerate() {
        wellformed.insert(
            index,
            wellformed::condition(environment, &literals, Approvals::Any)?,
        );
    }
    let mut policies: Vec<&Policy> = snapshot.policies().policies().collect();
    policies.sort_by_key(|policy| policy.id().to_string());
    let linted = each(&policies, QUESTION_LIMIT, |worker, policy| {
        let reached: Vec<(&Environment, &Expr)> = all
            .iter()
            .enumerate()
            .filter(|(_, environment)| reaches(policy, environment, snapshot.action_entities()))
            .filter_map(|(index, environment)| Some((environment, wellformed.get(&index)?)))
            .collect();
        lint(worker, schema, snapshot, policy, &reached)
    })?;
    let mut report = LintReport {
        policies: policies.len(),
        ..LintReport::default()
    };
    for found in linted {
        report.checked += found.checked;
        report.can_error.extend(found.erring);
        report.dead.extend(found.dead);
    }
    Ok(report)
}

fn lint(
    worker: &mut Worker,
    schema: &Schema,
    snapshot: &PolicySnapshot,
    policy: &Policy,
    reached: &[(&Environment, &Expr)],
) -> Result<Linted, AnalysisError> {
    let Some(meta) = snapshot.meta(policy.id()) else {
        return Ok(Linted {
            checked: 0,
            erring: None,
            dead: None,
        });
    };
    let holds = expr::holds(policy);
    let mut linted = Linted {
        checked: 0,
        erring: None,
        dead: None,
    };
    let mut applies = false;
    for (environment, wellformed) in reached {
        linted.checked += 1;
        if linted.erring.is_none() {
            if let Some(request) = erring(worker, schema, policy, &holds, environment, wellformed)?
            {
                linted.erring = Some(ErringPolicy {
                    policy: meta.id.clone(),
                    file: meta.file.clone(),
                    line: meta.line,
                    environment: environment.label(),
                    request,
                });
            }
        }
        if !applies {
            let question = compile(
                &expr::and((*wellformed).clone(), holds.clone()),
                environment,
                schema,
            )?;
            applies = !worker.never_matches(&question, &environment.label())?;
        }
        if applies && linted.erring.is_some() {
            break;
        }
    }
    if !applies {
        linted.dead = Some(DeadRule {
            policy: meta.id.clone(),
            file: meta.file.clone(),
            line: meta.line,
            effect: format!("{:?}", meta.effect).to_lowercase(),
        });
    }
    Ok(linted)
}

/// A real call's request on which the policy fails to evaluate: first whether any request
/// makes it err (cheap), then whether a well-formed one does (`wellformed` holds and the
/// policy's condition, or its negation, does not evaluate).
fn erring(
    worker: &mut Worker,
    schema: &Schema,
    policy: &Policy,
    holds: &Expr,
    environment: &Environment,
    wellformed: &Expr,
) -> Result<Option<Option<RawRequest>>, AnalysisError> {
    let label = environment.label();
    let alone = Question::compile(policy, environment, schema, Expect::Proof)?;
    if worker.erring(&alone, &label)?.is_none() {
        return Ok(None);
    }
    let real = compile(wellformed, environment, schema)?;
    let evaluates = expr::and(
        wellformed.clone(),
        expr::or(holds.clone(), expr::not(holds.clone())),
    );
    let evaluates = compile(&evaluates, environment, schema)?;
    Ok(worker
        .beyond(&real, &evaluates, &label)?
        .map(|example| RawRequest::of(&example.request)))
}

fn compile(
    body: &Expr,
    environment: &Environment,
    schema: &Schema,
) -> Result<Question, AnalysisError> {
    let policy = expr::question("analysis.lint", body.clone())?;
    Question::compile(&policy, environment, schema, Expect::Proof)
}
