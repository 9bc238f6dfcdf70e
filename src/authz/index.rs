//! authz::index: slices the policy set so a request evaluates only the policies that can apply
//! to its action and resource. Cedar's `is_authorized` evaluates every policy it is given, so
//! a thousand per-project rules for other projects would otherwise cost every call.
//!
//! INVARIANT: for any request (action A, resource R), every policy whose scope can match
//! (A, R) is in `general[A]` or `specific[R]`. Policies are only ever left out on the
//! evidence of their scope (`action ==`/`in`, `resource ==`); conditions are never inspected.

use std::collections::HashMap;

use cedar_policy::{
    ActionConstraint, Entities, EntityUid, Policy, PolicySet, ResourceConstraint, Schema,
};

use super::problem::{LoadError, LoadProblem};
use super::time_use::TimeUse;

#[derive(Debug, Default)]
pub struct PolicyIndex {
    /// Per concrete action: every policy not pinned to one resource that can apply to it.
    general: HashMap<EntityUid, Slice>,
    /// Per resource: the policies whose scope says `resource == R` (any action).
    specific: HashMap<EntityUid, Slice>,
}

/// Some policies and how they read the clock, together.
#[derive(Debug, Default)]
struct Slice {
    set: PolicySet,
    time_use: TimeUse,
}

/// The (at most two) slices a request is evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct Slices<'a> {
    pub general: Option<&'a PolicySet>,
    pub specific: Option<&'a PolicySet>,
}

impl PolicyIndex {
    pub fn build(
        policies: &PolicySet,
        schema: &Schema,
        action_entities: &Entities,
    ) -> Result<Self, LoadError> {
        let actions: Vec<EntityUid> = schema.actions().cloned().collect();
        let mut index = Self::default();
        for policy in policies.policies() {
            let time_use = TimeUse::of(policy);
            if let ResourceConstraint::Eq(resource) = policy.resource_constraint() {
                add(
                    index.specific.entry(resource).or_default(),
                    policy,
                    &time_use,
                )?;
                continue;
            }
            for action in &actions {
                if action_can_match(&policy.action_constraint(), action, action_entities) {
                    add(
                        index.general.entry(action.clone()).or_default(),
                        policy,
                        &time_use,
                    )?;
                }
            }
        }
        Ok(index)
    }

    pub fn slices(&self, action: &EntityUid, resource: &EntityUid) -> Slices<'_> {
        Slices {
            general: self.general.get(action).map(|slice| &slice.set),
            specific: self.specific.get(resource).map(|slice| &slice.set),
        }
    }

    /// How the policies a request on (action, resource) evaluates read the clock.
    pub fn time_use(&self, action: &EntityUid, resource: &EntityUid) -> TimeUse {
        let general = self.general.get(action).map(|slice| slice.time_use.clone());
        let specific = self
            .specific
            .get(resource)
            .map(|slice| slice.time_use.clone());
        general
            .unwrap_or_default()
            .union(specific.unwrap_or_default())
    }

    /// How many policies a request on (action, resource) evaluates.
    pub fn slice_len(&self, action: &EntityUid, resource: &EntityUid) -> usize {
        let slices = self.slices(action, resource);
        slices.general.map_or(0, |set| set.policies().count())
            + slices.specific.map_or(0, |set| set.policies().count())
    }
}

fn add(slice: &mut Slice, policy: &Policy, time_use: &TimeUse) -> Result<(), LoadError> {
    slice.time_use = std::mem::take(&mut slice.time_use).union(time_use.clone());
    slice.set.add(policy.clone()).map_err(|error| {
        LoadError::single(LoadProblem::in_file("<index>", None, error.to_string()))
    })
}

fn action_can_match(
    constraint: &ActionConstraint,
    action: &EntityUid,
    entities: &Entities,
) -> bool {
    match constraint {
        ActionConstraint::Any => true,
        ActionConstraint::Eq(expected) => expected == action,
        ActionConstraint::In(groups) => groups.iter().any(|group| {
            group == action
                || entities
                    .ancestors(action)
                    .is_some_and(|mut ancestors| ancestors.any(|ancestor| ancestor == group))
        }),
    }
}
