//! One conformance suite for every approval book: the in-memory book (the embedded default)
//! and the PostgreSQL book of a fleet pass the same cases — exactly one claim wins, caps hold,
//! a quorum of two claims on the second distinct approver only (racing or not), a withdrawal
//! or an expiry ends it once, a release puts the call back, paging is in order,
//! and a wait returns when it ends.

use std::sync::Arc;
use std::time::Duration;

use askgate::authz::CallSummary;
use askgate::authz::{Approval, ApprovalKind};
use askgate::call::DesignCall;
use askgate::facts::Session;
use askgate::store::approvals::{
    ApprovalBook, ApprovalError, ApprovalLimits, ApprovalStatus, ApprovalStore, ApprovalView,
    ApprovedCall, Ballot, Claim, ClientWait, CreateError, Intake, PendingCall, Vote, Voted,
};
use askgate::store::postgres::{open, FleetOptions};
use serde_json::json;
use time::OffsetDateTime;

use super::harness::Database;

const TTL: time::Duration = time::Duration::seconds(300);

fn t0() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
}

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
            session_key: askgate::state::SessionKey::new("agent-one", "s"),
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
            targets: Arc::from(Vec::new()),
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
    Ballot::new(by, vote, t0(), None)
}

/// An approval on an approval of quorum one: it claims it (or says why not).
async fn approve_once(
    book: &dyn ApprovalBook,
    id: &str,
    by: &str,
    now: OffsetDateTime,
) -> Result<Claim, ApprovalError> {
    match book
        .vote(id, Ballot::new(by, Vote::Approve, now, None), now)
        .await?
    {
        Voted::Claimed(claim) => Ok(*claim),
        Voted::Counted { view, .. } => panic!("counted only: {}", view.tally()),
    }
}

async fn hold(book: &dyn ApprovalBook, id: &str, caller: &str) -> Result<(), CreateError> {
    book.create(
        view(id, caller, t0()),
        call("x"),
        &format!("d-{id}"),
        false,
        t0(),
    )
    .await
    .map(|_| ())
}

