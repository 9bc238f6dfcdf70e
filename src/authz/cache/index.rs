//! authz::index: slices the policy set so a request evaluates only the policies that can apply
//! to its action and resource. Cedar's `is_authorized` evaluates every policy it is given, so
//! a thousand per-project rules for other projects would otherwise cost every call.
//!
//! Each slice also knows what its policies read (`authz::reads`), the answer cache's key.
//!
//! INVARIANT: for any request (action A, resource R), every policy whose scope can match
//! (A, R) is in `general[A]` or `specific[R]`. Policies are only ever left out on the
//! evidence of their scope (`action ==`/`in`, `resource ==`). The gate slices (`gates[A]`, every `@gate`
//! policy that can apply to A) serve only the gates-first check, which asks nothing else.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use cedar_policy::{
    ActionConstraint, Entities, EntityUid, Policy, PolicySet, ResourceConstraint, Schema,
};

use super::reads::Reads;
use crate::authz::problem::{LoadError, LoadProblem};

#[derive(Debug, Default)]
pub struct PolicyIndex {
    /// Per concrete action: every policy not pinned to one resource that can apply to it.
    general: HashMap<EntityUid, Slice, RandomState>,
    /// Per resource: the policies whose scope says `resource == R` (any action).
    specific: HashMap<EntityUid, Slice, RandomState>,
    /// Per concrete action: every `@gate` policy that can apply to it (any resource), for
    /// the gates-first check (`decide::denied_by_gate`).
    gates: HashMap<EntityUid, Slice, RandomState>,
}

/// Some policies and what they read, together.
#[derive(Debug, Default)]
pub struct Slice {
    /// Unique in the index: part of every cache key of requests evaluated on this slice.
    pub id: u32,
    pub set: PolicySet,
    pub reads: Reads,
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
}

/// One policy as the index sorts it.
struct Indexed {
    policy: Policy,
    reads: Reads,
}

impl PolicyIndex {
    pub fn build(
        policies: &PolicySet,
        schema: &Schema,
        action_entities: &Entities,
    ) -> Result<Self, LoadError> {
        let actions: Vec<EntityUid> = schema.actions().cloned().collect();
        let mut general: HashMap<EntityUid, Vec<usize>> = HashMap::new();
        let mut specific: HashMap<EntityUid, Vec<usize>> = HashMap::new();
        let mut gates: HashMap<EntityUid, Vec<usize>> = HashMap::new();
        let indexed: Vec<Indexed> = policies
            .policies()
            .map(|policy| Indexed {
                policy: policy.clone(),
                reads: Reads::of(policy),
            })
            .collect();
        for (n, entry) in indexed.iter().enumerate() {
            if entry.policy.annotation("gate").is_some() {
                for action in &actions {
                    if action_can_match(&entry.policy.action_constraint(), action, action_entities)
                    {
                        gates.entry(action.clone()).or_default().push(n);
                    }
                }
            }
            if let ResourceConstraint::Eq(resource) = entry.policy.resource_constraint() {
                specific.entry(resource).or_default().push(n);
                continue;
            }
            for action in &actions {
                if action_can_match(&entry.policy.action_constraint(), action, action_entities) {
                    general.entry(action.clone()).or_default().push(n);
                }
            }
        }
        let mut ids = 0..;
        let mut slice_of = |members: &[usize]| -> Result<Slice, LoadError> {
            plain(&indexed, members.iter().copied(), &mut ids)
        };
        Ok(Self {
            general: general
                .into_iter()
                .map(|(action, members)| Ok((action, slice_of(&members)?)))
                .collect::<Result<_, LoadError>>()?,
            specific: specific
                .into_iter()
                .map(|(resource, members)| Ok((resource, slice_of(&members)?)))
                .collect::<Result<_, LoadError>>()?,
            gates: gates
                .into_iter()
                .map(|(action, members)| Ok((action, slice_of(&members)?)))
                .collect::<Result<_, LoadError>>()?,
        })
    }

    /// The `@gate` policies that can apply to `action`, alone (one slice).
    pub fn gates(&self, action: &EntityUid) -> Slices<'_> {
        Slices {
            general: self.gates.get(action),
            specific: None,
        }
    }

    pub fn slices(&self, action: &EntityUid, resource: &EntityUid) -> Slices<'_> {
        Slices {
            general: self.general.get(action),
            specific: self.specific.get(resource),
        }
    }

    /// How many policies a request on (action, resource) evaluates at most.
    pub fn slice_len(&self, action: &EntityUid, resource: &EntityUid) -> usize {
        self.slices(action, resource)
            .iter()
            .map(|slice| slice.set.policies().count())
            .sum()
    }
}

fn plain(
    indexed: &[Indexed],
    members: impl Iterator<Item = usize>,
    ids: &mut std::ops::RangeFrom<u32>,
) -> Result<Slice, LoadError> {
    let mut slice = Slice {
        id: ids.next().unwrap_or(u32::MAX),
        ..Slice::default()
    };
    for entry in members.filter_map(|n| indexed.get(n)) {
        slice.reads = std::mem::take(&mut slice.reads).union(entry.reads.clone());
        slice.set.add(entry.policy.clone()).map_err(|error| {
            LoadError::single(LoadProblem::in_file("<index>", None, error.to_string()))
        })?;
    }
    Ok(slice)
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
