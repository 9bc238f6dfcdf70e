//! authz::memo: Cedar answers remembered for the life of one (immutable) snapshot. An answer
//! is a pure function of the snapshot and the request, so an identical request can reuse it:
//! targets by their request, calls by their request minus the clock, for as long as the clock
//! stays between the same thresholds (`time_use`). Bounded: a full memo starts over.
//!
//! It never decides anything itself: a miss is evaluated by Cedar and remembered as answered.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use cedar_policy::EntityUid;
use dashmap::DashMap;

use super::context::{CallContext, SurfaceContext};
use super::evaluate::{evaluate, Answer};
use super::snapshot::PolicySnapshot;
use super::targets::Classified;
use super::time_use::{Threshold, TimeUse};
use super::EvaluationError;
use crate::paths::{TargetFacts, STRING_OVERHEAD};

/// Keys are hashed with a fast, randomly seeded hash: a call key carries every target path.
type FastHash = foldhash::fast::RandomState;

/// The memo is bounded by the bytes it holds, not by counts: a key may carry hundreds of paths
/// of up to 4 KiB each. Past its bound, each kind (targets, calls) starts over.
const TARGET_BYTES: usize = 32 << 20;
const CALL_BYTES: usize = 32 << 20;
/// What one remembered answer costs besides the strings of its key.
const ENTRY_BYTES: usize = 256;

#[derive(Debug, Default)]
pub struct Memo {
    /// Per call shape (principal, action, resource, project, operation): answers by path, so
    /// a call's targets cost one shape lookup and one borrowed lookup each.
    targets: DashMap<String, Arc<TargetAnswers>, FastHash>,
    target_bytes: AtomicUsize,
    calls: DashMap<CallKey, Remembered, FastHash>,
    call_bytes: AtomicUsize,
}

/// The remembered target answers of one call shape: by normalized path, and whole
/// classifications by the call's target list.
#[derive(Debug, Default)]
pub struct TargetAnswers {
    by_path: RwLock<HashMap<String, Arc<Answer>, FastHash>>,
    /// Keyed by the address of the list's `Arc`; each entry holds that `Arc`, so no other
    /// list can take the address while the entry lives, and a hit is confirmed by `ptr_eq`.
    by_list: RwLock<HashMap<usize, Arc<Classified>, FastHash>>,
}

impl TargetAnswers {
    pub fn get(&self, path: &str) -> Option<Arc<Answer>> {
        let answers = self.by_path.read().unwrap_or_else(PoisonError::into_inner);
        answers.get(path).map(Arc::clone)
    }

    /// The classification remembered for exactly this list of targets.
    pub fn classification(&self, targets: &Arc<Vec<TargetFacts>>) -> Option<Arc<Classified>> {
        let lists = self.by_list.read().unwrap_or_else(PoisonError::into_inner);
        let known = lists.get(&list_key(targets))?;
        Arc::ptr_eq(&known.targets, targets).then(|| Arc::clone(known))
    }
}

fn list_key(targets: &Arc<Vec<TargetFacts>>) -> usize {
    Arc::as_ptr(targets) as usize
}

/// A call request without its clock: principal, action, resource and every other context
/// attribute.
#[derive(Debug, Clone)]
pub struct CallKey {
    pub principal: EntityUid,
    pub action: EntityUid,
    pub resource: EntityUid,
    pub context: Arc<CallContext>,
}

/// An answer and the open interval of clock values (`after < now < before`) it holds for.
#[derive(Debug)]
struct Remembered {
    after: Option<i64>,
    before: Option<i64>,
    answer: Arc<Answer>,
}

impl Remembered {
    fn holds_at(&self, now: i64) -> bool {
        self.after.is_none_or(|after| after < now) && self.before.is_none_or(|before| now < before)
    }
}

impl Memo {
    /// The target answers remembered for one call shape (created empty when new).
    pub fn targets_of(&self, shape: &str) -> Arc<TargetAnswers> {
        if let Some(answers) = self.targets.get(shape) {
            return Arc::clone(answers.value());
        }
        Arc::clone(self.targets.entry(shape.to_string()).or_default().value())
    }

    pub fn remember_target(&self, answers: &TargetAnswers, path: &str, answer: Arc<Answer>) {
        self.count_targets(ENTRY_BYTES + path.len() + STRING_OVERHEAD);
        let mut by_path = answers
            .by_path
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        by_path.insert(path.to_string(), answer);
    }

    /// Remembers a classification of every target of one list (weighing the list's facts,
    /// which it keeps alive).
    pub fn remember_classification(&self, answers: &TargetAnswers, classified: Arc<Classified>) {
        let facts: usize = classified.targets.iter().map(TargetFacts::footprint).sum();
        self.count_targets(ENTRY_BYTES + facts);
        let mut by_list = answers
            .by_list
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        by_list.insert(list_key(&classified.targets), classified);
    }

    fn count_targets(&self, weight: usize) {
        if self.target_bytes.fetch_add(weight, Ordering::Relaxed) + weight > TARGET_BYTES {
            self.targets.clear();
            self.target_bytes.store(weight, Ordering::Relaxed);
        }
    }

