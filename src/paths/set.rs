//! paths::set: [`PathSet`], a set of normalized paths shared rather than copied between a plan,
//! the facts of every call that matches against it, and the decision memo's keys. Hashing one
//! is constant time: its digest is computed once, when the set is made.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Seeded once per process: equal sets get equal digests, and nobody outside can aim for
/// colliding ones.
static DIGEST: LazyLock<foldhash::fast::RandomState> = LazyLock::new(Default::default);

/// An immutable set of paths; clones share it.
#[derive(Clone)]
pub struct PathSet(Arc<Digested>);

struct Digested {
    paths: BTreeSet<String>,
    digest: u64,
}

impl PathSet {
    pub fn new(paths: BTreeSet<String>) -> Self {
        let digest = DIGEST.hash_one(&paths);
        Self(Arc::new(Digested { paths, digest }))
    }
}

impl Default for PathSet {
    fn default() -> Self {
        Self::new(BTreeSet::new())
    }
}

impl Deref for PathSet {
    type Target = BTreeSet<String>;

    fn deref(&self) -> &BTreeSet<String> {
        &self.0.paths
    }
}

impl From<BTreeSet<String>> for PathSet {
    fn from(paths: BTreeSet<String>) -> Self {
        Self::new(paths)
    }
}

impl FromIterator<String> for PathSet {
    fn from_iter<I: IntoIterator<Item = String>>(paths: I) -> Self {
        Self::new(paths.into_iter().collect())
    }
}

impl PartialEq for PathSet {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.digest == other.0.digest && self.0.paths == other.0.paths)
    }
}

impl Eq for PathSet {}

/// Consistent with `Eq`: equal sets have equal digests.
impl Hash for PathSet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.digest);
    }
}

impl std::fmt::Debug for PathSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.paths.fmt(f)
    }
}

impl Serialize for PathSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.paths.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PathSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeSet::deserialize(deserializer).map(Self::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(paths: &[&str]) -> PathSet {
        paths.iter().map(|path| (*path).to_string()).collect()
    }

    #[test]
    fn equal_sets_made_apart_are_equal_and_hash_alike() {
        let (one, other) = (set(&["b", "a"]), set(&["a", "b", "a"]));
        assert_eq!(one, other);
        let state = std::hash::RandomState::new();
        assert_eq!(state.hash_one(&one), state.hash_one(&other));
        assert_ne!(one, set(&["a"]));
        assert_ne!(set(&[]), set(&[""]));
        assert_eq!(PathSet::default(), set(&[]));
    }

    #[test]
    fn it_reads_and_round_trips_as_a_plain_set() {
        let paths = set(&["x/y", "a"]);
        assert_eq!(paths.len(), 2);
        assert!(paths.contains("x/y"));
        let json = serde_json::to_string(&paths).unwrap();
        assert_eq!(json, r#"["a","x/y"]"#);
        assert_eq!(serde_json::from_str::<PathSet>(&json).unwrap(), paths);
    }
}
