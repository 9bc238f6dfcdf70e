//! authz::index: slices the policy set so a request evaluates only the policies that can apply
//! to its action and resource. Cedar's `is_authorized` evaluates every policy it is given, so
//! a thousand per-project rules for other projects would otherwise cost every call.
//!
//! Each slice also knows what its policies read (`authz::reads`), the answer cache's key.
//!
//! INVARIANT: for any request (action A, resource R), every policy whose scope can match
//! (A, R) is in `general[A]` or `specific[R]`. Policies are only ever left out on the
//! evidence of their scope (`action ==`/`in`, `resource ==`); conditions are never inspected.

use std::collections::HashMap;

use cedar_policy::{
    ActionConstraint, Entities, EntityUid, Policy, PolicySet, ResourceConstraint, Schema,
};

use super::problem::{LoadError, LoadProblem};
use super::reads::{Reads, Tree};

#[derive(Debug, Default)]
pub struct PolicyIndex {
    /// Per concrete action: every policy not pinned to one resource that can apply to it.
    general: HashMap<EntityUid, Slice>,
    /// Per resource: the policies whose scope says `resource == R` (any action).
    specific: HashMap<EntityUid, Slice>,
}

/// Some policies and what they read, together.
#[derive(Debug, Default)]
pub struct Slice {
    /// Unique in the index: part of every cache key of requests evaluated on this slice.
    pub id: u32,
    pub set: PolicySet,
    pub reads: Reads,
}

impl Slice {
    /// Whether answers on this slice may be cached: not when a policy reads the clock (or the
    /// whole context), since its key would hold the millisecond.
    pub fn cacheable(&self) -> bool {
        match &self.reads.context {
            Tree::Whole => false,
            Tree::Present => true,
            Tree::Fields(fields) => !fields.contains_key("now"),
        }
    }
}

/// The (at most two) slices a request is evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct Slices<'a> {
    pub general: Option<&'a Slice>,
    pub specific: Option<&'a Slice>,
}

impl<'a> Slices<'a> {
    pub fn iter(self) -> impl Iterator<Item = &'a Slice> {
        [self.general, self.specific].into_iter().flatten()
    }

    /// Answers may be cached when every slice asked may be.
    pub fn cacheable(self) -> bool {
        self.iter().all(Slice::cacheable)
    }
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
            let reads = Reads::of(policy);
            if let ResourceConstraint::Eq(resource) = policy.resource_constraint() {
                add(index.specific.entry(resource).or_default(), policy, &reads)?;
                continue;
            }
            for action in &actions {
                if action_can_match(&policy.action_constraint(), action, action_entities) {
                    add(
                        index.general.entry(action.clone()).or_default(),
                        policy,
                        &reads,
                    )?;
                }
            }
        }
        let slices = index
            .general
            .values_mut()
            .chain(index.specific.values_mut());
        for (id, slice) in slices.enumerate() {
            slice.id = u32::try_from(id).unwrap_or(u32::MAX);
        }
        Ok(index)
    }

    pub fn slices(&self, action: &EntityUid, resource: &EntityUid) -> Slices<'_> {
        Slices {
            general: self.general.get(action),
            specific: self.specific.get(resource),
        }
    }

    /// How many policies a request on (action, resource) evaluates.
    pub fn slice_len(&self, action: &EntityUid, resource: &EntityUid) -> usize {
        self.slices(action, resource)
            .iter()
            .map(|slice| slice.set.policies().count())
            .sum()
    }
}

fn add(slice: &mut Slice, policy: &Policy, reads: &Reads) -> Result<(), LoadError> {
    slice.reads = std::mem::take(&mut slice.reads).union(reads.clone());
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
