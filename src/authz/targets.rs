//! authz::targets: classifies each target path of a Design call with the target policies
//! (`Action::"write_target"` / `Action::"delete_target"`). A target that any forbid matches,
//! or whose evaluation errs, is blocked; the call's verdict then becomes `blocked`.
//!
//! Per-target work is kept small: one evaluation per distinct path, answers remembered by the
//! snapshot (they depend only on it and the target request), and request records that point
//! at the call's target facts instead of copying them. A call whose target list is shared with
//! an earlier call (`facts::targets` remembers lists) reuses that call's whole classification.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use cedar_policy::{EntityUid, PolicyId};

use super::context::TargetContext;
use super::decision::BlockedTarget;
use super::evaluate::{evaluate, Answer};
use super::memo::TargetAnswers;
use super::reason::policy_ids;
use super::requests::{Memoized, TargetRequests};
use super::snapshot::PolicySnapshot;
use super::EvaluationError;
use crate::paths::TargetFacts;

/// The outcome of classifying every target of one call.
#[derive(Debug)]
pub struct Classification {
    pub classified: Arc<Classified>,
    /// One request per distinct target path.
    pub requests: TargetRequests,
}

/// What the target policies said about one list of targets; remembered by the snapshot for
/// that list when every target was answered.
#[derive(Debug, Default)]
pub struct Classified {
    /// The list classified (its identity is the memo's key).
    pub targets: Arc<Vec<TargetFacts>>,
    pub blocked: Vec<BlockedTarget>,
    /// The target policies that determined any target's class.
    pub policies: BTreeSet<String>,
    pub errors: Vec<String>,
    /// The index of the first occurrence of each distinct path: one request each.
    pub distinct: Arc<[usize]>,
}

pub struct TargetCall<'a> {
    pub principal: &'a EntityUid,
    pub action: &'a EntityUid,
    pub resource: &'a EntityUid,
    /// The entities as request records show them (`principal` and `resource` shared with
    /// the call's own records).
    pub action_name: Arc<str>,
    pub principal_name: &'a Arc<str>,
    pub resource_name: &'a Arc<str>,
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
    let remembered = snapshot.memo().targets_of(&shared.key_prefix);
    if let Some(classified) = remembered.classification(targets) {
        let requests = requests(shared, &classified, Memoized::All(true));
        return Classification {
            classified,
            requests,
        };
    }
    let mut classified = Classified {
        targets: Arc::clone(targets),
        ..Classified::default()
    };
    let mut determining: BTreeSet<PolicyId> = BTreeSet::new();
    let mut seen = HashSet::with_capacity(targets.len());
    let mut distinct = Vec::with_capacity(targets.len());
    let mut memoized = Vec::with_capacity(targets.len());
    let mut answered = true;
    for (index, target) in targets.iter().enumerate() {
        if !seen.insert(target.normalized.as_str()) {
            continue;
        }
        let (answer, from_memo) = answer(snapshot, call, &remembered, target);
        match answer.as_deref() {
            Ok(answer) if answer.is_clean_allow() => {
                determining.extend(answer.permits.iter().cloned())
            }
            Ok(answer) => {
                let errors = answer
                    .errors
                    .iter()
                    .map(|error| format!("target `{}`: {error}", target.raw));
                classified.errors.extend(errors);
                block(snapshot, target, &answer.forbids, &mut classified);
                determining.extend(answer.forbids.iter().cloned());
            }
            Err(error) => {
                answered = false;
                classified
                    .errors
                    .push(format!("target `{}`: {error}", target.raw));
                block(snapshot, target, &BTreeSet::new(), &mut classified);
            }
        }
        distinct.push(index);
        memoized.push(from_memo);
    }
    classified.distinct = distinct.into();
    classified.policies = policy_ids(snapshot, &determining).into_iter().collect();
    let classified = Arc::new(classified);
    let requests = requests(shared, &classified, Memoized::Each(memoized));
    if answered {
        snapshot
            .memo()
            .remember_classification(&remembered, Arc::clone(&classified));
    }
    Classification {
        classified,
        requests,
    }
}

/// The request records of a classification: one per distinct target.
fn requests(shared: Shared, classified: &Classified, memoized: Memoized) -> TargetRequests {
    TargetRequests {
        principal: shared.principal,
        action: shared.action,
        resource: shared.resource,
        project_id: shared.project_id,
        operation: shared.operation,
        targets: Arc::clone(&classified.targets),
        asked: Arc::clone(&classified.distinct),
        memoized,
    }
}

fn shared(call: &TargetCall<'_>) -> Shared {
    let key_prefix = format!(
        "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}\u{0}",
        call.principal_name, call.action_name, call.resource_name, call.project_id, call.operation
    );
    Shared {
        principal: Arc::clone(call.principal_name),
        action: Arc::clone(&call.action_name),
        resource: Arc::clone(call.resource_name),
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
        .into_cedar_context()
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
    result: &mut Classified,
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

#[cfg(test)]
#[path = "targets_tests.rs"]
mod tests;
