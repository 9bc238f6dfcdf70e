//! authz::targets: classifies each target path of a Design call with the target policies
//! (`Action::"write_target"` / `Action::"delete_target"`). A target that any forbid matches,
//! or whose evaluation errs, is blocked; the call's verdict then becomes `blocked`.

use std::collections::{BTreeSet, HashSet};

use cedar_policy::EntityUid;

use super::context::TargetContext;
use super::decision::{BlockedTarget, EvaluatedRequest, Question, RequestContext};
use super::evaluate::evaluate;
use super::reason::policy_ids;
use super::snapshot::PolicySnapshot;
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

pub fn classify(
    snapshot: &PolicySnapshot,
    call: &TargetCall<'_>,
    targets: &[TargetFacts],
) -> Classification {
    let mut result = Classification::default();
    let mut seen = HashSet::with_capacity(targets.len());
    for target in targets {
        if !seen.insert(target.normalized.as_str()) {
            continue;
        }
        let context = target_context(target, call);
        classify_one(snapshot, call, target, context, &mut result);
    }
    result
}

fn classify_one(
    snapshot: &PolicySnapshot,
    call: &TargetCall<'_>,
    target: &TargetFacts,
    context: TargetContext,
    result: &mut Classification,
) {
    let answer = context
        .to_cedar_context()
        .and_then(|cedar| evaluate(snapshot, call.principal, call.action, call.resource, cedar));
    let (blocking, errors) = match answer {
        Ok(answer) if answer.is_clean_allow() => {
            result
                .policies
                .extend(policy_ids(snapshot, &answer.permits));
            (None, Vec::new())
        }
        Ok(answer) => (Some(answer.forbids), answer.errors),
        Err(error) => (Some(BTreeSet::new()), vec![error.to_string()]),
    };
    if let Some(forbids) = blocking {
        let policies = policy_ids(snapshot, &forbids);
        result.policies.extend(policies.iter().cloned());
        let mut reasons: Vec<String> = forbids
            .iter()
            .filter_map(|id| snapshot.meta(id))
            .map(|meta| format!("{}: {}", meta.reason, target.raw))
            .collect();
        if reasons.is_empty() {
            reasons.push(format!("no target policy allows this path: {}", target.raw));
        }
        result.errors.extend(
            errors
                .iter()
                .map(|error| format!("target `{}`: {error}", target.raw)),
        );
        result.blocked.push(BlockedTarget {
            path: target.raw.clone(),
            reasons,
            policies,
        });
    }
    result.requests.push(EvaluatedRequest {
        question: Question::Target,
        principal: call.principal.to_string(),
        action: call.action.to_string(),
        resource: call.resource.to_string(),
        context: RequestContext::Target(context),
    });
}

fn target_context(target: &TargetFacts, call: &TargetCall<'_>) -> TargetContext {
    TargetContext {
        path: target.normalized.clone(),
        lowercase: target.lowercase.clone(),
        segments: target.folded_segments.iter().cloned().collect(),
        rejected_character: target.rejected_character.is_some(),
        normalizes: target.normalizes,
        project_id: call.project_id.to_string(),
        operation: call.operation.to_string(),
    }
}
