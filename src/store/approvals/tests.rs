use std::time::Duration;

use serde_json::json;
use time::OffsetDateTime;

use super::*;
use crate::authz::ApprovalKind;
use crate::authz::CallSummary;
use crate::call::DesignCall;
use crate::facts::Session;

const T0: OffsetDateTime = OffsetDateTime::UNIX_EPOCH;
const TTL: time::Duration = time::Duration::seconds(300);

fn limits() -> ApprovalLimits {
    ApprovalLimits {
        max_pending_per_caller: 2,
        max_pending: 3,
        max_held_bytes: 10_000,
        retention: Duration::from_secs(60),
        ..ApprovalLimits::default()
    }
}

fn call(data: &str) -> PendingCall {
    let input = json!({"operation": "write_files", "arguments": {"project_id": "p1",
        "files": [{"path": "a.html", "data": data}]}});
    PendingCall {
        intake: Intake {
            session_key: crate::state::SessionKey::new("agent-one", "s"),
            session: Session::default(),
            call: ApprovedCall::Design(DesignCall::parse(input, None).unwrap()),
        },
        kinds: vec![ApprovalKind::Batch],
        trace: None,
    }
}

fn view(id: &str, caller: &str, now: OffsetDateTime) -> ApprovalView {
    ApprovalView {
        id: id.into(),
        status: ApprovalStatus::Pending,
        requested_by: caller.into(),
        session_id: "s".into(),
        summary: CallSummary {
            tool: "ClaudeDesign".into(),
            operation: "write_files".into(),
            project_id: None,
            targets: std::sync::Arc::from(Vec::new()),
            plan_writes: Vec::new(),
            plan_deletes: Vec::new(),
            writes: true,
        },
        card: Approval::Batch {
            tool: "ClaudeDesign".into(),
            operation: "write_files".into(),
            project_id: None,
            targets: Vec::new(),
            writes: Vec::new(),
            deletes: Vec::new(),
            message: "m".into(),
            scope: "this call only".into(),
            also: Vec::new(),
        },
        created_at: now,
        expires_at: now + TTL,
        approved_by: None,
        result: None,
        asked_as: Default::default(),
        client: Default::default(),
        quorum: 1,
        votes: Vec::new(),
        escalated: false,
        bound: None,
    }
}

fn ballot(by: &str, vote: Vote) -> Ballot {
    Ballot::new(by, vote, T0, None)
}

/// An approval that completes the quorum (all of these have a quorum of one).
fn approve_once(
    store: &ApprovalStore,
    id: &str,
    by: &str,
    now: OffsetDateTime,
) -> Result<Claim, ApprovalError> {
    match store.vote(id, Ballot::new(by, Vote::Approve, now, None), now)? {
        Voted::Claimed(claim) => Ok(*claim),
        Voted::Counted { view, .. } => panic!("counted only: {}", view.tally()),
    }
}

fn hold(store: &ApprovalStore, id: &str, caller: &str, data: &str) -> Result<(), LimitError> {
    store
        .create(view(id, caller, T0), call(data), "d", T0)
        .map(|_| ())
}

#[test]
fn open_approvals_are_capped_per_caller_in_all_and_by_bytes() {
    let store = ApprovalStore::new(limits());
    hold(&store, "a1", "agent-a", "x").unwrap();
    hold(&store, "a2", "agent-a", "x").unwrap();
    let per_caller = hold(&store, "a3", "agent-a", "x").unwrap_err();
    assert!(matches!(per_caller, LimitError::PerCaller { limit: 2, .. }));
    let big = "y".repeat(20_000);
    let bytes = hold(&store, "b1", "agent-b", &big).unwrap_err();
    assert!(
        matches!(bytes, LimitError::Bytes { limit: 10_000, .. }),
        "{bytes}"
    );
    hold(&store, "b1", "agent-b", "x").unwrap();
    let total = hold(&store, "c1", "agent-c", "x").unwrap_err();
    assert_eq!(total, LimitError::Total { limit: 3 });
    // A refusal frees its place.
    let claim = store
        .claim_refusal("a1", ballot("ops", Vote::Refuse), T0)
        .unwrap();
    assert!(store.finish(&claim.id, ApprovalStatus::Refused, None, T0));
    hold(&store, "c1", "agent-c", "x").unwrap();
}

