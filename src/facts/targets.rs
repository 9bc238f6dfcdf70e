//! facts::targets: the target facts of one Design call — its enumerated paths, the verdict of
//! the limits (client-facts §2 Zqr) before target policies, and each path's facts.
//!
//! They are a pure function of the operation's target set and the raw paths, so they are
//! remembered by that list: a call naming the same paths as an earlier one shares the earlier
//! facts (one `Arc`) instead of recomputing and copying them. Sharing is also what lets the
//! decision memo remember a whole classification (`authz::memo`): the same `Arc` is the same
//! list. Bounded by the number of paths remembered; a full memo starts over.

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use serde_json::{Map, Value};

use crate::authz::context::TargetsContext;
use crate::paths::{
    enumerate_targets, fits_batch_display, target_facts, Enumeration, PathSet, TargetFacts,
    TargetSet, MAX_TARGETS,
};

/// How many bytes of target facts the memo holds before it starts over (paths may be 4 KiB
/// each, so the bound is on bytes, not on paths).
const REMEMBERED_BYTES: usize = 32 << 20;

/// The targets of one call, as the Cedar context and the decision record need them.
#[derive(Debug)]
pub struct Targets {
    pub context: TargetsContext,
    /// Each path's facts in argument order; empty unless the verdict is `pass`.
    pub facts: Arc<Vec<TargetFacts>>,
    /// The normalized paths in argument order (for the call summary).
    pub normalized: Arc<[String]>,
}

/// The target facts of `operation` called with `arguments`, remembered when they pass.
pub fn targets(operation: &str, arguments: &Map<String, Value>) -> Arc<Targets> {
    let (set, paths) = match enumerate_targets(operation, arguments) {
        Enumeration::NotPlanGated => return unlisted("not_plan_gated", "none", 0),
        Enumeration::Unenumerable => return unlisted("unenumerable", "none", 0),
        Enumeration::Targets { set, paths } => (set, paths),
    };
    if paths.is_empty() {
        return unlisted("no_targets", set_name(set), 0);
    }
    if paths.len() > MAX_TARGETS {
        let count = i64::try_from(paths.len()).unwrap_or(i64::MAX);
        return unlisted("too_many", set_name(set), count);
    }
    MEMO.get_or_gather(set, &paths)
}

fn set_name(set: TargetSet) -> &'static str {
    match set {
        TargetSet::Writes => "writes",
        TargetSet::Deletes => "deletes",
    }
}

/// Targets that do not reach target policies: only the verdict (and count) is known.
fn unlisted(verdict: &str, set: &str, count: i64) -> Arc<Targets> {
    Arc::new(Targets {
        context: TargetsContext {
            verdict: verdict.to_string(),
            set: set.to_string(),
            paths: PathSet::default(),
            count,
            fits_batch_display: false,
        },
        facts: Arc::default(),
        normalized: Arc::default(),
    })
}

/// 1 to `MAX_TARGETS` paths: every path's facts; the limits pass.
fn gathered(set: TargetSet, paths: &[&str]) -> Targets {
    let facts: Vec<TargetFacts> = paths.iter().map(|path| target_facts(path)).collect();
    let normalized: Vec<String> = facts
        .iter()
        .map(|target| target.normalized.clone())
        .collect();
    Targets {
        context: TargetsContext {
            verdict: "pass".to_string(),
            set: set_name(set).to_string(),
            paths: PathSet::new(normalized.iter().cloned().collect::<BTreeSet<_>>()),
            count: i64::try_from(paths.len()).unwrap_or(i64::MAX),
            fits_batch_display: fits_batch_display(paths),
        },
        facts: Arc::new(facts),
        normalized: normalized.into(),
    }
}

static MEMO: LazyLock<TargetsMemo> = LazyLock::new(TargetsMemo::default);

/// Gathered targets by a hash of (set, raw paths); a hit is confirmed against the raw paths
/// themselves, so a collision is only a miss.
#[derive(Default)]
struct TargetsMemo {
    hasher: foldhash::fast::RandomState,
    lists: RwLock<Remembered>,
}

#[derive(Default)]
struct Remembered {
    by_hash: HashMap<u64, Arc<Targets>>,
    bytes: usize,
}

impl TargetsMemo {
    fn get_or_gather(&self, set: TargetSet, paths: &[&str]) -> Arc<Targets> {
        let hash = self.hash(set, paths);
        {
            let lists = self.lists.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(known) = lists.by_hash.get(&hash) {
                if is_list(known, set, paths) {
                    return Arc::clone(known);
                }
            }
        }
        let targets = Arc::new(gathered(set, paths));
        let bytes: usize = targets.facts.iter().map(TargetFacts::footprint).sum();
        let mut lists = self.lists.write().unwrap_or_else(PoisonError::into_inner);
        if lists.bytes + bytes > REMEMBERED_BYTES {
            *lists = Remembered::default();
        }
        lists.bytes += bytes;
        lists.by_hash.insert(hash, Arc::clone(&targets));
        targets
    }

    fn hash(&self, set: TargetSet, paths: &[&str]) -> u64 {
        let mut hasher = self.hasher.build_hasher();
        set_name(set).hash(&mut hasher);
        paths.hash(&mut hasher);
        hasher.finish()
    }
}