/// Runs `case` against a fresh in-memory book and a fresh PostgreSQL book.
async fn both<F, Fut>(test: &str, case: F)
where
    F: Fn(Arc<dyn ApprovalBook>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    case(Arc::new(ApprovalStore::new(limits()))).await;
    let database = Database::fresh(test).await;
    let stores = open(
        &database.url,
        FleetOptions::new(format!("conformance-{test}")),
        limits(),
    )
    .await
    .expect("the store opens");
    case(stores.approvals.clone()).await;
    stores.fleet.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_exactly_one_claim_wins_and_the_loser_is_told_why() {
    both("one_claim", |book| async move {
        hold(book.as_ref(), "ap_1", "agent-one").await.unwrap();
        let claims =
            futures_util::future::join_all(
                (0..8).map(|n| {
                    let book = Arc::clone(&book);
                    async move {
                        approve_once(book.as_ref(), "ap_1", &format!("approver-{n}"), t0()).await
                    }
                }),
            )
            .await;
        let won = claims.iter().filter(|claim| claim.is_ok()).count();
        assert_eq!(won, 1, "{claims:?}");
        for lost in claims.iter().filter_map(|claim| claim.as_ref().err()) {
            assert!(
                matches!(lost, ApprovalError::Closed { status, .. } if status == "running"),
                "{lost:?}"
            );
        }
        let claim = claims.into_iter().find_map(Result::ok).unwrap();
        assert_eq!(claim.decision_id, "d-ap_1");
        assert!(matches!(claim.call.intake.call, ApprovedCall::Design(_)));
        let running = book.view("ap_1", t0()).await.unwrap();
        assert_eq!(running.status, ApprovalStatus::Running);
        assert!(running.approved_by.unwrap().starts_with("approver-"));
        let result = json!({"isError": false, "content": []});
        assert!(
            book.finish(
                "ap_1",
                ApprovalStatus::Completed,
                Some(result.clone()),
                t0()
            )
            .await
        );
        assert!(
            !book
                .finish("ap_1", ApprovalStatus::Failed, None, t0())
                .await
        );
        let ended = book
            .wait("ap_1", Duration::from_secs(5), &t0)
            .await
            .unwrap();
        assert_eq!(ended.status, ApprovalStatus::Completed);
        assert_eq!(ended.result, Some(result));
        assert_eq!(book.decided(t0(), 10).await.unwrap().len(), 1);
        assert!(matches!(
            approve_once(book.as_ref(), "ap_missing", "x", t0()).await,
            Err(ApprovalError::Unknown(_))
        ));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_caps_hold_per_caller_and_in_all() {
    both("caps", |book| async move {
        hold(book.as_ref(), "ap_1", "agent-one").await.unwrap();
        hold(book.as_ref(), "ap_2", "agent-one").await.unwrap();
        assert!(matches!(
            hold(book.as_ref(), "ap_3", "agent-one").await,
            Err(CreateError::Limit(_))
        ));
        hold(book.as_ref(), "ap_4", "agent-two").await.unwrap();
        assert!(matches!(
            hold(book.as_ref(), "ap_5", "agent-three").await,
            Err(CreateError::Limit(_))
        ));
        assert_eq!(book.pending_count(t0()).await.unwrap(), 3);
        // An ended approval frees its place.
        book.withdraw("ap_1", "gone", t0()).await.unwrap();
        hold(book.as_ref(), "ap_6", "agent-one").await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_withdrawn_and_expired_approvals_end_once() {
    both("withdraw_expire", |book| async move {
        hold(book.as_ref(), "ap_1", "agent-one").await.unwrap();
        hold(book.as_ref(), "ap_2", "agent-two").await.unwrap();
        let withdrawal = book.withdraw("ap_1", "the client went away", t0()).await.unwrap();
        assert_eq!(withdrawal.decision_id, "d-ap_1");
        let late = approve_once(book.as_ref(), "ap_1", "approver", t0()).await.unwrap_err();
        assert!(
            matches!(&late, ApprovalError::Closed { status, .. } if status == "withdrawn (the client went away)"),
            "{late:?}"
        );
        let later = t0() + TTL + time::Duration::seconds(1);
        assert_eq!(book.view("ap_2", later).await.unwrap().status, ApprovalStatus::Expired);
        let first = book.sweep(later).await;
        let second = book.sweep(later).await;
        let expired: Vec<_> = first.expired.iter().chain(&second.expired).collect();
        assert_eq!(expired, [&("ap_2".to_string(), "d-ap_2".to_string())]);
        assert!(approve_once(book.as_ref(), "ap_2", "approver", later).await.is_err());
        // An expiry not logged is queued again and found by the next sweep, once.
        book.requeue_expiries(first.expired, later).await;
        assert_eq!(book.sweep(later).await.expired.len(), 1);
        assert!(book.sweep(later).await.expired.is_empty());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_a_release_puts_the_call_back_and_pages_keep_order() {
    both("release_page", |book| async move {
        for (id, caller) in [("ap_1", "a"), ("ap_2", "b"), ("ap_3", "c")] {
            hold(book.as_ref(), id, caller).await.unwrap();
        }
        let claim = approve_once(book.as_ref(), "ap_2", "approver", t0())
            .await
            .unwrap();
        let first = book.page(t0(), None, 1).await.unwrap();
        assert_eq!(first.approvals[0].id, "ap_1");
        let cursor = first.next_cursor.unwrap().parse().unwrap();
        let second = book.page(t0(), Some(cursor), 5).await.unwrap();
        let ids: Vec<_> = second
            .approvals
            .iter()
            .map(|view| view.id.as_str())
            .collect();
        assert_eq!(ids, ["ap_3"]);
        assert!(second.next_cursor.is_none());
        book.release(claim, t0()).await;
        let again = book.view("ap_2", t0()).await.unwrap();
        assert_eq!(again.status, ApprovalStatus::Pending);
        assert_eq!(again.approved_by, None);
        let refusal = book
            .claim_refusal("ap_2", ballot("refuser", Vote::Refuse), t0())
            .await
            .unwrap();
        assert!(matches!(refusal.call.intake.call, ApprovedCall::Design(_)));
        assert!(
            book.finish("ap_2", ApprovalStatus::Refused, None, t0())
                .await
        );
        assert_eq!(
            book.view("ap_2", t0()).await.unwrap().status,
            ApprovalStatus::Refused
        );
        assert_eq!(
            book.owner("ap_3", t0()).await.unwrap().as_deref(),
            Some("c")
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_a_wait_returns_when_another_task_ends_the_approval() {
    both("wait", |book| async move {
        hold(book.as_ref(), "ap_1", "agent-one").await.unwrap();
        let waiting = {
            let book = Arc::clone(&book);
            tokio::spawn(async move { book.wait("ap_1", Duration::from_secs(20), &t0).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        approve_once(book.as_ref(), "ap_1", "approver", t0())
            .await
            .unwrap();
        book.finish("ap_1", ApprovalStatus::Completed, None, t0())
            .await;
        let ended = waiting.await.unwrap().unwrap();
        assert_eq!(ended.status, ApprovalStatus::Completed);
        // A wait on a pending approval returns it, still pending, at its deadline.
        hold(book.as_ref(), "ap_2", "agent-one").await.unwrap();
        let still = book
            .wait("ap_2", Duration::from_millis(50), &t0)
            .await
            .unwrap();
        assert_eq!(still.status, ApprovalStatus::Pending);
    })
    .await;
}

/// A16: an approval whose 2026-07-28 client has not come back (`client: not_yet`) shows so on
/// every book, carries it into its claim, and shows `waiting` once the client is back — then
/// only (another approval is not touched, and a second return changes nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a16_conformance_a_client_that_comes_back_is_seen_as_waiting() {
    both("client_back", |book| async move {
        let mut later = view("ap_1", "agent-one", t0());
        later.client = ClientWait::NotYet;
        book.create(later, call("x"), "d-ap_1", true, t0())
            .await
            .unwrap();
        hold(book.as_ref(), "ap_2", "agent-one").await.unwrap();
        assert_eq!(
            book.view("ap_1", t0()).await.unwrap().client,
            ClientWait::NotYet
        );
        let claim = approve_once(book.as_ref(), "ap_1", "approver", t0())
            .await
            .unwrap();
        assert_eq!(claim.client, ClientWait::NotYet);
        let back = book.client_back("ap_1", t0()).await.unwrap();
        assert_eq!(back.client, ClientWait::Waiting);
        assert_eq!(back.status, ApprovalStatus::Running);
        assert_eq!(
            book.client_back("ap_1", t0()).await.unwrap().client,
            ClientWait::Waiting
        );
        assert_eq!(
            book.view("ap_2", t0()).await.unwrap().client,
            ClientWait::Polls
        );
        assert!(matches!(
            book.client_back("ap_unknown", t0()).await,
            Err(ApprovalError::Unknown(_))
        ));
    })
    .await;
}

async fn hold_quorum(book: &dyn ApprovalBook, id: &str, quorum: u8) {
    let mut view = view(id, "agent-one", t0());
    view.quorum = quorum;
    book.create(view, call("x"), &format!("d-{id}"), false, t0())
        .await
        .unwrap();
}

/// Issue 35: the first of two approvals is counted (pending, `1 of 2`), the same approver
/// again is refused with the tally and changes nothing, the second approver claims it, and
/// every vote is kept with its note; a refusal after one approval refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_i35_a_quorum_of_two_counts_then_claims_and_keeps_every_vote() {
    both("quorum_two", |book| async move {
        hold_quorum(book.as_ref(), "ap_1", 2).await;
        let noted = Ballot::new("alice", Vote::Approve, t0(), Some("checked".into()));
        let Voted::Counted { view, decision_id } = book.vote("ap_1", noted, t0()).await.unwrap()
        else {
            panic!("one approval of two claimed the approval");
        };
        assert_eq!(view.status, ApprovalStatus::Pending);
        assert_eq!(view.tally(), "1 of 2 approvals");
        assert_eq!(decision_id, "d-ap_1");
        let again = book
            .vote("ap_1", ballot("alice", Vote::Approve), t0())
            .await
            .unwrap_err();
        assert!(
            matches!(&again, ApprovalError::AlreadyApproved { tally, .. } if tally == "1 of 2 approvals"),
            "{again:?}"
        );
        assert_eq!(book.view("ap_1", t0()).await.unwrap().votes.len(), 1);
        let second = book
            .vote("ap_1", ballot("bob", Vote::Approve), t0())
            .await
            .unwrap();
        let Voted::Claimed(claim) = second else {
            panic!("the second approver did not claim");
        };
        assert!(matches!(claim.call.intake.call, ApprovedCall::Design(_)));
        let running = book.view("ap_1", t0()).await.unwrap();
        assert_eq!(running.status, ApprovalStatus::Running);
        assert_eq!(running.approved_by.as_deref(), Some("bob"));
        let votes: Vec<(String, Option<String>)> = running
            .votes
            .iter()
            .map(|ballot| (ballot.by.clone(), ballot.note.clone()))
            .collect();
        assert_eq!(
            votes,
            [("alice".into(), Some("checked".into())), ("bob".into(), None)]
        );

        hold_quorum(book.as_ref(), "ap_2", 2).await;
        book.vote("ap_2", ballot("alice", Vote::Approve), t0())
            .await
            .unwrap();
        book.claim_refusal("ap_2", ballot("carol", Vote::Refuse), t0())
            .await
            .unwrap();
        let refused = book.view("ap_2", t0()).await.unwrap();
        assert_eq!(refused.status, ApprovalStatus::Refused);
        assert_eq!(refused.votes.len(), 2);
        assert_eq!(refused.votes[1].vote, Vote::Refuse);
    })
    .await;
}

/// Issue 35: eight approvers race on a quorum of two: exactly one claims it, exactly one
/// other is counted, the rest are told it is running, and the approval holds exactly the two
/// votes that made it; a released claim takes its vote back and a retracted vote is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_i35_racing_approvers_on_a_quorum_of_two_claim_it_once() {
    both("quorum_race", |book| async move {
        hold_quorum(book.as_ref(), "ap_1", 2).await;
        let votes = futures_util::future::join_all((0..8).map(|n| {
            let book = Arc::clone(&book);
            async move {
                book.vote(
                    "ap_1",
                    ballot(&format!("approver-{n}"), Vote::Approve),
                    t0(),
                )
                .await
            }
        }))
        .await;
        let claimed = votes
            .iter()
            .filter(|vote| matches!(vote, Ok(Voted::Claimed(_))))
            .count();
        let counted = votes
            .iter()
            .filter(|vote| matches!(vote, Ok(Voted::Counted { .. })))
            .count();
        assert_eq!((claimed, counted), (1, 1), "{votes:?}");
        for lost in votes.iter().filter_map(|vote| vote.as_ref().err()) {
            assert!(
                matches!(lost, ApprovalError::Closed { status, .. } if status == "running"),
                "{lost:?}"
            );
        }
        let view = book.view("ap_1", t0()).await.unwrap();
        assert_eq!(view.votes.len(), 2, "{:?}", view.votes);
        assert_eq!(view.tally(), "2 of 2 approvals");
        let last = view.votes.last().map(|ballot| ballot.by.clone());
        assert_eq!(view.approved_by, last, "the claimer cast the last vote");

        let claim = votes
            .into_iter()
            .find_map(|vote| match vote {
                Ok(Voted::Claimed(claim)) => Some(*claim),
                _ => None,
            })
            .unwrap();
        book.release(claim, t0()).await;
        let released = book.view("ap_1", t0()).await.unwrap();
        assert_eq!(released.status, ApprovalStatus::Pending);
        assert_eq!(released.tally(), "1 of 2 approvals");
        let first = released.votes[0].by.clone();
        assert!(book.retract("ap_1", &first, t0()).await);
        assert_eq!(
            book.view("ap_1", t0()).await.unwrap().tally(),
            "0 of 2 approvals"
        );
    })
    .await;
}

/// Issue 35 §4: an approval asked before the escalation's time is handed over once (in a
/// fleet: by one replica's sweeper), one asked after it not yet, a decided one never.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_i35_each_unanswered_approval_is_escalated_once() {
    both("escalate_once", |book| async move {
        hold(book.as_ref(), "ap_1", "agent-one").await.unwrap();
        hold(book.as_ref(), "ap_2", "agent-two").await.unwrap();
        approve_once(book.as_ref(), "ap_2", "approver", t0())
            .await
            .unwrap();
        let before = t0() - time::Duration::seconds(1);
        assert!(book.escalate(before, t0()).await.is_empty());
        let escalated =
            futures_util::future::join_all((0..4).map(|_| book.escalate(t0(), t0()))).await;
        let ids: Vec<&str> = escalated
            .iter()
            .flatten()
            .map(|view| view.id.as_str())
            .collect();
        assert_eq!(ids, ["ap_1"], "once, and only the pending one");
    })
    .await;
}
