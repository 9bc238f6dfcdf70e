//! facts::targets: the target facts of one Design call — its enumerated paths, the verdict of
//! the limits (client-facts §2 Zqr) before target policies, and each path's facts.
//!
//! They are gathered afresh for every call: a pure function of the operation's target set
//! and the raw paths, and cheap (the look-alike facts are derived only when a policy reads
//! them).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::authz::context::TargetsContext;
use crate::paths::{
    enumerate_targets, fits_batch_display, target_facts, Enumeration, PathSet, TargetFacts,
    TargetSet, MAX_TARGETS,
};

/// The targets of one call, as the Cedar context and the decision record need them.
#[derive(Debug)]
pub struct Targets {
    pub context: TargetsContext,
    /// Each path's facts in argument order; empty unless the verdict is `pass`.
    pub facts: Arc<Vec<TargetFacts>>,
    /// The normalized paths in argument order (for the call summary).
    pub normalized: Arc<[String]>,
}

/// The target facts of `operation` called with `arguments`.
pub fn targets(operation: &str, arguments: &Map<String, Value>) -> Targets {
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
    gathered(set, &paths)
}

fn set_name(set: TargetSet) -> &'static str {
    match set {
        TargetSet::Writes => "writes",
        TargetSet::Deletes => "deletes",
    }
}

/// Targets that do not reach target policies: only the verdict (and count) is known.
fn unlisted(verdict: &str, set: &str, count: i64) -> Targets {
    Targets {
        context: TargetsContext {
            verdict: verdict.to_string(),
            set: set.to_string(),
            paths: PathSet::default(),
            count,
            fits_batch_display: false,
        },
        facts: Arc::default(),
        normalized: Arc::default(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authz::context::TargetContext;
    use serde_json::json;

    fn of(operation: &str, arguments: Value) -> Targets {
        targets(operation, arguments.as_object().unwrap())
    }

    #[test]
    fn targets_keep_argument_order_and_their_set() {
        let files = json!({"files": [{"path": "memo/a.html"}, {"path": "memo\\B.html"}]});
        let first = of("write_files", files);
        assert_eq!(*first.normalized, ["memo/a.html", "memo/B.html"]);
        assert_eq!(first.context.verdict, "pass");
        assert_eq!(first.context.count, 2);
        assert_eq!(first.context.set, "writes");
        let deletes = of(
            "delete_files",
            json!({"paths": ["memo/a.html", "memo\\B.html"]}),
        );
        assert_eq!(deletes.context.set, "deletes");
        assert_eq!(deletes.context.paths, first.context.paths);
    }

    /// Raw paths that normalize alike keep their own `raw` and have the same context; facts
    /// that differ by an invisible character differ.
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
        assert_eq!(backslash.facts[0].raw, "c2\\CLAUDE.md\u{2060}");
        assert_eq!(slash.facts[0].raw, "c2//CLAUDE.md\u{2060}");
        assert_eq!(*backslash.normalized, *slash.normalized);
        let context = |targets: &Targets| TargetContext::of(&targets.facts[0], "p1", "write_files");
        assert_eq!(context(&backslash), context(&slash));
        assert!(context(&slash).default_ignorable);
        assert_eq!(context(&slash).skeleton, "c2/claude.rnd");

        let visible = of("write_files", json!({"files": [{"path": "c2/CLAUDE.md"}]}));
        assert!(!visible.facts[0].look_alike().default_ignorable);
        assert_ne!(visible.normalized, slash.normalized);
        assert_eq!(
            visible.facts[0].look_alike().skeleton,
            slash.facts[0].look_alike().skeleton
        );
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
}
