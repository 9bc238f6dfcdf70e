//! state::sessions tests: plans per session, idle eviction and the bounds (F3).
use time::Duration;

use super::*;
use crate::state::plans::{plan_bytes, MAX_PLANS_PER_SESSION, PLAN_TTL};
use crate::state::test_support::{approval, NOW};

/// A session of the test's one principal.
fn key(id: &str) -> SessionKey {
    SessionKey::new("agent-one", id)
}

fn register(
    sessions: &SessionPlans,
    session: &str,
    token: &str,
    project: &str,
    now: OffsetDateTime,
) -> Result<ApprovedPlan, PlanRefusal> {
    let writes = vec!["index.html".to_owned()];
    sessions.finalize_approved(&key(session), approval(token, project, &writes), now)
}

#[test]
fn reading_an_unknown_session_stores_nothing() {
    let sessions = SessionPlans::default();
    for index in 0..1_000 {
        assert!(sessions.plan(&key(&format!("s{index}")), "t").is_none());
        sessions.finalize_started(&key(&format!("s{index}")), "p1");
    }
    assert!(sessions.is_empty());
}

#[test]
fn plans_belong_to_their_session() {
    let sessions = SessionPlans::default();
    register(&sessions, "a", "t1", "p1", NOW).unwrap();
    assert!(sessions.plan(&key("a"), "t1").is_some());
    assert!(sessions.plan(&key("b"), "t1").is_none());
    assert_eq!(sessions.len(), 1);
}

#[test]
fn a_session_whose_plans_all_expired_is_evicted() {
    let sessions = SessionPlans::default();
    register(&sessions, "a", "t1", "p1", NOW).unwrap();
    register(&sessions, "b", "t2", "p1", NOW + Duration::minutes(10)).unwrap();
    assert_eq!(sessions.expired_removed(NOW + PLAN_TTL), 1);
    assert_eq!(sessions.len(), 1, "only b still holds a live plan");
    assert!(sessions.plan(&key("b"), "t2").is_some());
}

#[test]
fn invalidation_and_refinalize_remove_emptied_sessions() {
    let sessions = SessionPlans::default();
    register(&sessions, "a", "t1", "p1", NOW).unwrap();
    register(&sessions, "b", "t2", "p2", NOW).unwrap();
    sessions.project_invalidated("p1");
    assert_eq!(sessions.len(), 1);
    sessions.finalize_started(&key("b"), "p2");
    assert!(sessions.is_empty());
}

#[test]
fn plans_per_session_are_bounded() {
    let sessions = SessionPlans::default();
    for index in 0..MAX_PLANS_PER_SESSION {
        register(
            &sessions,
            "a",
            &format!("t{index}"),
            &format!("p{index}"),
            NOW,
        )
        .unwrap();
    }
    let refused = register(&sessions, "a", "extra", "extra-project", NOW).unwrap_err();
    assert_eq!(
        refused,
        PlanRefusal::TooManyPlans {
            limit: MAX_PLANS_PER_SESSION
        }
    );
    // Once the old plans expire there is room again.
    register(&sessions, "a", "later", "extra-project", NOW + PLAN_TTL).unwrap();
    assert_eq!(sessions.snapshot().len(), 1);
}

#[test]
fn f3_sessions_holding_plans_are_bounded_and_idle_ones_make_room() {
    let sessions = SessionPlans::default();
    for index in 0..MAX_SESSIONS {
        register(&sessions, &format!("s{index}"), "t", "p1", NOW).unwrap();
    }
    assert_eq!(sessions.len(), MAX_SESSIONS);
    let refused = register(&sessions, "one-more", "t", "p1", NOW).unwrap_err();
    assert_eq!(
        refused,
        PlanRefusal::TooManySessions {
            limit: MAX_SESSIONS
        }
    );
    assert!(
        sessions.plan(&key("s0"), "t").is_some(),
        "live plans are never evicted"
    );
    // A known session may still register; when the plans expire the new one gets in.
    register(&sessions, "s0", "t2", "p2", NOW).unwrap();
    // Once the plans expire, a new session gets in within one sweep period, and every idle
    // session is evicted; a flood of refused sessions never sweeps more often than that.
    let later = NOW + PLAN_TTL;
    let admitted = (0..1_024)
        .filter(|index| register(&sessions, &format!("late-{index}"), "t", "p1", later).is_ok())
        .count();
    assert!(admitted > 0);
    assert_eq!(sessions.len(), admitted, "every idle session was evicted");
}

/// The plans of all sessions are bounded by bytes: past the budget a registration is refused
/// (after expired plans go), and once plans expire there is room again.
#[test]
fn plans_past_the_byte_budget_are_refused_until_expired_ones_go() {
    let writes = vec!["site/index.html".to_owned()];
    let one = plan_bytes("tok-0", "p1", writes.iter());
    let sessions = SessionPlans::with_byte_budget(3 * one);
    for n in 0..3 {
        let token = format!("tok-{n}");
        let approval = approval(&token, "p1", &writes);
        sessions
            .finalize_approved(&key(&format!("s{n}")), approval, NOW)
            .unwrap();
    }
    assert!(sessions.bytes() <= 3 * one, "{}", sessions.bytes());
    let refused = sessions.finalize_approved(&key("s3"), approval("tok-3", "p1", &writes), NOW);
    assert_eq!(
        refused,
        Err(PlanRefusal::TooManyPlanBytes { limit: 3 * one })
    );
    assert!(sessions.plan(&key("s3"), "tok-3").is_none());
    // Past the plans' lifetime the same registration fits.
    let later = NOW + PLAN_TTL + Duration::seconds(1);
    let accepted = sessions.finalize_approved(&key("s3"), approval("tok-3", "p1", &writes), later);
    assert!(accepted.is_ok(), "{accepted:?}");
    assert_eq!(sessions.bytes(), one, "only the new plan is held");
    // Every way a plan goes gives its bytes back.
    sessions
        .finalize_approved(&key("s4"), approval("tok-4", "p2", &writes), later)
        .unwrap();
    sessions.project_invalidated("p2");
    assert_eq!(sessions.bytes(), one);
    sessions.finalize_started(&key("s3"), "p1");
    assert_eq!(sessions.bytes(), 0);
    sessions
        .finalize_approved(&key("s5"), approval("tok-5", "p1", &writes), later)
        .unwrap();
    sessions.all_cleared();
    assert_eq!(sessions.bytes(), 0);
}
