//! authz::cache: Cedar's answers to a decision's questions, asked on the policy set's slices
//! and kept in one bounded cache per snapshot. The rest of authz asks through one door: a
//! snapshot's [`Answers`] name what is asked about ([`Answers::on`] an action and resource,
//! or [`Answers::gates`]), and [`Questions::answer`] answers a request, from the cache or
//! evaluated now and cached. Nothing here knows the snapshot that owns these parts.
//!
//! Inside: `index` (the set sliced per action and resource, and the gate slices), `reads`
//! (what each policy reads of a request; `probes` and `relations`: values it reads only
//! through comparisons), `project` (a context cut down to what a slice reads: the key and the
//! Cedar record, from one walk) and `store` (the bounded store of answers).
//!
//! INVARIANT: an answer is stored under the key of the very request Cedar evaluated to give
//! it, and that request holds only what the key encodes (`answer` builds both from one
//! projection). Equal keys therefore mean equal Cedar requests on the same immutable
//! policies, and Cedar's answer is a function of those two: a hit returns what a fresh
//! evaluation would. Nothing else (no clock, no address, no call identity) enters a key.
//! `authz::reference` asks the same questions of plain Cedar, whole, and the differential
//! test (`tests/cache.rs`) holds the two equal.

pub mod index;
pub mod probes;
pub(crate) mod project;
pub(crate) mod question;
pub mod reads;
pub mod relations;
mod store;

use std::sync::Arc;

use cedar_policy::{Entities, EntityUid};

use super::EvaluationError;
use index::{PolicyIndex, Slices};
use project::{cedar_context, record_project, Attributes, Key};
pub use question::Answer;
pub(crate) use question::{add, ask, request, Asked};
use reads::Tree;

pub use store::{AnswerCache, CACHE_BYTES};

/// What answers a snapshot's questions: its index, its store of answers and its action
/// entities (borrowed from the snapshot, which owns them: `PolicySnapshot::answers`).
#[derive(Clone, Copy)]
pub struct Answers<'s> {
    pub index: &'s PolicyIndex,
    pub store: &'s AnswerCache,
    pub entities: &'s Entities,
}

impl<'s> Answers<'s> {
    /// The questions about `action` on `resource`: every policy that can apply.
    pub(crate) fn on(self, action: &EntityUid, resource: &EntityUid) -> Questions<'s> {
        Questions {
            answers: self,
            slices: self.index.slices(action, resource),
        }
    }

    /// The questions about `action` put to the `@gate` policies alone.
    pub(crate) fn gates(self, action: &EntityUid) -> Questions<'s> {
        Questions {
            answers: self,
            slices: self.index.gates(action),
        }
    }
}

/// The questions about one action and resource (or one action's gates), on their slices.
#[derive(Clone, Copy)]
pub(crate) struct Questions<'s> {
    answers: Answers<'s>,
    slices: Slices<'s>,
}

impl Questions<'_> {
    /// Whether no policy can apply (then every answer is a deny with no policy).
    pub(crate) fn is_empty(&self) -> bool {
        self.slices.iter().next().is_none()
    }

    /// What the policies asked read of the context, per slice.
    pub(crate) fn context_reads(&self) -> impl Iterator<Item = &Tree> {
        self.slices.iter().map(|slice| &slice.reads.context)
    }

    /// Cedar's answer to `asked`: from the cache, or evaluated now (and cached).
    pub(crate) fn answer<R: Attributes>(
        &self,
        asked: &Asked<'_, R>,
    ) -> Result<Arc<Answer>, EvaluationError> {
        let key = key(self.slices, asked);
        let store = self.answers.store;
        if let Some(answer) = store.get(&key) {
            return Ok(answer);
        }
        let answer = Arc::new(evaluated(self.answers.entities, self.slices, asked)?);
        store.insert(key, Arc::clone(&answer));
        Ok(answer)
    }
}

/// The key of `asked` on `slices`: per slice, its id and what its policies read.
fn key<R: Attributes>(slices: Slices<'_>, asked: &Asked<'_, R>) -> Key {
    let mut key = Key::with_capacity(128);
    key.text(asked.action_name);
    for slice in [slices.general, slices.specific] {
        let Some(slice) = slice else {
            key.absent();
            continue;
        };
        key.count(slice.id as usize);
        if slice.reads.principal {
            key.text(asked.principal_name);
        }
        if slice.reads.resource {
            key.text(asked.resource_name);
        }
        record_project(asked.context, &slice.reads.context, &mut key);
        for relation in &slice.reads.relations {
            relation.write(asked.context, &mut key);
        }
    }
    key
}

fn evaluated<R: Attributes>(
    entities: &Entities,
    slices: Slices<'_>,
    asked: &Asked<'_, R>,
) -> Result<Answer, EvaluationError> {
    let mut answer = Answer::default();
    for slice in slices.iter() {
        let context = cedar_context(asked.context, &slice.reads.context)?;
        let request = request(asked.principal, asked.action, asked.resource, context)?;
        ask(entities, &request, &slice.set, &mut answer);
    }
    Ok(answer)
}
