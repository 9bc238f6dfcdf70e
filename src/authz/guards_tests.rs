//! Tests for `guards`: which fact a policy tests first, and which facts cut a slice.
#![allow(clippy::unwrap_used)]

use std::str::FromStr;

use super::*;

fn guard(text: &str) -> Option<Guard> {
    Guard::of(&Policy::from_str(text).unwrap())
}

fn path(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_string()).collect()
}

#[test]
fn the_leftmost_fact_of_the_first_when_is_the_guard() {
    let tokenless = guard(
        r#"permit (principal, action, resource) when {
             context.design.tokenless && context.session.agent == "main" && context.x
           };"#,
    );
    assert_eq!(
        tokenless,
        Some(Guard {
            path: path(&["design", "tokenless"]),
            needs: true
        })
    );
    let negated = guard(
        "forbid (principal, action, resource) when { !context.design.tokenless && context.y };",
    );
    assert!(!negated.unwrap().needs);
}

#[test]
fn no_guard_where_cedar_would_evaluate_something_first() {
    // An `unless` first, a comparison, a disjunction, a bare literal: no guard.
    for text in [
        "permit (principal, action, resource) unless { context.a } when { context.b };",
        r#"permit (principal, action, resource) when { context.a == "x" && context.b };"#,
        "permit (principal, action, resource) when { context.a || context.b };",
        "permit (principal, action, resource) when { true && context.b };",
        "permit (principal, action, resource);",
    ] {
        assert_eq!(guard(text), None, "{text}");
    }
}

#[test]
fn an_assignment_falsifies_the_guards_it_contradicts() {
    let facts = vec![
        path(&["design", "tokenless"]),
        path(&["design", "read_only"]),
    ];
    let needs_tokenless = Guard {
        path: path(&["design", "tokenless"]),
        needs: true,
    };
    assert!(needs_tokenless.falsified_by(&facts, 0b00));
    assert!(!needs_tokenless.falsified_by(&facts, 0b01));
    assert!(needs_tokenless.falsified_by(&facts, 0b10));
    let other = Guard {
        path: path(&["session", "interactive"]),
        needs: true,
    };
    assert!(
        !other.falsified_by(&facts, 0b00),
        "a fact not chosen cuts nothing"
    );
}

#[test]
fn the_facts_guarding_most_policies_are_chosen() {
    let g = |names: &[&str], needs| {
        Some(Guard {
            path: path(names),
            needs,
        })
    };
    let guards = [
        g(&["t"], true),
        g(&["t"], false),
        g(&["t"], true),
        g(&["r"], true),
        g(&["r"], true),
        g(&["once"], true),
        None,
    ];
    let refs: Vec<Option<&Guard>> = guards.iter().map(Option::as_ref).collect();
    assert_eq!(choose(&refs), [path(&["t"]), path(&["r"])]);
}
