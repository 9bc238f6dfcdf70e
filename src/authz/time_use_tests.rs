//! Tests for `time_use`: real Cedar policies, read through the engine's own JSON form.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeSet;
use std::str::FromStr;

use cedar_policy::Policy;

use super::{Threshold, TimeUse};

fn use_of(condition: &str) -> TimeUse {
    let text = format!("permit (principal, action, resource) when {{ {condition} }};");
    TimeUse::of(&Policy::from_str(&text).unwrap())
}

fn attribute(path: &[&str]) -> Threshold {
    Threshold::Attribute(path.iter().map(|part| part.to_string()).collect())
}

fn thresholds(items: Vec<Threshold>) -> TimeUse {
    TimeUse::Thresholds(items.into_iter().collect::<BTreeSet<_>>())
}

#[test]
fn a_policy_that_never_reads_the_clock_holds_at_any_time() {
    assert_eq!(use_of("context.design.plan.found"), TimeUse::Never);
    assert_eq!(use_of("context has now"), TimeUse::Never);
    assert_eq!(
        TimeUse::of(&Policy::from_str("permit (principal, action, resource);").unwrap()),
        TimeUse::Never
    );
}

#[test]
fn comparisons_with_attributes_and_literals_are_thresholds() {
    assert_eq!(
        use_of("context.design.plan.expires_at > context.now"),
        thresholds(vec![attribute(&["design", "plan", "expires_at"])])
    );
    assert_eq!(
        use_of("context.now <= 1700000000000 && context.now != context.deadline"),
        thresholds(vec![
            Threshold::Literal(1_700_000_000_000),
            attribute(&["deadline"])
        ])
    );
    for op in ["<", "<=", ">", ">=", "==", "!="] {
        assert_eq!(
            use_of(&format!("context.now {op} 5")),
            thresholds(vec![Threshold::Literal(5)]),
            "{op}"
        );
    }
}

#[test]
fn any_other_read_of_the_clock_is_opaque() {
    for condition in [
        "context.now + 1000 > context.design.plan.expires_at",
        "context.design.plan.expires_at - context.now > 5",
        "context.now > context.now + 1",
        "context.now in [1, 2]",
        "[context.now].contains(5)",
        "{\"Value\": context.now}.Value > 5",
        "{\"x\": context}.x.now > 5",
        "context == context",
        "if context.now > 5 then true else context.now == 3",
    ] {
        let use_ = use_of(condition);
        // The `if` case compares only, so it is followed; everything else is not.
        if condition.starts_with("if") {
            assert_eq!(
                use_,
                thresholds(vec![Threshold::Literal(3), Threshold::Literal(5)])
            );
        } else {
            assert_eq!(use_, TimeUse::Opaque, "{condition}");
        }
    }
}

#[test]
fn comparing_with_a_negative_literal_is_followed_or_opaque_never_missed() {
    let use_ = use_of("context.now > -5");
    assert!(
        use_ == thresholds(vec![Threshold::Literal(-5)]) || use_ == TimeUse::Opaque,
        "{use_:?}"
    );
}

#[test]
fn union_is_opaque_if_either_is_and_merges_thresholds() {
    let a = thresholds(vec![Threshold::Literal(1)]);
    let b = thresholds(vec![Threshold::Literal(2)]);
    assert_eq!(
        a.clone().union(b),
        thresholds(vec![Threshold::Literal(1), Threshold::Literal(2)])
    );
    assert_eq!(a.clone().union(TimeUse::Never), a);
    assert_eq!(TimeUse::Never.union(a.clone()), a);
    assert_eq!(a.union(TimeUse::Opaque), TimeUse::Opaque);
    assert_eq!(TimeUse::Never.union(TimeUse::Never), TimeUse::Never);
}

#[test]
fn the_shipped_plan_policies_compare_the_clock_with_the_plan_expiry_only() {
    let plans = crate::authz::baseline::POLICIES
        .iter()
        .find(|(name, _)| name.ends_with("plans.cedar"))
        .unwrap()
        .1;
    let policies = cedar_policy::PolicySet::from_str(plans).unwrap();
    let combined = policies
        .policies()
        .map(TimeUse::of)
        .fold(TimeUse::Never, TimeUse::union);
    assert_eq!(
        combined,
        thresholds(vec![attribute(&["design", "plan", "expires_at"])])
    );
}