    /// Forgets every remembered answer.
    pub fn clear(&self) {
        self.targets.clear();
        self.target_bytes.store(0, Ordering::Relaxed);
        self.calls.clear();
        self.call_bytes.store(0, Ordering::Relaxed);
    }

    /// How many call answers are remembered.
    pub fn calls_len(&self) -> usize {
        self.calls.len()
    }

    /// About how many bytes the remembered target answers and classifications hold.
    pub fn target_bytes(&self) -> usize {
        self.target_bytes.load(Ordering::Relaxed)
    }

    /// About how many bytes the remembered call answers hold.
    pub fn call_bytes(&self) -> usize {
        self.call_bytes.load(Ordering::Relaxed)
    }
}

/// The answer to a call request, remembered or evaluated now; `true` when remembered.
pub fn call_answer(
    snapshot: &PolicySnapshot,
    key: CallKey,
) -> Result<(Arc<Answer>, bool), EvaluationError> {
    let now = key.context.now;
    let memo = snapshot.memo();
    if let Some(remembered) = memo.calls.get(&key) {
        if remembered.holds_at(now) {
            return Ok((Arc::clone(&remembered.answer), true));
        }
    }
    let cedar = key.context.to_cedar_context(&key.context.approvals)?;
    let answer = Arc::new(evaluate(
        snapshot,
        &key.principal,
        &key.action,
        &key.resource,
        cedar,
    )?);
    let time_use = snapshot.index().time_use(&key.action, &key.resource);
    if let Some((after, before)) = window(&time_use, &key.context) {
        let weight = weight(&key.context);
        if memo.call_bytes.fetch_add(weight, Ordering::Relaxed) + weight > CALL_BYTES {
            memo.calls.clear();
            memo.call_bytes.store(weight, Ordering::Relaxed);
        }
        let remembered = Remembered {
            after,
            before,
            answer: Arc::clone(&answer),
        };
        memo.calls.insert(key, remembered);
    }
    Ok((answer, false))
}

/// About how many bytes a remembered call holds: a fixed part and the strings that can be
/// long (paths, queries).
fn weight(context: &CallContext) -> usize {
    let text = |text: &String| text.len() + STRING_OVERHEAD;
    let strings: usize = match &context.surface {
        SurfaceContext::Design(design) => {
            let plan = &design.plan;
            [&design.targets.paths, &plan.writes, &plan.deletes]
                .into_iter()
                .flat_map(|set| set.iter())
                .chain([&design.arguments.path, &design.project_id])
                .map(text)
                .sum()
        }
        SurfaceContext::Projects(projects) => {
            [&projects.path, &projects.resolved_path, &projects.query]
                .into_iter()
                .map(text)
                .sum()
        }
    };
    ENTRY_BYTES + strings
}

/// The open interval around `context.now` in which no threshold is crossed, so every
/// comparison with the clock keeps its value; `None` when the answer must not be remembered.
fn window(time_use: &TimeUse, context: &CallContext) -> Option<(Option<i64>, Option<i64>)> {
    let thresholds = match time_use {
        TimeUse::Never => return Some((None, None)),
        TimeUse::Opaque => return None,
        TimeUse::Thresholds(thresholds) => thresholds,
    };
    let now = context.now;
    let record = serde_json::to_value(context).ok()?;
    let (mut after, mut before) = (None, None);
    for threshold in thresholds {
        let value = match threshold {
            Threshold::Literal(value) => *value,
            Threshold::Attribute(path) => read_long(&record, path)?,
        };
        if value == now {
            return None;
        }
        if value < now {
            after = after.max(Some(value));
        } else {
            before = Some(before.map_or(value, |known: i64| known.min(value)));
        }
    }
    Some((after, before))
}

/// The Long at `path` in the context record; `None` when absent or not a Long.
fn read_long(record: &serde_json::Value, path: &[String]) -> Option<i64> {
    path.iter()
        .try_fold(record, |value, attribute| value.get(attribute))?
        .as_i64()
}

impl PartialEq for CallKey {
    fn eq(&self, other: &Self) -> bool {
        let CallContext {
            approvals,
            now: _,
            session,
            environment,
            surface,
        } = &*self.context;
        self.principal == other.principal
            && self.action == other.action
            && self.resource == other.resource
            && *approvals == other.context.approvals
            && *session == other.context.session
            && *environment == other.context.environment
            && *surface == other.context.surface
    }
}

impl Eq for CallKey {}

impl Hash for CallKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // The clock is left out: the remembered window decides whether it matters.
        let CallContext {
            approvals,
            now: _,
            session,
            environment,
            surface,
        } = &*self.context;
        self.principal.hash(state);
        self.action.hash(state);
        self.resource.hash(state);
        approvals.hash(state);
        session.hash(state);
        environment.hash(state);
        surface.hash(state);
    }
}

#[cfg(test)]
#[path = "memo_tests.rs"]
mod tests;
