//! Tests for `reads`: what a policy's text reads, and the union of a slice.
use std::collections::BTreeMap;
use std::str::FromStr;

use super::*;
use crate::authz::cache::probes::{Probe, Probes};
use cedar_policy::Policy;

fn reads(text: &str) -> Reads {
    Reads::of(&Policy::from_str(text).unwrap())
}

fn fields(entries: &[(&str, Tree)]) -> Tree {
    Tree::Fields(
        entries
            .iter()
            .map(|(name, tree)| ((*name).to_string(), tree.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

#[test]
fn attribute_chains_read_only_their_paths() {
    let policy = reads(
        r#"permit (principal, action, resource) when {
             context.design.plan.writes.containsAll(context.design.targets.paths) &&
             context.session.agent == "main" && context.design.plan.expires_at > context.now &&
             context.design.targets.count + 1 > 2
           };"#,
    );
    let related = || Tree::Probed(Probes::default());
    let expected = fields(&[
        (
            "design",
            fields(&[
                (
                    "plan",
                    fields(&[("expires_at", related()), ("writes", related())]),
                ),
                (
                    "targets",
                    fields(&[("count", Tree::Whole), ("paths", related())]),
                ),
            ]),
        ),
        ("now", related()),
        (
            "session",
            fields(&[(
                "agent",
                Tree::Probed([Probe::Equals("main".into())].into_iter().collect()),
            )]),
        ),
    ]);
    assert_eq!(policy.context, expected);
    let relations: Vec<_> = policy
        .relations
        .iter()
        .map(|relation| (relation.left.join("."), relation.right.join(".")))
        .collect();
    assert_eq!(
        relations,
        [
            ("design.plan.expires_at".into(), "now".into()),
            ("design.plan.writes".into(), "design.targets.paths".into()),
        ] as [(String, String); 2]
    );
    assert!(!policy.principal && !policy.resource);
}

/// An attribute compared only with constants is read through its probes; one also read
/// another way is read whole.
#[test]
fn comparisons_with_constants_read_through_probes() {
    let probed = reads(
        r#"permit (principal, action, resource) when {
             context.lowercase like "*~*" && context.lowercase != ".claude" &&
             context.segments.containsAny(["claude.md", ".claude"])
           };"#,
    );
    let Tree::Fields(read) = &probed.context else {
        panic!("fields: {probed:?}")
    };
    let Tree::Probed(lowercase) = &read["lowercase"] else {
        panic!("lowercase: {read:?}")
    };
    assert_eq!((lowercase.equals.len(), lowercase.likes.len()), (1, 1));
    assert_eq!(
        read["segments"],
        Tree::Probed(
            [
                Probe::Contains("claude.md".into()),
                Probe::Contains(".claude".into())
            ]
            .into_iter()
            .collect()
        )
    );
    let mixed = probed.union(reads(
        r#"permit (principal, action, resource) when { [context.lowercase].contains(context.path) };"#,
    ));
    let Tree::Fields(read) = &mixed.context else {
        panic!("fields: {mixed:?}")
    };
    assert_eq!(read["lowercase"], Tree::Whole);
    assert_eq!(read["path"], Tree::Whole);
    assert!(matches!(read["segments"], Tree::Probed(_)));
}

#[test]
fn a_context_it_cannot_follow_is_read_whole() {
    let bare = reads(r#"permit (principal, action, resource) when { context == {} };"#);
    assert_eq!(bare.context, Tree::Whole);
    let chosen = reads(
        r#"permit (principal, action, resource) when {
             (if context.a then context.b else context.c).d
           };"#,
    );
    // `a` is followed; the records chosen between are read whole, whatever is taken of them.
    assert_eq!(
        chosen.context,
        fields(&[("a", Tree::Whole), ("b", Tree::Whole), ("c", Tree::Whole)])
    );
}

#[test]
fn presence_tests_read_presence_and_join_value_reads() {
    let has = reads(r#"permit (principal, action, resource) when { context has design.plan };"#);
    assert_eq!(
        has.context,
        fields(&[("design", fields(&[("plan", Tree::Present)]))])
    );
    let both = has.union(reads(
        r#"permit (principal, action, resource) when { context.design.plan.found };"#,
    ));
    assert_eq!(
        both.context,
        fields(&[(
            "design",
            fields(&[("plan", fields(&[("found", Tree::Whole)]))])
        )])
    );
}

#[test]
fn scope_and_condition_uses_of_entities_are_reads() {
    let open = reads("permit (principal, action, resource);");
    assert_eq!(open, Reads::default());
    let pinned = reads(r#"forbid (principal, action, resource == DesignProject::"p2");"#);
    assert!(pinned.resource && !pinned.principal);
    let typed = reads("permit (principal is Agent, action, resource);");
    assert!(typed.principal && !typed.resource);
    let compared =
        reads(r#"permit (principal, action, resource) when { resource == DesignProject::"p1" };"#);
    assert!(compared.resource);
    // Literals are not reads, even when they look like variables.
    let literal =
        reads(r#"permit (principal, action, resource) when { "context" == "principal" };"#);
    assert_eq!(literal, Reads::default());
}

#[test]
fn a_whole_read_absorbs_every_other() {
    let whole = reads(r#"permit (principal, action, resource) when { context == {} };"#);
    let some = reads(r#"permit (principal, action, resource) when { context.now > 1 };"#);
    assert_eq!(some.clone().union(whole.clone()).context, Tree::Whole);
    assert_eq!(whole.union(some).context, Tree::Whole);
}