#[test]
fn expiry_frees_the_place_drops_the_call_and_is_reported_once() {
    let store = ApprovalStore::new(limits());
    hold(&store, "a1", "agent-a", "x").unwrap();
    hold(&store, "a2", "agent-a", "x").unwrap();
    assert_eq!(store.pending_count(T0), 2);
    let later = T0 + TTL;
    assert_eq!(store.pending_count(later), 0, "the gauge applies expiry");
    assert_eq!(
        store.view("a1", later).unwrap().status,
        ApprovalStatus::Expired
    );
    store
        .create(view("a3", "agent-a", later), call("x"), "d", later)
        .unwrap();
    let sweep = store.sweep(later);
    let ids: Vec<&str> = sweep.expired.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["a1", "a2"]);
    assert!(store.sweep(later).expired.is_empty(), "reported once");
    let claimed = approve_once(&store, "a1", "approver", later).unwrap_err();
    assert!(claimed.to_string().contains("expired"), "{claimed}");
}

#[test]
fn finished_approvals_are_forgotten_after_the_retention() {
    let store = ApprovalStore::new(limits());
    hold(&store, "a1", "agent-a", "x").unwrap();
    let claim = approve_once(&store, "a1", "approver", T0).unwrap();
    assert!(store.finish(&claim.id, ApprovalStatus::Completed, Some(json!({})), T0));
    assert!(
        !store.finish(&claim.id, ApprovalStatus::Failed, None, T0),
        "ends once"
    );
    assert_eq!(
        store.view("a1", T0).unwrap().status,
        ApprovalStatus::Completed
    );
    store.sweep(T0 + time::Duration::seconds(60));
    assert!(matches!(
        store.view("a1", T0 + time::Duration::seconds(60)),
        Err(ApprovalError::Unknown(_))
    ));
}

#[test]
fn a_released_claim_is_pending_again_with_its_call() {
    let store = ApprovalStore::new(limits());
    hold(&store, "a1", "agent-a", "x").unwrap();
    let claim = approve_once(&store, "a1", "approver", T0).unwrap();
    assert!(
        approve_once(&store, "a1", "other", T0).is_err(),
        "one approver wins"
    );
    store.release(claim, T0);
    let view = store.view("a1", T0).unwrap();
    assert_eq!(view.status, ApprovalStatus::Pending);
    assert_eq!(view.approved_by, None);
    assert!(approve_once(&store, "a1", "approver", T0).is_ok());
}

#[test]
fn pages_follow_creation_order_with_a_cursor() {
    let store = ApprovalStore::new(ApprovalLimits::default());
    for index in 0..5 {
        hold(&store, &format!("a{index}"), "agent", "x").unwrap();
    }
    let first = store.page(T0, None, 2);
    let ids = |page: &Page| -> Vec<String> {
        page.approvals.iter().map(|view| view.id.clone()).collect()
    };
    assert_eq!(ids(&first), ["a0", "a1"]);
    let cursor = first.next_cursor.clone().unwrap().parse().unwrap();
    let second = store.page(T0, Some(cursor), 3);
    assert_eq!(ids(&second), ["a2", "a3", "a4"]);
    assert_eq!(second.next_cursor, None);
}

#[test]
fn a_withdrawal_ends_the_approval_at_once_frees_its_place_and_beats_a_late_approver() {
    let store = ApprovalStore::new(limits());
    hold(&store, "a1", "agent-a", "x").unwrap();
    hold(&store, "a2", "agent-a", "x").unwrap();
    let withdrawn = store.withdraw("a1", "the call gave up", T0).unwrap();
    assert_eq!(withdrawn.decision_id, "d");
    let view = store.view("a1", T0).unwrap();
    assert_eq!(view.status, ApprovalStatus::Withdrawn);
    assert_eq!(view.withdrawn_because(), Some("the call gave up"));
    assert_eq!(store.pending_count(T0), 1);
    let late = approve_once(&store, "a1", "approver", T0).unwrap_err();
    assert!(
        late.to_string()
            .contains("already withdrawn (the call gave up)"),
        "{late}"
    );
    assert!(store
        .claim_refusal("a1", ballot("approver", Vote::Refuse), T0)
        .is_err());
    hold(&store, "a3", "agent-a", "x").unwrap();
    // An approver who came first wins; the withdrawal is told so.
    approve_once(&store, "a2", "approver", T0).unwrap();
    let refused = store.withdraw("a2", "too late", T0).unwrap_err();
    assert!(refused.to_string().contains("running"), "{refused}");
}

