//! state::plans tests: registration rules, expiry, clearing by project key (client-facts §3).
use super::*;
use crate::state::test_support::{approval, NOW, PROJECT};
use std::collections::BTreeSet;
use time::Duration;

fn strings(paths: &[&str]) -> Vec<String> {
    paths.iter().map(|path| (*path).to_owned()).collect()
}

fn registered(store: &PlanStore, token: &str, project_id: &str) -> ApprovedPlan {
    let writes = strings(&["index.html"]);
    store
        .finalize_approved(approval(token, project_id, &writes), NOW)
        .unwrap()
}

fn tokens(store: &PlanStore) -> Vec<String> {
    store
        .snapshot()
        .into_iter()
        .map(|plan| plan.token)
        .collect()
}

#[test]
fn registration_stores_normalized_sets_keyed_by_token() {
    let store = PlanStore::default();
    let writes = strings(&["a\\b.js", "./a/b.js", "c//d.css"]);
    let deletes = strings(&["old/./x.png"]);
    let plan = store
        .finalize_approved(
            PlanApproval {
                deletes: &deletes,
                ..approval("t1", PROJECT, &writes)
            },
            NOW,
        )
        .unwrap();
    assert_eq!(
        plan.writes,
        PathSet::new(BTreeSet::from(["a/b.js".to_owned(), "c/d.css".to_owned()]))
    );
    assert_eq!(*plan.deletes, BTreeSet::from(["old/x.png".to_owned()]));
    assert_eq!(plan.project_id, PROJECT);
    assert_eq!(store.get("t1"), Some(plan));
    assert_eq!(store.get("t2"), None);
    assert_eq!(store.len(), 1);
}

#[test]
fn expiry_without_server_value_is_now_plus_fifteen_minutes() {
    let store = PlanStore::default();
    assert_eq!(
        registered(&store, "t", PROJECT).expires_at,
        NOW + Duration::minutes(15)
    );
}

/// Registers token `t` for `PROJECT` at `NOW` with the given server expiry.
fn finalized_with_expiry(
    store: &PlanStore,
    server_expiry: OffsetDateTime,
) -> Result<ApprovedPlan, PlanRefusal> {
    let writes = strings(&["a"]);
    let base = approval("t", PROJECT, &writes);
    store.finalize_approved(
        PlanApproval {
            server_expiry: Some(server_expiry),
            ..base
        },
        NOW,
    )
}

#[test]
fn expiry_takes_an_earlier_server_value() {
    let store = PlanStore::default();
    let server = NOW + Duration::minutes(5);
    assert_eq!(
        finalized_with_expiry(&store, server).unwrap().expires_at,
        server
    );
}

#[test]
fn expiry_caps_a_later_server_value_at_fifteen_minutes() {
    let store = PlanStore::default();
    let just_over = NOW + PLAN_TTL + Duration::nanoseconds(1);
    for server in [NOW + PLAN_TTL, just_over, NOW + Duration::days(1)] {
        let plan = finalized_with_expiry(&store, server).unwrap();
        assert_eq!(plan.expires_at, NOW + PLAN_TTL);
    }
}

#[test]
fn server_expiry_at_or_before_now_is_refused_and_just_after_is_kept() {
    let store = PlanStore::default();
    for server_expiry in [NOW, NOW - Duration::seconds(1)] {
        let refusal = finalized_with_expiry(&store, server_expiry).unwrap_err();
        assert_eq!(refusal, PlanRefusal::ExpiryPassed { server_expiry });
    }
    assert!(store.is_empty());
    let just_after = NOW + Duration::nanoseconds(1);
    assert_eq!(
        finalized_with_expiry(&store, just_after)
            .unwrap()
            .expires_at,
        just_after
    );
}

#[test]
fn now_at_the_end_of_time_saturates_instead_of_panicking() {
    let store = PlanStore::default();
    let writes = strings(&["a"]);
    let end = time::PrimitiveDateTime::MAX.assume_utc();
    let plan = store
        .finalize_approved(approval("t", PROJECT, &writes), end)
        .unwrap();
    assert_eq!(plan.expires_at, end);
}

#[test]
fn each_rule_refuses_in_order() {
    use PlanRefusal::*;
    let writes = strings(&["a"]);
    let base = approval("t", PROJECT, &writes);
    #[rustfmt::skip]
    let cases = [
        (PlanApproval { ask_was_shown: false, prompt_reaches_user: false, ..base }, AskNotShown),
        (PlanApproval { prompt_reaches_user: false, result_is_error: true, ..base }, PromptUnreachable),
        (PlanApproval { main_agent_without_hook: false, token: "", ..base }, NotMainAgentWithoutHook),
        (PlanApproval { result_is_error: true, scope: Some("project"), ..base }, ErrorResult),
        (PlanApproval { token: "", project_id: "", ..base }, EmptyToken),
        (PlanApproval { scope: Some("project"), project_id: "", ..base }, ProjectScope),
        (
            PlanApproval { project_id: "", server_expiry: Some(NOW), ..base },
            ProjectNotRegistrable { project_id: String::new() },
        ),
    ];
    for (approval, expected) in cases {
        let store = PlanStore::default();
        assert_eq!(store.finalize_approved(approval, NOW), Err(expected));
        assert!(store.is_empty());
    }
}

