//! Tests of the events that span several stores, and of all stores under concurrent use.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use time::Duration;

use super::plans::PLAN_TTL;
use super::test_support::{approval, NOW, PROJECT};
use super::*;
use crate::paths::project_key;

const OTHER: &str = "other-project";
static SESSION: std::sync::LazyLock<SessionKey> =
    std::sync::LazyLock::new(|| SessionKey::new("agent-one", "s1"));

fn register(state: &DesignState, token: &str, project_id: &str) {
    let writes = vec!["index.html".to_owned()];
    let approval = approval(token, project_id, &writes);
    state.plan_registered(&SESSION, approval, NOW).unwrap();
}

/// Two projects, each with a plan and a verified grant, consent granted.
fn populated() -> DesignState {
    let state = DesignState::default();
    register(&state, "mine", PROJECT);
    register(&state, "theirs", OTHER);
    state.grant_verified(PROJECT);
    state.grant_verified(OTHER);
    state.grants.grant_refused_not_found("ineligible");
    state.consent.consent_recorded();
    state
}

fn tokens(state: &DesignState) -> Vec<String> {
    state
        .sessions
        .snapshot()
        .into_iter()
        .map(|plan| plan.token)
        .collect()
}

#[test]
fn membership_or_sharing_change_invalidates_only_that_project() {
    let state = populated();
    state.membership_or_sharing_changed(&format!("URN:UUID:{{{PROJECT}}}"));
    assert_eq!(tokens(&state), ["theirs"]);
    assert!(!state.grants.is_verified(PROJECT));
    assert!(state.grants.needs_recard(PROJECT));
    assert!(!state.grants.server_grant_observed(PROJECT));
    assert!(state.grants.is_verified(OTHER));
    assert!(!state.grants.needs_recard(OTHER));
    assert!(!state.grants.recard_all_flagged());
    assert_eq!(state.consent.state(), ConsentState::Granted);
}

#[test]
fn remove_member_is_not_an_invalidating_operation() {
    assert!(!MEMBERSHIP_OR_SHARING_OPERATIONS.contains(&"remove_member"));
    for operation in ["update_sharing", "add_member", "update_member_role"] {
        assert!(MEMBERSHIP_OR_SHARING_OPERATIONS.contains(&operation));
    }
}

#[test]
fn consent_seeded_refused_clears_everything_but_ineligibility() {
    let state = populated();
    let generation = state.consent.generation();
    state.consent_seeded_refused();
    assert_eq!(state.consent.state(), ConsentState::Refused);
    assert_eq!(state.consent.generation(), generation + 1);
    assert!(state.sessions.is_empty());
    assert!(state.grants.verified_projects().is_empty());
    assert!(state.grants.recard_all_flagged());
    assert!(state.grants.needs_recard(PROJECT) && state.grants.needs_recard("never-seen"));
    assert!(state.grants.is_ineligible("ineligible"));
}

#[test]
fn consent_revoked_is_the_same_as_seeded_refused() {
    let state = populated();
    state.consent_revoked();
    assert_eq!(state.consent.state(), ConsentState::Refused);
    assert!(state.sessions.is_empty());
    assert!(state.grants.verified_projects().is_empty());
    assert!(state.grants.recard_all_flagged());
}

#[test]
fn project_grant_demanded_drops_the_grant_and_resets_consent_only() {
    let state = populated();
    let generation = state.consent.generation();
    state.project_grant_demanded(&PROJECT.to_uppercase());
    assert!(!state.grants.is_verified(PROJECT));
    assert!(state.grants.is_verified(OTHER));
    assert!(!state.grants.needs_recard(PROJECT));
    assert_eq!(state.consent.state(), ConsentState::Unknown);
    assert_eq!(state.consent.generation(), generation + 1);
    assert_eq!(tokens(&state), ["mine", "theirs"]);
}

#[test]
fn grant_demanded_during_a_consent_fetch_wins_over_its_result() {
    let state = DesignState::default();
    let ticket = state.consent.fetch_started();
    state.project_grant_demanded(PROJECT);
    assert!(!state.consent.fetch_finished(ticket, Some(true)));
    assert_eq!(state.consent.state(), ConsentState::Unknown);
}

#[test]
fn recard_all_then_re_approve_one_project_through_the_aggregate() {
    let state = populated();
    state.consent_seeded_refused();
    state.consent.consent_recorded();
    state.grants.grant_recorded(PROJECT);
    assert!(state.grants.is_verified(PROJECT));
    assert!(state.grants.needs_recard(PROJECT) && state.grants.needs_recard(OTHER));
    assert!(!state.grants.server_grant_observed(OTHER));
    state.membership_or_sharing_changed(PROJECT);
    assert!(!state.grants.is_verified(PROJECT));
    assert!(state.grants.needs_recard(PROJECT));
}