/// Whether `known` was gathered from exactly this set and these raw paths.
fn is_list(known: &Targets, set: TargetSet, paths: &[&str]) -> bool {
    known.context.set == set_name(set)
        && known.facts.len() == paths.len()
        && known
            .facts
            .iter()
            .zip(paths)
            .all(|(target, path)| target.raw == *path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::authz::context::TargetContext;
    use serde_json::json;

    fn of(operation: &str, arguments: Value) -> Arc<Targets> {
        targets(operation, arguments.as_object().unwrap())
    }

    #[test]
    fn the_same_list_shares_its_facts_and_another_list_does_not() {
        let files = json!({"files": [{"path": "memo/a.html"}, {"path": "memo\\B.html"}]});
        let first = of("write_files", files.clone());
        let again = of("write_files", files);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(*first.normalized, ["memo/a.html", "memo/B.html"]);
        assert_eq!(first.context.verdict, "pass");
        assert_eq!(first.context.count, 2);

        let reordered = of(
            "write_files",
            json!({"files": [{"path": "memo\\B.html"}, {"path": "memo/a.html"}]}),
        );
        assert!(!Arc::ptr_eq(&first, &reordered));
        assert_eq!(*reordered.normalized, ["memo/B.html", "memo/a.html"]);
        // The same raw paths as deletes are another list: the set is part of the key.
        let deletes = of(
            "delete_files",
            json!({"paths": ["memo/a.html", "memo\\B.html"]}),
        );
        assert!(!Arc::ptr_eq(&first, &deletes));
        assert_eq!(deletes.context.set, "deletes");
    }

    #[test]
    fn a_hit_is_confirmed_against_the_raw_paths() {
        let gathered = of("write_files", json!({"files": [{"path": "memo/x"}]}));
        assert!(is_list(&gathered, TargetSet::Writes, &["memo/x"]));
        assert!(!is_list(&gathered, TargetSet::Writes, &["memo/y"]));
        assert!(!is_list(&gathered, TargetSet::Deletes, &["memo/x"]));
        assert!(!is_list(
            &gathered,
            TargetSet::Writes,
            &["memo/x", "memo/x"]
        ));
    }

    /// The memo is keyed by raw paths, the snapshot's target answers by normalized path: raw
    /// paths that normalize alike get their own facts (their own `raw`), and facts that differ
    /// by an invisible character are never shared.
    #[test]
    fn raw_paths_normalizing_alike_get_their_own_facts() {
        let backslash = of(
            "write_files",
            json!({"files": [{"path": "c2\\CLAUDE.md\u{2060}"}]}),
        );
        let slash = of(
            "write_files",
            json!({"files": [{"path": "c2//CLAUDE.md\u{2060}"}]}),
        );
        assert!(!Arc::ptr_eq(&backslash, &slash));
        assert_eq!(backslash.facts[0].raw, "c2\\CLAUDE.md\u{2060}");
        assert_eq!(slash.facts[0].raw, "c2//CLAUDE.md\u{2060}");
        assert_eq!(*backslash.normalized, *slash.normalized);
        let context = |targets: &Targets| TargetContext::of(&targets.facts[0], "p1", "write_files");
        assert_eq!(context(&backslash), context(&slash));
        assert!(context(&slash).default_ignorable);
        assert_eq!(context(&slash).skeleton, "c2/claude.rnd");

        let visible = of("write_files", json!({"files": [{"path": "c2/CLAUDE.md"}]}));
        assert!(!Arc::ptr_eq(&visible, &slash));
        assert!(!visible.facts[0].default_ignorable);
        assert_ne!(visible.normalized, slash.normalized);
        assert_eq!(visible.facts[0].skeleton, slash.facts[0].skeleton);
    }

    #[test]
    fn verdicts_before_target_policies() {
        let verdict = |operation: &str, arguments: Value| {
            let targets = of(operation, arguments);
            (targets.context.verdict.clone(), targets.context.count)
        };
        assert_eq!(
            verdict("get_project", json!({})),
            ("not_plan_gated".into(), 0)
        );
        assert_eq!(
            verdict("write_files", json!({"files": 1})),
            ("unenumerable".into(), 0)
        );
        assert_eq!(
            verdict("write_files", json!({"files": []})),
            ("no_targets".into(), 0)
        );
        let many: Vec<Value> = (0..=MAX_TARGETS)
            .map(|i| json!({"path": format!("f{i}")}))
            .collect();
        assert_eq!(
            verdict("write_files", json!({"files": many})),
            ("too_many".into(), 257)
        );
    }

    #[test]
    fn a_full_memo_starts_over_however_long_the_paths() {
        let memo = TargetsMemo::default();
        // 256 paths of 4 KiB: about 4 MiB of facts per list, so a ninth list starts over.
        let long = "x".repeat(4_000);
        let paths: Vec<String> = (0..MAX_TARGETS).map(|i| format!("{long}/{i}")).collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let mut most = 0;
        for round in 0..12 {
            let mut list = paths.clone();
            let name = format!("round-{round}");
            list[0] = &name;
            memo.get_or_gather(TargetSet::Writes, &list);
            let lists = memo.lists.read().unwrap();
            assert!(lists.bytes <= REMEMBERED_BYTES, "{} bytes", lists.bytes);
            most = most.max(lists.by_hash.len());
        }
        assert!((2..12).contains(&most), "{most} lists held at most");
    }
}