#[test]
fn an_unlogged_withdrawal_is_handed_to_the_sweeper_once() {
    let store = ApprovalStore::new(limits());
    hold(&store, "a1", "agent-a", "x").unwrap();
    let withdrawn = store.withdraw("a1", "gone", T0).unwrap();
    store.requeue_withdrawals(vec![withdrawn.clone()], T0);
    assert_eq!(store.sweep(T0).withdrawn, [withdrawn]);
    assert!(store.sweep(T0).withdrawn.is_empty(), "handed over once");
    assert!(store.sweep(T0).expired.is_empty(), "not also an expiry");
}

fn hold_quorum(store: &ApprovalStore, id: &str, quorum: u8) {
    let mut view = view(id, "agent-a", T0);
    view.quorum = quorum;
    store.create(view, call("x"), "d", T0).unwrap();
}

/// Issue 35 §2: a quorum of two counts the first approval and stays pending; the same
/// approver again is refused with the tally and changes nothing; a second approver claims it
/// (once); all votes are kept with their notes.
#[test]
fn i35_a_quorum_of_two_claims_on_the_second_distinct_approver_only() {
    let store = ApprovalStore::new(limits());
    hold_quorum(&store, "a1", 2);
    let note = Some("looked at it".to_string());
    let first = store
        .vote(
            "a1",
            Ballot::new("alice", Vote::Approve, T0, note.clone()),
            T0,
        )
        .unwrap();
    let Voted::Counted { view, decision_id } = first else {
        panic!("the first of two approvals claimed the approval");
    };
    assert_eq!(
        (view.status, view.tally().as_str()),
        (ApprovalStatus::Pending, "1 of 2 approvals")
    );
    assert_eq!(decision_id, "d");
    let again = store
        .vote("a1", ballot("alice", Vote::Approve), T0)
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "`alice` already approved approval `a1`: 1 of 2 approvals; waiting for another approver"
    );
    assert_eq!(
        store.view("a1", T0).unwrap().votes.len(),
        1,
        "nothing changed"
    );
    let second = store.vote("a1", ballot("bob", Vote::Approve), T0).unwrap();
    assert!(matches!(second, Voted::Claimed(_)));
    let late = store
        .vote("a1", ballot("carol", Vote::Approve), T0)
        .unwrap_err();
    assert!(late.to_string().contains("already running"), "{late}");
    let view = store.view("a1", T0).unwrap();
    assert_eq!(view.approved_by.as_deref(), Some("bob"));
    let voters: Vec<(&str, Option<&str>)> = view
        .votes
        .iter()
        .map(|ballot| (ballot.by.as_str(), ballot.note.as_deref()))
        .collect();
    assert_eq!(voters, [("alice", Some("looked at it")), ("bob", None)]);
}

/// One refusal refuses whatever was approved; a released claim takes its vote back, and a
/// retracted vote is no longer counted.
#[test]
fn i35_one_refusal_refuses_and_a_released_or_retracted_vote_is_taken_back() {
    let store = ApprovalStore::new(limits());
    hold_quorum(&store, "a1", 2);
    store
        .vote("a1", ballot("alice", Vote::Approve), T0)
        .unwrap();
    let refusal = store
        .claim_refusal("a1", ballot("bob", Vote::Refuse), T0)
        .unwrap();
    assert!(store.finish(&refusal.id, ApprovalStatus::Refused, None, T0));
    let view = store.view("a1", T0).unwrap();
    assert_eq!(view.status, ApprovalStatus::Refused);
    assert_eq!(view.votes.len(), 2);

    hold_quorum(&store, "a2", 2);
    store
        .vote("a2", ballot("alice", Vote::Approve), T0)
        .unwrap();
    let Voted::Claimed(claim) = store.vote("a2", ballot("bob", Vote::Approve), T0).unwrap() else {
        panic!("the second approval did not claim");
    };
    store.release(*claim, T0);
    let view = store.view("a2", T0).unwrap();
    assert_eq!(
        (view.status, view.tally().as_str()),
        (ApprovalStatus::Pending, "1 of 2 approvals")
    );
    assert!(store.retract("a2", "alice", T0));
    assert!(!store.retract("a2", "alice", T0), "taken back once");
    assert_eq!(store.view("a2", T0).unwrap().tally(), "0 of 2 approvals");
}