#[test]
fn stores_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<DesignState>();
    assert_send_sync::<FetchTicket>();
}

/// A tiny deterministic generator, so the concurrent test needs no extra crate.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

const SPELLINGS: [&str; 6] = [
    PROJECT,
    "{0A1B2C3D-0000-4000-8000-00000000ABCD}",
    "urn:uuid:0a1b2c3d-0000-4000-8000-00000000abcd",
    "p2",
    "P2",
    "p3",
];

/// One random event; returns whether it bumped the consent generation.
fn random_event(state: &DesignState, seed: &mut u64, thread: usize, round: usize) -> bool {
    let project = SPELLINGS[(next(seed) % 6) as usize];
    let now = NOW + Duration::seconds((next(seed) % 1_800) as i64);
    match next(seed) % 12 {
        0 | 1 => {
            let token = format!("t{thread}-{round}");
            let writes = vec!["a\\b.js".to_owned(), "./c.css".to_owned()];
            let server = (next(seed) % 2 == 0).then(|| now + Duration::minutes(20));
            let approval = PlanApproval {
                token: &token,
                project_id: project,
                scope: None,
                writes: &writes,
                deletes: &[],
                server_expiry: server,
                ask_was_shown: true,
                prompt_reaches_user: true,
                main_agent_without_hook: true,
                result_is_error: false,
            };
            // Spellings with `:` are refused by znS; either way the store stays consistent.
            let _ = state.plan_registered(&SESSION, approval, now);
        }
        2 => state.plan_finalize_started(&SESSION, project),
        3 => state.membership_or_sharing_changed(project),
        4 => state.grants.grant_recorded(project),
        5 => drop(state.grants.server_grant_observed(project)),
        6 => state.grants.grant_refused_not_found(project),
        7 => {
            state.project_grant_demanded(project);
            return true;
        }
        8 => {
            let ticket = state.consent.fetch_started();
            state
                .consent
                .fetch_finished(ticket, Some(next(seed) % 2 == 0));
        }
        9 => {
            state.consent.consent_recorded();
            return true;
        }
        10 if next(seed) % 8 == 0 => {
            state.consent_seeded_refused();
            return true;
        }
        _ => drop(state.plans_expired(now)),
    }
    false
}

#[test]
fn eight_threads_of_a_thousand_events_keep_the_invariants() {
    let state = DesignState::default();
    let bumps = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for thread in 0..8 {
            let (state, bumps) = (&state, &bumps);
            scope.spawn(move || {
                let mut seed = 0x9E37_79B9_7F4A_7C15 ^ (thread as u64 + 1);
                for round in 0..1_000 {
                    if random_event(state, &mut seed, thread, round) {
                        bumps.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
    });

    assert_eq!(state.consent.generation(), bumps.load(Ordering::SeqCst));
    let mut plans_per_key: BTreeMap<String, usize> = BTreeMap::new();
    for plan in state.sessions.snapshot() {
        *plans_per_key
            .entry(project_key(&plan.project_id))
            .or_default() += 1;
        assert!(plan.expires_at <= NOW + Duration::seconds(1_800) + PLAN_TTL);
        assert_eq!(plan.writes.iter().collect::<Vec<_>>(), ["a/b.js", "c.css"]);
        assert_eq!(state.sessions.plan(&SESSION, &plan.token), Some(plan));
    }
    assert!(
        plans_per_key.values().all(|count| *count == 1),
        "{plans_per_key:?}"
    );
    for project in SPELLINGS {
        let flagged_unverified =
            state.grants.needs_recard(project) && !state.grants.is_verified(project);
        if flagged_unverified {
            assert!(
                !state.grants.server_grant_observed(project),
                "the server verified flagged `{project}`"
            );
            assert!(!state.grants.is_verified(project));
        }
    }
    let known_keys: Vec<String> = SPELLINGS.iter().map(|id| project_key(id)).collect();
    assert!(state
        .grants
        .ineligible_keys()
        .iter()
        .all(|key| known_keys.contains(key)));

    state.consent_seeded_refused();
    assert!(state.sessions.is_empty());
    assert!(state.grants.verified_projects().is_empty());
    assert!(SPELLINGS.iter().all(|id| state.grants.needs_recard(id)));
    assert_eq!(state.consent.state(), ConsentState::Refused);
}
