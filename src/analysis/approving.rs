//! analysis::approving: what a change to the approving set — who may answer an approval
//! (issue 35 §1) — could ever do. For each request environment of the approving schema
//! (`approve`, `refuse`) whose policies differ, the solver is asked twice: for a request AFTER
//! allows and BEFORE does not (someone newly may answer: it widens), and for the reverse (it
//! narrows). Each example is decided again by Cedar itself on both sides, as
//! `authz::approving` decides it (an evaluation error refuses), and counts only when that
//! shows the change. A question the solver cannot answer leaves its environment unsettled:
//! nothing is passed that was not settled.

use std::time::{Duration, Instant};

use cedar_policy::{Authorizer, Decision, Entities, Request, Schema};
use cedar_policy_symcc::{CompiledPolicySet, Env};
use serde::Serialize;

use super::concrete::RawRequest;
use super::environments::{environments, reaching, Environment};
use super::solver::{each, reads_like, Worker};
use super::AnalysisError;
use crate::authz::PolicySnapshot;

/// Which way a change moved who may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Someone may now answer an approval they could not before.
    Widens,
    /// Someone may no longer answer an approval they could before.
    Narrows,
}

/// One request the two sides answer differently, with the example the solver found.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovingFinding {
    /// `approve` or `refuse`.
    pub action: String,
    pub direction: Direction,
    /// The approver, the approval and the context of the example.
    pub request: RawRequest,
    /// The example's entities (the approver and the requester with their attributes), as
    /// Cedar's entity JSON.
    pub entities: serde_json::Value,
}

/// An environment whose questions were not all answered.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovingUnsettled {
    pub action: String,
    pub reason: String,
}

/// Everything the approving diff found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ApprovingReport {
    pub environments: usize,
    /// Environments whose policies are the same text on both sides (not asked).
    pub identical: usize,
    pub findings: Vec<ApprovingFinding>,
    pub unsettled: Vec<ApprovingUnsettled>,
}

impl ApprovingReport {
    /// Whether anyone newly may approve or refuse something.
    pub fn widens(&self) -> bool {
        self.findings
            .iter()
            .any(|finding| finding.direction == Direction::Widens)
    }
}

/// What one environment's two questions found.
#[derive(Default)]
struct Searched {
    findings: Vec<ApprovingFinding>,
    unsettled: Option<String>,
}

/// Compares the approving sets `before` and `after` for every environment of `schema` (the
/// approving schema), each question within `question`, the whole run within `run`.
pub fn diff_approving(
    schema: &Schema,
    before: &PolicySnapshot,
    after: &PolicySnapshot,
    question: Duration,
    run: Duration,
) -> Result<ApprovingReport, AnalysisError> {
    let deadline = Instant::now() + run;
    let all = environments(schema);
    let changed: Vec<&Environment> = all
        .iter()
        .filter(|environment| {
            let texts = |snapshot: &PolicySnapshot| {
                reaching(snapshot.policies(), environment, snapshot.action_entities())
            };
            texts(before) != texts(after)
        })
        .collect();
    let searched = each(&changed, question, |worker, environment| {
        search(worker, schema, (before, after), environment, deadline)
    })?;
    let mut report = ApprovingReport {
        environments: all.len(),
        identical: all.len() - changed.len(),
        ..ApprovingReport::default()
    };
    for (environment, searched) in changed.iter().zip(searched) {
        report.findings.extend(searched.findings);
        if let Some(reason) = searched.unsettled {
            report.unsettled.push(ApprovingUnsettled {
                action: environment.action.clone(),
                reason,
            });
        }
    }
    Ok(report)
}

/// Both questions of one environment: newly allowed (widens), newly refused (narrows).
fn search(
    worker: &mut Worker,
    schema: &Schema,
    (before, after): (&PolicySnapshot, &PolicySnapshot),
    environment: &Environment,
    deadline: Instant,
) -> Result<Searched, AnalysisError> {
    let compile = |snapshot: &PolicySnapshot| {
        CompiledPolicySet::compile(snapshot.policies(), &environment.env, schema).map_err(|error| {
            AnalysisError::Compile {
                action: environment.label(),
                message: error.to_string(),
            }
        })
    };
    let (compiled_before, compiled_after) = (compile(before)?, compile(after)?);
    let mut searched = Searched::default();
    let questions = [
        (Direction::Widens, &compiled_after, &compiled_before),
        (Direction::Narrows, &compiled_before, &compiled_after),
    ];
    for (direction, allows, refuses) in questions {
        if Instant::now() >= deadline {
            searched.unsettled = Some(
                "the run's time bound ran out before this question was asked (--timeout)"
                    .to_string(),
            );
            break;
        }
        let like = reads_like(before.policies()) || reads_like(after.policies());
        let example = match worker.allowed_beyond(allows, refuses, like, &environment.label()) {
            Ok(example) => example,
            Err(AnalysisError::Unknown { seconds, .. }) => {
                searched.unsettled = Some(format!(
                    "the solver could not answer within its limit of {seconds} s whether it {}",
                    match direction {
                        Direction::Widens => "widens",
                        Direction::Narrows => "narrows",
                    }
                ));
                continue;
            }
            Err(error) => return Err(error),
        };
        let Some(Env { request, entities }) = example else {
            continue;
        };
        let (was, is) = (
            allows_concretely(before, &request, &entities),
            allows_concretely(after, &request, &entities),
        );
        let shows = match direction {
            Direction::Widens => is && !was,
            Direction::Narrows => was && !is,
        };
        match RawRequest::of(&request) {
            Some(raw) if shows => searched.findings.push(ApprovingFinding {
                action: environment.action.clone(),
                direction,
                request: raw,
                entities: entities.to_json_value().unwrap_or_default(),
            }),
            _ => {
                searched.unsettled = Some(
                    "the solver's example was not a complete request that Cedar decides as it said"
                        .to_string(),
                );
            }
        }
    }
    Ok(searched)
}

/// Whether `snapshot` lets the request through as `authz::approving` decides it: an allow
/// without evaluation errors.
fn allows_concretely(snapshot: &PolicySnapshot, request: &Request, entities: &Entities) -> bool {
    let response = Authorizer::new().is_authorized(request, snapshot.policies(), entities);
    response.decision() == Decision::Allow && response.diagnostics().errors().next().is_none()
}
