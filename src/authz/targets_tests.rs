//! Tests for `targets`: one request per distinct path, every target's class the one Cedar
//! gives, and cached answers that are the answers Cedar gives.
use std::sync::Arc;

use super::*;
use crate::authz::EntityRef;
use crate::authz::{baseline, Source};
use crate::paths::target_facts;

fn snapshot_with(extra: &[Source]) -> PolicySnapshot {
    let mut sources = baseline::policy_sources();
    sources.extend_from_slice(extra);
    PolicySnapshot::load(&baseline::schema_source(), &sources).unwrap()
}

fn list(paths: &[&str]) -> Arc<Vec<TargetFacts>> {
    Arc::new(paths.iter().map(|path| target_facts(path)).collect())
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
    let (project_id, operation) = (project.to_string(), "write_files".to_string());
    let call = TargetCall {
        principal: &uid(&principal),
        action: &uid(&action),
        resource: &uid(&resource),
        action_name: action.to_string().into(),
        principal_name: &principal.to_string().into(),
        resource_name: &resource.to_string().into(),
        project_id: &project_id,
        operation: &operation,
    };
    classify(
        snapshot,
        crate::authz::evaluate::Evaluator::Cache,
        &call,
        targets,
    )
}

fn blocked(classification: &Classification) -> Vec<&str> {
    classification
        .classified
        .blocked
        .iter()
        .map(|target| target.path.as_str())
        .collect()
}

#[test]
fn one_request_per_distinct_path_and_reserved_paths_blocked() {
    let snapshot = snapshot_with(&[]);
    let targets = list(&["site/a.html", "site/CLAUDE.md", "site\\a.html", ".claude/x"]);
    let first = classify_in(&snapshot, "p1", &targets);
    assert_eq!(
        *first.requests.asked,
        [0, 1, 3],
        "one request per distinct path"
    );
    assert_eq!(blocked(&first), ["site/CLAUDE.md", ".claude/x"]);
    assert!(first.classified.errors.is_empty());
}

#[test]
fn a_cached_classification_is_the_one_cedar_gives() {
    let snapshot = snapshot_with(&[]);
    let targets = list(&["site/b.html", "site/.claude/settings.json", "docs/x~1.md"]);
    let first = classify_in(&snapshot, "p1", &targets);
    let cached = snapshot.cache().len();
    assert!(cached >= 3, "{cached} answers cached");
    let again = classify_in(
        &snapshot,
        "p1",
        &list(&["site/b.html", "site/.claude/settings.json", "docs/x~1.md"]),
    );
    assert_eq!(
        snapshot.cache().len(),
        cached,
        "every answer came from the cache"
    );
    assert_eq!(again.classified.blocked, first.classified.blocked);
    assert_eq!(again.classified.policies, first.classified.policies);
    snapshot.cache().clear();
    let fresh = classify_in(&snapshot, "p1", &targets);
    assert_eq!(fresh.classified.blocked, first.classified.blocked);
    assert_eq!(fresh.classified.policies, first.classified.policies);
}

/// Baseline target policies read nothing of the project, so projects share answers; a rule
/// pinned to one project reads it, and that project's answers are its own.
#[test]
fn a_project_pinned_rule_keeps_its_project_apart() {
    let pinned = Source::new(
        "managed/p2-secrets.cedar",
        "@id(\"managed.p2-secrets\")\n@reason(\"p2 secrets are reserved\")\n\
         forbid (principal, action == Action::\"write_target\", resource == DesignProject::\"p2\")\n\
         when { context.lowercase like \"secrets/*\" };",
    );
    let snapshot = snapshot_with(&[pinned]);
    let targets = list(&["secrets/key.txt"]);
    let p1 = classify_in(&snapshot, "p1", &targets);
    let p2 = classify_in(&snapshot, "p2", &targets);
    let p3 = classify_in(&snapshot, "p3", &targets);
    assert!(blocked(&p1).is_empty());
    assert_eq!(blocked(&p2), ["secrets/key.txt"]);
    assert!(blocked(&p3).is_empty());
    assert_eq!(
        p2.classified.policies,
        ["managed.p2-secrets".to_string()].into()
    );
    // p1 and p3 asked the same question of the same slice: one answer serves both.
    assert_eq!(snapshot.cache().len(), 2);
}
