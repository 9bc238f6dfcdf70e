//! Tests for `probes`: the forms read from a policy, and outcomes equal to Cedar's.
use std::str::FromStr;

use super::*;
use cedar_policy::{Authorizer, Context, Entities, EntityUid, PolicySet, Request};

/// The probes of a policy's only condition.
fn forms(condition: &str) -> Vec<Probe> {
    let text = format!("permit (principal, action, resource) when {{ {condition} }};");
    let est = cedar_policy::Policy::from_str(&text)
        .unwrap()
        .to_json()
        .unwrap();
    probe_form(&est["conditions"][0]["body"])
        .map(|(_, probes)| probes)
        .unwrap_or_default()
}

#[test]
fn comparisons_with_constants_are_probes_and_others_are_not() {
    assert_eq!(forms(r#"context.a == "x""#), [Probe::Equals("x".into())]);
    assert_eq!(forms(r#""x" != context.a"#), [Probe::Equals("x".into())]);
    assert_eq!(
        forms(r#"context.s.contains("x")"#),
        [Probe::Contains("x".into())]
    );
    assert_eq!(
        forms(r#"context.s.containsAny(["x", "y"])"#),
        [Probe::Contains("x".into()), Probe::Contains("y".into())]
    );
    let like = forms(r#"context.a like "claude.md/*""#);
    assert!(matches!(&like[..], [Probe::Like(_)]));
    // Not a comparison with a string constant.
    assert!(forms("context.a == context.b").is_empty());
    assert!(forms("context.a == 3").is_empty());
    assert!(forms("context.s.containsAll(context.t)").is_empty());
    assert!(forms(r#"context.s.containsAll([context.a, "x"])"#).is_empty());
}

/// Cedar's own verdict on `"text" like pattern`.
fn cedar_like(text: &str, pattern: &str) -> bool {
    let escape = |raw: &str| raw.replace('\\', "\\\\").replace('"', "\\\"");
    let policy = format!(
        "permit (principal, action, resource) when {{ \"{}\" like \"{}\" }};",
        escape(text),
        pattern
    );
    let set = PolicySet::from_str(&policy).unwrap();
    let uid = EntityUid::from_str(r#"A::"a""#).unwrap();
    let request = Request::new(uid.clone(), uid.clone(), uid, Context::empty(), None).unwrap();
    let response = Authorizer::new().is_authorized(&request, &set, &Entities::empty());
    response.decision() == cedar_policy::Decision::Allow
}

/// A `like` probe's outcome is the engine's, on texts made to hit and miss the patterns
/// of the shipped target rules (wildcards, `~<digit>`, multi-byte and escaped characters).
#[test]
fn like_outcomes_are_the_engines() {
    let patterns = [
        "claude.md/*",
        "*~*",
        "*~1*",
        ".claude/*",
        "*",
        "a*b*c",
        r"a\*b",
        "*é*",
    ];
    let texts = [
        "",
        "claude.md",
        "claude.md/x",
        "claude.md/",
        "x/claude.md/y",
        "pro~1.txt",
        "pro~x",
        "~",
        ".claude/settings.json",
        "abc",
        "aXbYc",
        "a*b",
        "ab",
        "café",
        "cafe\u{301}",
    ];
    for pattern in patterns {
        let probe = &forms(&format!("context.a like \"{pattern}\""))[0];
        for text in texts {
            let Probe::Like(glob) = probe else {
                panic!("{probe:?}")
            };
            assert_eq!(
                glob.matches(text),
                cedar_like(text, pattern),
                "{text:?} like {pattern:?}"
            );
        }
    }
}

#[test]
fn probes_know_the_types_they_apply_to() {
    let texts: Probes = [Probe::Equals("x".into())].into_iter().collect();
    assert!(texts.on_texts() && !texts.on_sets());
    let sets: Probes = [Probe::Contains("x".into())].into_iter().collect();
    assert!(sets.on_sets() && !sets.on_texts());
    let mut both = texts;
    both.extend(sets);
    assert!(!both.on_texts() && !both.on_sets());
}