#[test]
fn other_scopes_are_registered() {
    let writes = strings(&["a"]);
    for scope in ["paths", "Project", "project ", ""] {
        let store = PlanStore::default();
        let result = store.finalize_approved(
            PlanApproval {
                scope: Some(scope),
                ..approval("t", PROJECT, &writes)
            },
            NOW,
        );
        assert!(result.is_ok(), "scope `{scope}`");
    }
}

#[test]
fn refusal_messages_follow_the_style() {
    let refusal = PlanRefusal::ProjectNotRegistrable {
        project_id: "p q".to_owned(),
    };
    assert_eq!(
        refusal.to_string(),
        "project id `p q` cannot hold an approved plan"
    );
    assert_eq!(
        PlanRefusal::ProjectScope.to_string(),
        "plan scope `project` is no longer supported"
    );
    let expiry = PlanRefusal::ExpiryPassed { server_expiry: NOW }.to_string();
    assert!(expiry.starts_with("server expiry `2025-06-01"), "{expiry}");
}

#[test]
fn refinalize_with_id_variants_clears_the_earlier_plan() {
    let store = PlanStore::default();
    let variants = [
        "urn:uuid:0a1b2c3d-0000-4000-8000-00000000abcd",
        "{0A1B2C3D-0000-4000-8000-00000000ABCD}",
        "0a1b2c3d00004000800000000000abcd",
        "URN:UUID:{0a1b2c3d-0000-4000-8000-00000000abcd}",
    ];
    registered(&store, "other", "another-project");
    for (index, variant) in variants.iter().enumerate() {
        registered(&store, "first", PROJECT);
        let token = format!("second-{index}");
        let writes = strings(&["index.html"]);
        // Spellings with `:` or braces are not registrable (znS), but they still clear.
        let registered = store
            .finalize_approved(approval(&token, variant, &writes), NOW)
            .is_ok();
        assert_eq!(store.get("first"), None, "variant `{variant}`");
        let mut expected = vec!["other".to_owned()];
        if registered {
            expected.push(token);
        }
        assert_eq!(tokens(&store), expected);
    }
}

#[test]
fn a_refused_refinalize_still_clears_the_earlier_plan() {
    let store = PlanStore::default();
    registered(&store, "first", PROJECT);
    let writes = strings(&["a"]);
    let shouted = PROJECT.to_uppercase();
    let refused = PlanApproval {
        result_is_error: true,
        ..approval("second", &shouted, &writes)
    };
    assert_eq!(
        store.finalize_approved(refused, NOW),
        Err(PlanRefusal::ErrorResult)
    );
    assert!(store.is_empty());
}

#[test]
fn finalize_started_clears_only_that_project() {
    let store = PlanStore::default();
    registered(&store, "mine", PROJECT);
    registered(&store, "theirs", "another-project");
    store.finalize_started(&format!("urn:uuid:{{{PROJECT}}}"));
    assert_eq!(store.get("mine"), None);
    assert!(store.get("theirs").is_some());
}

#[test]
fn project_invalidated_and_all_cleared() {
    let store = PlanStore::default();
    registered(&store, "a", PROJECT);
    registered(&store, "b", "p2");
    registered(&store, "c", "p3");
    store.project_invalidated("P2");
    assert_eq!(store.len(), 2);
    store.project_invalidated("unknown");
    assert_eq!(store.len(), 2);
    store.all_cleared();
    assert!(store.is_empty());
    assert!(store.snapshot().is_empty());
}

#[test]
fn expired_removed_drops_at_the_boundary_and_counts() {
    let store = PlanStore::default();
    let plan = |token: &str, expires_at| ApprovedPlan {
        token: token.to_owned(),
        project_id: token.to_owned(),
        writes: PathSet::default(),
        deletes: PathSet::default(),
        expires_at,
    };
    store.restore(plan("past", NOW - Duration::seconds(1)));
    store.restore(plan("now", NOW));
    store.restore(plan("later", NOW + Duration::nanoseconds(1)));
    assert_eq!(
        store.get("past").map(|plan| plan.token),
        Some("past".to_owned())
    );
    assert_eq!(store.expired_removed(NOW), 2);
    assert_eq!(store.expired_removed(NOW), 0);
    let tokens = tokens(&store);
    assert_eq!(tokens, vec!["later".to_owned()]);
}

#[test]
fn restore_applies_no_rules_but_normalizes_paths() {
    let store = PlanStore::default();
    let restored = ApprovedPlan {
        token: String::new(),
        project_id: String::new(),
        writes: PathSet::new(BTreeSet::from([
            "a\\b".to_owned(),
            "a/b".to_owned(),
            "./".to_owned(),
        ])),
        deletes: PathSet::new(BTreeSet::from([".claude//x".to_owned()])),
        expires_at: NOW - Duration::days(1),
    };
    store.restore(restored);
    let plan = store.get("").unwrap();
    assert_eq!(
        *plan.writes,
        BTreeSet::from(["a/b".to_owned(), String::new()])
    );
    assert_eq!(*plan.deletes, BTreeSet::from([".claude/x".to_owned()]));
    assert_eq!(plan.expires_at, NOW - Duration::days(1));
}

#[test]
fn snapshot_is_sorted_by_token() {
    let store = PlanStore::default();
    for token in ["c", "a", "b"] {
        registered(&store, token, token);
    }
    let tokens = tokens(&store);
    assert_eq!(tokens, ["a", "b", "c"]);
}
