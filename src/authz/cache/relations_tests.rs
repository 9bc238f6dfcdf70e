//! Tests for `relations`: the forms read from a policy, and outcomes equal to Cedar's.
use std::collections::BTreeSet;
use std::str::FromStr;

use super::*;
use crate::authz::cache::project::Attributes;
use crate::authz::cache::reads::{Reads, Tree};
use cedar_policy::{
    Authorizer, Context, Entities, EntityUid, PolicySet, Request, RestrictedExpression,
};

/// A record of a Long, two strings and two sets, as a context.
struct Values {
    now: i64,
    expires_at: i64,
    project_id: String,
    plan_project: String,
    paths: BTreeSet<String>,
    writes: Vec<String>,
}

impl Attributes for Values {
    const NAMES: &'static [&'static str] = &[
        "now",
        "expires_at",
        "project_id",
        "plan_project",
        "paths",
        "writes",
    ];

    fn attribute(&self, name: &str) -> Option<&dyn Fact> {
        Some(match name {
            "now" => &self.now,
            "expires_at" => &self.expires_at,
            "project_id" => &self.project_id,
            "plan_project" => &self.plan_project,
            "paths" => &self.paths,
            "writes" => &self.writes,
            _ => return None,
        })
    }
}

const CONDITIONS: &[&str] = &[
    "context.expires_at > context.now",
    "context.expires_at <= context.now",
    "context.now >= context.expires_at",
    "context.now < context.expires_at",
    "context.now == context.expires_at",
    "context.project_id == context.plan_project",
    "context.project_id != context.plan_project",
    "context.writes.containsAll(context.paths)",
    "context.paths.containsAny(context.writes)",
    "context.writes.contains(context.project_id)",
    "context.paths == context.writes",
];

fn policy(condition: &str) -> String {
    format!("permit (principal, action, resource) when {{ {condition} }};")
}

/// Cedar's decision on `condition` with `values` as the context.
fn cedar(condition: &str, values: &Values) -> bool {
    let set = PolicySet::from_str(&policy(condition)).unwrap();
    let strings = |members: &mut dyn Iterator<Item = &String>| {
        RestrictedExpression::new_set(members.map(|m| RestrictedExpression::new_string(m.clone())))
    };
    let context = Context::from_pairs([
        (
            "now".to_string(),
            RestrictedExpression::new_long(values.now),
        ),
        (
            "expires_at".to_string(),
            RestrictedExpression::new_long(values.expires_at),
        ),
        (
            "project_id".to_string(),
            RestrictedExpression::new_string(values.project_id.clone()),
        ),
        (
            "plan_project".to_string(),
            RestrictedExpression::new_string(values.plan_project.clone()),
        ),
        ("paths".to_string(), strings(&mut values.paths.iter())),
        ("writes".to_string(), strings(&mut values.writes.iter())),
    ])
    .unwrap();
    let uid = EntityUid::from_str(r#"A::"a""#).unwrap();
    let request = Request::new(uid.clone(), uid.clone(), uid, context, None).unwrap();
    let response = Authorizer::new().is_authorized(&request, &set, &Entities::empty());
    assert_eq!(response.diagnostics().errors().count(), 0, "{condition}");
    response.decision() == cedar_policy::Decision::Allow
}

/// The relation a one-comparison policy reads, and that it marks both sides probed.
fn relation(condition: &str) -> Relation {
    let reads = Reads::of(&cedar_policy::Policy::from_str(&policy(condition)).unwrap());
    let Tree::Fields(fields) = &reads.context else {
        panic!("{reads:?}")
    };
    assert!(
        fields.values().all(|tree| matches!(tree, Tree::Probed(_))),
        "{reads:?}"
    );
    assert_eq!(reads.relations.len(), 1, "{condition}");
    reads.relations.into_iter().next().unwrap()
}

fn outcome(relation: &Relation, values: &Values) -> bool {
    let mut key = Key::default();
    relation.write(values, &mut key);
    match key.bytes() {
        [flag] => *flag == 1,
        bytes => panic!("not an outcome: {bytes:?}"),
    }
}

/// Each relation's outcome is Cedar's verdict on the comparison, over values that make each
/// hold and fail (equal clocks, equal and unequal sets, a list with repeats).
#[test]
fn relation_outcomes_are_cedars() {
    let set = |paths: &[&str]| {
        paths
            .iter()
            .map(|path| path.to_string())
            .collect::<BTreeSet<_>>()
    };
    let list = |paths: &[&str]| {
        paths
            .iter()
            .map(|path| path.to_string())
            .collect::<Vec<_>>()
    };
    let cases = [
        (10, 20, "p1", "p1", set(&["a", "b"]), list(&["b", "a", "c"])),
        (20, 20, "p1", "p2", set(&["a", "b"]), list(&["a", "b", "a"])),
        (30, 20, "p2", "p2", set(&[]), list(&[])),
        (
            -5,
            i64::MAX,
            "a",
            "p1",
            set(&["p1", "z"]),
            list(&["z", "a"]),
        ),
    ];
    for (now, expires_at, project_id, plan_project, paths, writes) in cases {
        let values = Values {
            now,
            expires_at,
            project_id: project_id.to_string(),
            plan_project: plan_project.to_string(),
            paths,
            writes,
        };
        for condition in CONDITIONS {
            let relation = relation(condition);
            // `!=` shares `==`'s outcome: the key needs only what decides both.
            let expected = cedar(&condition.replace("!=", "=="), &values);
            assert_eq!(outcome(&relation, &values), expected, "{condition}");
        }
    }
}

/// A side missing from the context is no outcome: both sides are written whole.
#[test]
fn a_missing_side_is_written_whole() {
    let relation = Relation {
        operator: Operator::Less,
        left: vec!["now".into()],
        right: vec!["nowhere".into()],
    };
    let values = Values {
        now: 1,
        expires_at: 2,
        project_id: String::new(),
        plan_project: String::new(),
        paths: BTreeSet::new(),
        writes: Vec::new(),
    };
    let mut key = Key::default();
    relation.write(&values, &mut key);
    assert!(key.bytes().len() > 1, "{:?}", key.bytes());
}
