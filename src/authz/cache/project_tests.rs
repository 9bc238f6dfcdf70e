//! Tests for `project`: keys encode exactly what a tree reads, and the Cedar record holds the
//! same parts.
use std::collections::BTreeMap;

use super::*;
use crate::authz::context::{SessionContext, TargetContext, TargetRequestView};
use crate::paths::target_facts;

fn session(agent: &str, mode: &str) -> SessionContext {
    SessionContext {
        agent: agent.to_string(),
        agent_id: "id-1".to_string(),
        mode: mode.to_string(),
        interactive: true,
        permission_hook: false,
        bypass_available: false,
        bypass: false,
        may_record: true,
        attestation: "none".to_string(),
        attestation_required: false,
    }
}

fn only(names: &[&str]) -> Tree {
    Tree::Fields(
        names
            .iter()
            .map(|name| ((*name).to_string(), Tree::Whole))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn key_of(fact: &dyn Fact, tree: &Tree) -> Key {
    let mut key = Key::default();
    fact.project(tree, &mut key);
    key
}

#[test]
fn facts_no_tree_reads_do_not_change_the_key() {
    let tree = only(&["agent"]);
    let one = key_of(&session("main", "default"), &tree);
    let other = key_of(&session("main", "plan"), &tree);
    assert_eq!(one, other, "mode is not read");
    assert_ne!(one, key_of(&session("sub", "default"), &tree));
    assert_ne!(
        key_of(&session("main", "default"), &Tree::Whole),
        key_of(&session("main", "plan"), &Tree::Whole)
    );
}

#[test]
fn strings_are_self_delimiting() {
    // "ab" + "c" and "a" + "bc" read in sequence must not meet.
    let tree = only(&["agent", "mode"]);
    assert_ne!(
        key_of(&session("ab", "c"), &tree),
        key_of(&session("a", "bc"), &tree)
    );
}

#[test]
fn the_cedar_record_holds_exactly_the_read_fields() {
    let tree = only(&["agent", "interactive"]);
    let projected = session("main", "plan").projected(&tree).unwrap();
    let text = format!("{projected:?}");
    assert!(
        text.contains("agent") && text.contains("interactive"),
        "{text}"
    );
    assert!(!text.contains("mode") && !text.contains("plan"), "{text}");
}

/// The borrowed target view and the owned target context are one record: the same Cedar
/// context for any tree, on paths with backslashes, dot segments, rejected and invisible
/// characters.
#[test]
fn the_target_view_is_the_target_context() {
    let paths = [
        "a\\b/./c.html",
        "CLAUDE.md\u{2060}",
        "x/#y",
        "ＣＬＡＵＤＥ.md",
        "../up",
        "claude~1.md",
    ];
    let (project, operation) = ("p1".to_string(), "write_files".to_string());
    let trees = [
        Tree::Whole,
        only(&["lowercase", "segments"]),
        only(&["skeleton", "default_ignorable", "project_id"]),
    ];
    for path in paths {
        let facts = target_facts(path);
        let view = TargetRequestView {
            target: &facts,
            project_id: &project,
            operation: &operation,
        };
        let owned = TargetContext::of(&facts, &project, &operation);
        for tree in &trees {
            let from_view = super::cedar_context(&view, tree).unwrap();
            let from_owned = super::cedar_context(&owned, tree).unwrap();
            assert_eq!(
                canonical(&format!("{from_view:?}")),
                canonical(&format!("{from_owned:?}")),
                "{path:?}"
            );
        }
    }
}

/// A context's debug text without the order of Cedar's hash-set mirror of each set (its
/// authoritative, ordered copy stays).
fn canonical(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("fast: Some({") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let end = after.find("})").unwrap() + 2;
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
