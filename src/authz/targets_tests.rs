//! Tests for `targets`: a list of targets seen before reuses its whole classification, and
//! only that very list (the same `Arc`) does; every target's class is the one Cedar gives.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::sync::Arc;

use super::*;
use crate::authz::{baseline, requests::Memoized};
use crate::facts::EntityRef;
use crate::paths::target_facts;

fn snapshot() -> PolicySnapshot {
    PolicySnapshot::load(&baseline::schema_source(), &baseline::policy_sources()).unwrap()
}

fn list(paths: &[&str]) -> Arc<Vec<TargetFacts>> {
    Arc::new(paths.iter().map(|path| target_facts(path)).collect())
}

/// Classifies `targets` as writes of `write_files` on project p1 by the main agent.
fn classify_writes(snapshot: &PolicySnapshot, targets: &Arc<Vec<TargetFacts>>) -> Classification {
    classify_in(snapshot, "p1", targets)
}

fn classify_in(
    snapshot: &PolicySnapshot,
    project: &str,
    targets: &Arc<Vec<TargetFacts>>,
) -> Classification {
    let uid = |entity: &EntityRef| entity.uid().unwrap();
    let (principal, action, resource) = (
        EntityRef::new("Agent", "main"),
        EntityRef::action("write_target"),
        EntityRef::new("DesignProject", project),
    );
    let call = TargetCall {
        principal: &uid(&principal),
        action: &uid(&action),
        resource: &uid(&resource),
        action_name: action.to_string().into(),
        principal_name: &principal.to_string().into(),
        resource_name: &resource.to_string().into(),
        project_id: project,
        operation: "write_files",
    };
    classify(snapshot, &call, targets)
}

fn memoized(classification: &Classification) -> Memoized {
    classification.requests.memoized.clone()
}

#[test]
fn a_list_seen_before_reuses_its_whole_classification() {
    let snapshot = snapshot();
    let targets = list(&["site/a.html", "site/CLAUDE.md", "site/a.html", ".claude/x"]);
    let first = classify_writes(&snapshot, &targets);
    assert_eq!(memoized(&first), Memoized::Each(vec![false, false, false]));
    assert_eq!(
        *first.classified.distinct,
        [0, 1, 3],
        "one request per distinct path"
    );
    let blocked: Vec<&str> = first
        .classified
        .blocked
        .iter()
        .map(|target| target.path.as_str())
        .collect();
    assert_eq!(blocked, ["site/CLAUDE.md", ".claude/x"]);

    let again = classify_writes(&snapshot, &targets);
    assert!(Arc::ptr_eq(&first.classified, &again.classified));
    assert_eq!(memoized(&again), Memoized::All(true));
    assert_eq!(again.requests.asked, first.requests.asked);
}

#[test]
fn an_equal_list_that_is_not_the_same_list_is_classified_path_by_path() {
    let snapshot = snapshot();
    let paths = ["site/b.html", "site/.claude/settings.json"];
    let first = classify_writes(&snapshot, &list(&paths));
    let equal = classify_writes(&snapshot, &list(&paths));
    assert!(!Arc::ptr_eq(&first.classified, &equal.classified));
    // Every path answer comes from the per-path memo, and the class is the same.
    assert_eq!(memoized(&equal), Memoized::Each(vec![true, true]));
    assert_eq!(equal.classified.blocked, first.classified.blocked);
    assert_eq!(equal.classified.policies, first.classified.policies);
    assert_eq!(equal.classified.blocked.len(), 1);
}

#[test]
fn another_call_shape_does_not_share_a_classification() {
    let snapshot = snapshot();
    let targets = list(&["site/c.html"]);
    let writes = classify_writes(&snapshot, &targets);
    let other_project = classify_in(&snapshot, "p2", &targets);
    assert!(!Arc::ptr_eq(&writes.classified, &other_project.classified));
    assert_eq!(memoized(&other_project), Memoized::Each(vec![false]));
}
