//! authz::cache::store: the bounded store of Cedar answers, owned by a policy snapshot and
//! dropped with it, looked up by a request's key (`project::Key`).
//!
//! Bounded by bytes (`CACHE_BYTES`, keys and answers weighed), evicting with quick_cache's
//! CLOCK-Pro policy, which keeps answers asked for again and lets one-off ones go first. A
//! slice whose policies read the clock has the millisecond in its keys: its answers serve
//! the same call's second decision (the gate check and the decision share one instant) and
//! little else, and are evicted first.

use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use super::project::Key;
use super::question::Answer;

/// The most bytes the cache holds (keys, answers and the table's own share per entry).
pub const CACHE_BYTES: u64 = 16 << 20;
/// About how many entries fit (sizes the table up front).
const ESTIMATED_ENTRIES: usize = 32_768;
/// What one entry costs besides its key's bytes: the boxed key and the `Arc`'d answer with
/// their allocations, and the table's slot (with quick_cache's ghost share).
const ENTRY_BYTES: u64 = 160;
/// One node of a policy-id set: an answer's non-empty set holds at least one (11 ids each).
const SET_NODE_BYTES: u64 = 288;
const IDS_PER_NODE: usize = 11;

#[derive(Debug, Clone)]
struct Weight;

impl Weighter<Box<[u8]>, Arc<Answer>> for Weight {
    fn weight(&self, key: &Box<[u8]>, answer: &Arc<Answer>) -> u64 {
        let nodes = [answer.forbids.len(), answer.permits.len()]
            .into_iter()
            .map(|ids| ids.div_ceil(IDS_PER_NODE))
            .sum::<usize>() as u64;
        let errors: usize = answer.errors.iter().map(|error| error.len() + 24).sum();
        ENTRY_BYTES + SET_NODE_BYTES * nodes + (key.len() + errors) as u64
    }
}

pub struct AnswerCache {
    answers: Cache<Box<[u8]>, Arc<Answer>, Weight>,
}

impl Default for AnswerCache {
    fn default() -> Self {
        Self::with_capacity(CACHE_BYTES)
    }
}

impl std::fmt::Debug for AnswerCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerCache")
            .field("entries", &self.answers.len())
            .field("bytes", &self.answers.weight())
            .finish()
    }
}

impl AnswerCache {
    pub fn with_capacity(bytes: u64) -> Self {
        let entries = ESTIMATED_ENTRIES.min(usize::try_from(bytes / ENTRY_BYTES).unwrap_or(1));
        Self {
            answers: Cache::with_weighter(entries.max(1), bytes, Weight),
        }
    }

    pub fn get(&self, key: &Key) -> Option<Arc<Answer>> {
        self.answers.get(key.bytes())
    }

    pub fn insert(&self, key: Key, answer: Arc<Answer>) {
        self.answers.insert(key.into_bytes(), answer);
    }

    /// Forgets every answer (benchmarks measure the cold path with it).
    pub fn clear(&self) {
        self.answers.clear();
    }

    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The weight held, in bytes (at most `CACHE_BYTES`).
    pub fn bytes(&self) -> u64 {
        self.answers.weight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cedar_policy::PolicyId;

    /// However many distinct answers arrive, the cache holds at most its bound, and keeps
    /// answering what it holds.
    #[test]
    fn the_cache_holds_at_most_its_bound_in_bytes() {
        let cache = AnswerCache::with_capacity(1 << 20);
        let answer = Arc::new(Answer {
            permits: [PolicyId::new("targets.ordinary")].into(),
            ..Answer::default()
        });
        for n in 0..50_000u32 {
            let mut key = Key::default();
            key.text(&format!("site/page-{n}.html"));
            cache.insert(key, Arc::clone(&answer));
            assert!(cache.bytes() <= 1 << 20, "{} bytes", cache.bytes());
        }
        assert!(cache.len() < 5_000, "{} entries", cache.len());
        let mut recent = Key::default();
        recent.text("site/page-49999.html");
        assert_eq!(cache.get(&recent), Some(answer));
    }
}
