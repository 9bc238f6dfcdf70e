//! authz::targets: classifies each target path of a Design call with the target policies
//! (`Action::"write_target"` / `Action::"delete_target"`). A target that any forbid matches,
//! or whose evaluation errs, is blocked; the call's verdict then becomes `blocked`.
//!
//! One request per distinct normalized path: every fact of a target's context is a function
//! of its normalized path (`paths::normalize`'s invariant, property-tested there), so a
//! repeat would ask the same question. Request records point at the call's target facts
//! instead of copying them.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use cedar_policy::{EntityUid, PolicyId};

use super::cache::Asked;
use super::context::TargetRequestView;
use super::decision::BlockedTarget;
use super::evaluate::Evaluator;
use super::reason::policy_ids;
use super::requests::TargetRequests;
use super::snapshot::PolicySnapshot;
use crate::paths::TargetFacts;

/// What the target policies said about one call's targets.
#[derive(Debug, Default)]
pub struct Classified {
    pub blocked: Vec<BlockedTarget>,
    /// The target policies that determined any target's class.
    pub policies: BTreeSet<String>,
    pub errors: Vec<String>,
}

/// The outcome of classifying every target of one call.
#[derive(Debug)]
pub struct Classification {
    pub classified: Classified,
    /// One request per distinct target path.
    pub requests: TargetRequests,
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
    pub project_id: &'a String,
    pub operation: &'a String,
}

pub(crate) fn classify(
    snapshot: &PolicySnapshot,
    evaluator: Evaluator,
    call: &TargetCall<'_>,
    targets: &Arc<Vec<TargetFacts>>,
) -> Classification {
    let mut classified = Classified::default();
    let mut determining: BTreeSet<PolicyId> = BTreeSet::new();
    let mut seen = HashSet::with_capacity(targets.len());
    let mut distinct = Vec::with_capacity(targets.len());
    let questions = evaluator.on(snapshot, call.action, call.resource);
    for (index, target) in targets.iter().enumerate() {
        if !seen.insert(target.normalized.as_str()) {
            continue;
        }
        distinct.push(index);
        let view = TargetRequestView {
            target,
            project_id: call.project_id,
            operation: call.operation,
        };
        let asked = Asked {
            principal: call.principal,
            principal_name: call.principal_name,
            action: call.action,
            action_name: &call.action_name,
            resource: call.resource,
            resource_name: call.resource_name,
            context: &view,
        };
        match questions.answer(&asked) {
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
                classified
                    .errors
                    .push(format!("target `{}`: {error}", target.raw));
                block(snapshot, target, &BTreeSet::new(), &mut classified);
            }
        }
    }
    classified.policies = policy_ids(snapshot, &determining).into_iter().collect();
    let requests = TargetRequests {
        principal: Arc::clone(call.principal_name),
        action: Arc::clone(&call.action_name),
        resource: Arc::clone(call.resource_name),
        project_id: call.project_id.as_str().into(),
        operation: call.operation.as_str().into(),
        targets: Arc::clone(targets),
        asked: distinct.into(),
    };
    Classification {
        classified,
        requests,
    }
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
