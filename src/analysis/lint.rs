//! analysis::lint: `validate --analyze` — per policy, whether it can fail to evaluate (Cedar
//! skips an erroring policy; askgate then denies the call, so such a rule silently turns into
//! a deny) with a request that makes it err, and whether it can ever apply (a `permit` or
//! `forbid` that matches no request of any environment is dead).

use cedar_policy::{Policy, Schema};
use cedar_policy_symcc::CompiledPolicy;
use serde::Serialize;

use super::concrete::RawRequest;
use super::environments::{environments, reaches, Environment};
use super::solver::Solver;
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

/// A policy that applies to no request of any environment.
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

/// A request of `environment` on which the compiled policy fails to evaluate, if any (the
/// inner `None`: the solver's model named no complete request).
pub async fn can_error(
    solver: &mut Solver,
    compiled: &CompiledPolicy,
    environment: &Environment,
) -> Result<Option<Option<RawRequest>>, AnalysisError> {
    let example = solver
        .compiler
        .check_never_errors_with_counterexample_opt(compiled)
        .await
        .map_err(|error| solver_error(environment, &error))?;
    Ok(example.map(|env| RawRequest::of(&env.request)))
}

/// Analyzes every policy of `snapshot` in every environment its action scope reaches.
pub async fn analyze(
    solver: &mut Solver,
    schema: &Schema,
    snapshot: &PolicySnapshot,
) -> Result<LintReport, AnalysisError> {
    let all = environments(schema);
    let mut report = LintReport::default();
    let mut policies: Vec<&Policy> = snapshot.policies().policies().collect();
    policies.sort_by_key(|policy| policy.id().to_string());
    report.policies = policies.len();
    for policy in policies {
        let Some(meta) = snapshot.meta(policy.id()) else {
            continue;
        };
        let mut matches = false;
        let mut erring = None;
        for environment in all
            .iter()
            .filter(|env| reaches(policy, env, snapshot.action_entities()))
        {
            let compiled = CompiledPolicy::compile(policy, &environment.env, schema)
                .map_err(|error| compile_error(environment, &error))?;
            report.checked += 1;
            if erring.is_none() {
                erring = can_error(solver, &compiled, environment)
                    .await?
                    .map(|request| (environment.label(), request));
            }
            if !matches {
                matches = !solver
                    .compiler
                    .check_never_matches_opt(&compiled)
                    .await
                    .map_err(|error| solver_error(environment, &error))?;
            }
        }
        if let Some((environment, request)) = erring {
            report.can_error.push(ErringPolicy {
                policy: meta.id.clone(),
                file: meta.file.clone(),
                line: meta.line,
                environment,
                request,
            });
        }
        if !matches {
            report.dead.push(DeadRule {
                policy: meta.id.clone(),
                file: meta.file.clone(),
                line: meta.line,
                effect: format!("{:?}", meta.effect).to_lowercase(),
            });
        }
    }
    Ok(report)
}

fn compile_error(environment: &Environment, error: &impl std::fmt::Display) -> AnalysisError {
    AnalysisError::Compile {
        action: environment.label(),
        message: error.to_string(),
    }
}

fn solver_error(environment: &Environment, error: &impl std::fmt::Display) -> AnalysisError {
    AnalysisError::Solver {
        action: environment.label(),
        message: error.to_string(),
    }
}
