//! authz::targets: classifies each target path of a Design call with the target policies
//! (`Action::"write_target"` / `Action::"delete_target"`). A target that any forbid matches,
//! or whose evaluation errs, is blocked; the call's verdict then becomes `blocked`.
//!
//! Per-target work is kept small: one evaluation per distinct path, answers remembered by the
//! snapshot (they depend only on it and the target request), and request records that point
//! at the call's target facts instead of copying them.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use cedar_policy::{EntityUid, PolicyId};

use super::context::TargetContext;
use super::decision::{BlockedTarget, EvaluatedRequest, Question, RequestContext, TargetRequest};
use super::evaluate::{evaluate, Answer};
use super::memo::TargetAnswers;
use super::reason::policy_ids;
use super::snapshot::PolicySnapshot;
use super::EvaluationError;
use crate::paths::TargetFacts;

/// The outcome of classifying every target of one call.
#[derive(Debug, Default)]
pub struct Classification {
    pub blocked: Vec<BlockedTarget>,
    /// The target policies that determined any target's class.
    pub policies: BTreeSet<String>,
    pub requests: Vec<EvaluatedRequest>,
    pub errors: Vec<String>,
}

pub struct TargetCall<'a> {
    pub principal: &'a EntityUid,
    pub action: &'a EntityUid,
    pub resource: &'a EntityUid,
    pub project_id: &'a str,
    pub operation: &'a str,
}

/// What every target request of one call shares.
struct Shared {
    principal: Arc<str>,
    action: Arc<str>,
    resource: Arc<str>,
    project_id: Arc<str>,
    operation: Arc<str>,
    /// The call shape the memo keeps this call's target answers under.
    key_prefix: String,
}

pub fn classify(
    snapshot: &PolicySnapshot,
    call: &TargetCall<'_>,
    targets: &Arc<Vec<TargetFacts>>,
) -> Classification {
    let shared = shared(call);
    let mut result = Classification::default();
    let mut determining: BTreeSet<PolicyId> = BTreeSet::new();
    let mut seen = HashSet::with_capacity(targets.len());
    result.requests.reserve(targets.len());
    let remembered = snapshot.memo().targets_of(&shared.key_prefix);
    for (index, target) in targets.iter().enumerate() {
        if !seen.insert(target.normalized.as_str()) {
            continue;
        }
        let (answer, memoized) = answer(snapshot, call, &remembered, target);
        match answer.as_deref() {
            Ok(answer) if answer.is_clean_allow() => {
                determining.extend(answer.permits.iter().cloned())
            }
            Ok(answer) => {
                let errors = answer
                    .errors
                    .iter()
                    .map(|error| format!("target `{}`: {error}", target.raw));
                result.errors.extend(errors);
                block(snapshot, target, &answer.forbids, &mut result);
                determining.extend(answer.forbids.iter().cloned());
            }
            Err(error) => {
                result
                    .errors
                    .push(format!("target `{}`: {error}", target.raw));
                block(snapshot, target, &BTreeSet::new(), &mut result);
            }
        }
        result.requests.push(EvaluatedRequest {
            question: Question::Target,
            principal: Arc::clone(&shared.principal),
            action: Arc::clone(&shared.action),
            resource: Arc::clone(&shared.resource),
            context: RequestContext::Target(TargetRequest {
                targets: Arc::clone(targets),
                index,
                project_id: Arc::clone(&shared.project_id),
                operation: Arc::clone(&shared.operation),
            }),
            memoized,
        });
    }
    result.policies = policy_ids(snapshot, &determining).into_iter().collect();
    result
}

fn shared(call: &TargetCall<'_>) -> Shared {
    let (principal, action, resource) = (
        call.principal.to_string(),
        call.action.to_string(),
        call.resource.to_string(),
    );
    let key_prefix = format!(
        "{principal}\u{0}{action}\u{0}{resource}\u{0}{}\u{0}{}\u{0}",
        call.project_id, call.operation
    );
    Shared {
        principal: principal.into(),
        action: action.into(),
        resource: resource.into(),
        project_id: call.project_id.into(),
        operation: call.operation.into(),
        key_prefix,
    }
}

/// The target's answer, from the snapshot's memo or a fresh evaluation.
fn answer(
    snapshot: &PolicySnapshot,
    call: &TargetCall<'_>,
    remembered: &TargetAnswers,
    target: &TargetFacts,
) -> (Result<Arc<Answer>, EvaluationError>, bool) {
    if let Some(answer) = remembered.get(&target.normalized) {
        return (Ok(answer), true);
    }
    let context = TargetContext::of(target, call.project_id, call.operation);
    let evaluated = context
        .to_cedar_context()
        .and_then(|cedar| evaluate(snapshot, call.principal, call.action, call.resource, cedar))
        .map(Arc::new);
    if let Ok(answer) = &evaluated {
        snapshot
            .memo()
            .remember_target(remembered, &target.normalized, Arc::clone(answer));
    }
    (evaluated, false)
}

fn block(
    snapshot: &PolicySnapshot,
    target: &TargetFacts,
    forbids: &BTreeSet<PolicyId>,
    result: &mut Classification,
) {
    let mut reasons: Vec<String> = forbids
        .iter()
        .filter_map(|id| snapshot.meta(id))
        .map(|meta| format!("{}: {}", meta.reason, target.raw))
        .collect();
    if reasons.is_empty() {
        reasons.push(format!("no target policy allows this path: {}", target.raw));
    }
    result.blocked.push(BlockedTarget {
        path: target.raw.clone(),
        reasons,
        policies: policy_ids(snapshot, forbids),
    });
}
