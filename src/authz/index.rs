//! authz::index: slices the policy set so a request evaluates only the policies that can apply
//! to its action and resource. Cedar's `is_authorized` evaluates every policy it is given, so
//! a thousand per-project rules for other projects would otherwise cost every call.
//!
//! Each slice also knows what its policies read (`authz::reads`), the answer cache's key, and
//! is cut into parts by its guard facts (`authz::guards`).
//!
//! INVARIANT: for any request (action A, resource R), every policy whose scope can match
//! (A, R) is in `general[A]` or `specific[R]`, and in the part for the request's guard facts
//! unless its guard is falsified by them. Policies are only ever left out on the evidence of
//! their scope (`action ==`/`in`, `resource ==`) or of a guard, which Cedar would evaluate
//! first and find false (`guards`' invariant). The gate slices (`gates[A]`, every `@gate`
//! policy that can apply to A) serve only the gates-first check, which asks nothing else.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use cedar_policy::{
    ActionConstraint, Entities, EntityUid, Policy, PolicySet, ResourceConstraint, Schema,
};

use super::guards::{choose, Guard};
use super::problem::{LoadError, LoadProblem};
use super::project::{value_at, Attributes};
use super::reads::Reads;

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
    /// The slice cut by its guard facts (`authz::guards`), when it has any.
    parts: Option<Box<Parts>>,
}

/// A slice per assignment of the guard facts: part `i` holds the policies whose guard the
/// assignment with bits `i` (bit `k` = fact `k` is true) does not falsify.
#[derive(Debug)]
struct Parts {
    facts: Vec<Vec<String>>,
    slices: Vec<Slice>,
}

impl Slice {
    /// The part of this slice a request with `context` is evaluated on: the policies whose
    /// guard its facts do not falsify (the whole slice when a guard fact is absent).
    pub(crate) fn part<R: Attributes>(&self, context: &R) -> &Slice {
        let Some(parts) = &self.parts else {
            return self;
        };
        let mut bits = 0;
        for (k, path) in parts.facts.iter().enumerate() {
            match flag_at(context, path) {
                Some(true) => bits |= 1 << k,
                Some(false) => {}
                None => return self,
            }
        }
        parts.slices.get(bits).unwrap_or(self)
    }
}

/// The Bool at `path` in a request context, if there is one.
fn flag_at<R: Attributes>(context: &R, path: &[String]) -> Option<bool> {
    value_at(context, path)?.flag()
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

    /// Each slice's part for `context`.
    pub(crate) fn parts<R: Attributes>(self, context: &R) -> Slices<'a> {
        Slices {
            general: self.general.map(|slice| slice.part(context)),
            specific: self.specific.map(|slice| slice.part(context)),
        }
    }
}

/// One policy as the index sorts it.
struct Indexed {
    policy: Policy,
    reads: Reads,
    guard: Option<Guard>,
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
                guard: Guard::of(policy),
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
            partitioned(&indexed, members, &mut ids)
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

/// The slice of `members`, cut by the guard facts `guards::choose` picks for them.
fn partitioned(
    indexed: &[Indexed],
    members: &[usize],
    ids: &mut std::ops::RangeFrom<u32>,
) -> Result<Slice, LoadError> {
    let mut slice = plain(indexed, members.iter().copied(), ids)?;
    let guards: Vec<Option<&Guard>> = members
        .iter()
        .filter_map(|&n| indexed.get(n))
        .map(|entry| entry.guard.as_ref())
        .collect();
    let facts = choose(&guards);
    if facts.is_empty() {
        return Ok(slice);
    }
    let mut slices = Vec::with_capacity(1 << facts.len());
    for bits in 0..(1usize << facts.len()) {
        let kept = members.iter().copied().filter(|&n| {
            let guard = indexed.get(n).and_then(|entry| entry.guard.as_ref());
            !guard.is_some_and(|guard| guard.falsified_by(&facts, bits))
        });
        slices.push(plain(indexed, kept, ids)?);
    }
    slice.parts = Some(Box::new(Parts { facts, slices }));
    Ok(slice)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::super::reads::Tree;
    use super::Slice;
    use crate::authz::{baseline, PolicySnapshot};
    use crate::facts::EntityRef;

    /// The shipped write rules: a tokenless write's part leaves the plan rules out, so it
    /// reads neither the clock nor the target paths and may be cached.
    #[test]
    fn a_tokenless_write_part_leaves_the_plan_rules_out_and_reads_no_clock_or_path() {
        let snapshot =
            PolicySnapshot::load(&baseline::schema_source(), &baseline::policy_sources()).unwrap();
        let action = EntityRef::action("write_files").uid().unwrap();
        let slice = snapshot.index().general.get(&action).unwrap();
        let parts = slice
            .parts
            .as_ref()
            .expect("the write slice is cut by guards");
        let tokenless = parts
            .facts
            .iter()
            .position(|fact| fact.as_slice() == ["design", "tokenless"])
            .expect("tokenless is a guard fact");
        let reads = |slice: &Slice, path: &[&str]| {
            let mut tree = &slice.reads.context;
            for name in path {
                match tree {
                    Tree::Fields(fields) => match fields.get(*name) {
                        Some(next) => tree = next,
                        None => return false,
                    },
                    _ => return true,
                }
            }
            true
        };
        let (clock, paths) = (["now"], ["design", "targets", "paths"]);
        assert!(reads(slice, &clock) && reads(slice, &paths));
        for (bits, part) in parts.slices.iter().enumerate() {
            let has = |id: &str| part.set.policy(&cedar_policy::PolicyId::new(id)).is_some();
            if bits >> tokenless & 1 == 1 {
                assert!(!has("plans.covered") && has("grants.held"), "part {bits}");
                // So a tokenless write's key holds neither the clock nor its paths.
                assert!(!reads(part, &clock) && !reads(part, &paths), "part {bits}");
            } else {
                assert!(has("plans.covered") && !has("grants.held"), "part {bits}");
            }
            assert!(part.set.policies().count() < slice.set.policies().count());
        }
    }
}
