//! A store written by the previous version is served by this one (issue 39 §2): a database
//! at the previous schema version, holding rows exactly as that version wrote them (the
//! committed `tests/fixtures/store/*-v1.json`), is migrated by a replica of this version, which
//! decides on the old replica's plan and applies account events in the shape it wrote.
//! (The other direction — an older replica meeting a newer store — is refused with a reason:
//! `replicas::a_store_with_a_newer_schema_is_refused`.)

use std::path::Path;

use serde_json::{json, Value};

use super::harness::{ask_delete_policies, Database, Replica};
use super::shared::design;

fn fixture(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/store")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Applies the fleet migrations of every version before this one, as the previous release
/// left its store.
async fn at_previous_version(database: &Database) -> i32 {
    let previous = askgate::store::postgres::SCHEMA_VERSION - 1;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/postgres/migrations");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        usize::try_from(previous + 1).unwrap(),
        "one migration file per version: {files:?}"
    );
    let client = database.client().await;
    client
        .batch_execute(
            "CREATE TABLE askgate_schema (version integer PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now())",
        )
        .await
        .unwrap();
    for (index, file) in files
        .iter()
        .take(usize::try_from(previous).unwrap())
        .enumerate()
    {
        client
            .batch_execute(&std::fs::read_to_string(file).unwrap())
            .await
            .unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        let version = i32::try_from(index + 1).unwrap();
        client
            .execute(
                "INSERT INTO askgate_schema (version) VALUES ($1)",
                &[&version],
            )
            .await
            .unwrap();
    }
    previous
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_of_this_version_serves_a_store_the_previous_version_wrote() {
    let database = Database::fresh("upgrade_from_previous").await;
    let previous = at_previous_version(&database).await;
    let client = database.client().await;
    // What the previous version left: a plan for the demo agent's session (its expiry moved
    // into the future).
    let mut plan = fixture("plans-v1.json").remove(0);
    let expires = time::OffsetDateTime::now_utc() + time::Duration::minutes(15);
    plan["expires_at"] = json!(expires
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap());
    client
        .execute(
            "INSERT INTO plans (principal, session_id, token, project_id, plan, expires_at) \
             VALUES ('demo-agent', 'fleet-upgrade', $1, $2, $3, $4)",
            &[
                &plan["token"].as_str().unwrap(),
                &plan["project_id"].as_str().unwrap(),
                &plan,
                &expires,
            ],
        )
        .await
        .unwrap();

    let root = tempfile::tempdir().unwrap();
    let policies_dir = ask_delete_policies(root.path());
    let replica = Replica::start("new", root.path(), &database.url, &policies_dir).await;
    let version: i32 = client
        .query_one("SELECT max(version) FROM askgate_schema", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(version, askgate::store::postgres::SCHEMA_VERSION);
    assert!(version > previous);

    replica.consent().await;
    // The old replica's plan covers the write: read from its row, as this version reads it.
    let covered = json!({"project_id": "p1", "plan_token": plan["token"],
        "files": [{"path": "index.html", "data": "<p>planned</p>"}]});
    let written = design(&replica, "fleet-upgrade", "write_files", covered).await;
    assert_eq!(written.status, 200, "{}", written.body);
    assert!(
        written.policies().iter().any(|id| id == "plans.covered"),
        "{}",
        written.body
    );
    // Events in the shape every replica has written (a peer still writing them, or the rows
    // of the upgrade's moment), announced as a replica announces them: all applied — the
    // replica's mark reaches the last one (one it could not read would hold the mark before
    // it, and the replica would stop deciding).
    for event in fixture("account-events-v1.json") {
        client
            .execute(
                "INSERT INTO account_events (replica, event) VALUES ('previous', $1)",
                &[&event],
            )
            .await
            .unwrap();
    }
    client
        .batch_execute("SELECT pg_notify('askgate_account', '')")
        .await
        .unwrap();
    let last: i64 = client
        .query_one("SELECT max(seq) FROM account_events", &[])
        .await
        .unwrap()
        .get(0);
    let mut applied = 0_i64;
    for _ in 0..100 {
        applied = client
            .query_one("SELECT applied FROM replicas WHERE id = 'new'", &[])
            .await
            .unwrap()
            .get(0);
        if applied >= last {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        applied, last,
        "the replica applied every event in the V1 shape"
    );
}

/// Holds the fixture's Projects approval (as the previous version wrote it, `call` changed by
/// `change`) pending in `database`, due in five minutes; returns its id.
async fn hold_the_previous_versions_approval(
    database: &Database,
    change: impl FnOnce(&mut Value),
) -> String {
    let client = database.client().await;
    let mut row = fixture("approvals-v1.json")
        .into_iter()
        .find(|row| row["view"]["summary"]["tool"] == "Projects")
        .expect("the fixture holds a Projects approval");
    change(&mut row["call"]);
    let expires = time::OffsetDateTime::now_utc() + time::Duration::minutes(5);
    row["view"]["expires_at"] = json!(expires
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap());
    let id = row["view"]["id"].as_str().unwrap().to_string();
    client
        .execute(
            "INSERT INTO approvals (id, decision_id, requested_by, status, view, call, bytes, \
             expires_at, open, quorum) \
             VALUES ($1, 'previous-decision', $2, 'pending', $3, $4, 100, $5, true, 1)",
            &[
                &id,
                &row["view"]["requested_by"].as_str().unwrap(),
                &row["view"],
                &row["call"],
                &expires,
            ],
        )
        .await
        .unwrap();
    id
}

/// An approval the previous version held — its row exactly as that version wrote it (the
/// committed `tests/fixtures/store/approvals-v1.json`: the card, the held call, its binding) —
/// is listed, approved and run by a replica of this version after the upgrade.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i39_an_approval_the_previous_version_held_is_approved_and_run_by_this_one() {
    let database = Database::fresh("upgrade_approval").await;
    at_previous_version(&database).await;
    let id = hold_the_previous_versions_approval(&database, |_| {}).await;

    let root = tempfile::tempdir().unwrap();
    let policies_dir = ask_delete_policies(root.path());
    let replica = Replica::start("new", root.path(), &database.url, &policies_dir).await;
    let shown = replica.approval(&id, "0s").await;
    assert_eq!(shown.status, 200, "{}", shown.body);
    assert_eq!(shown.body["status"], "pending", "{}", shown.body);
    assert_eq!(shown.body["card"]["kind"], "batch", "{}", shown.body);
    let approved = replica.approve(&id).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(approved.body["status"], "completed", "{}", approved.body);
    assert!(
        approved.body["result"].get("error").is_none(),
        "the held delete ran: {}",
        approved.body
    );
    // It ran once: the file is gone from the upstream.
    let read = json!({"session": {"id": "after", "agent": "main", "mode": "default",
        "interactive": true}, "input": {"method": "project_read", "path": "notes.md"}});
    let after = replica
        .send(
            reqwest::Method::POST,
            "/v1/projects/call",
            Some(super::harness::AGENT),
            Some(&read),
        )
        .await;
    assert!(
        after.body.to_string().contains("No doc or file at"),
        "{}",
        after.body
    );
}

/// A held call this replica cannot read (written by a newer version: its session carries a fact
/// this one does not know, and a replica never decides on facts it cannot read) is neither run
/// nor used up: the approve and the refusal fail with a store error (503), and the row stays pending
/// with no vote, for a replica that can run it (before: the row was taken out of pending
/// first, then failed to decode, and the approval was lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i39_an_approval_a_newer_version_held_stays_pending_when_this_one_cannot_read_it() {
    let database = Database::fresh("upgrade_unreadable").await;
    at_previous_version(&database).await;
    let id = hold_the_previous_versions_approval(&database, |call| {
        call["session"]["from_a_newer_version"] = json!(true);
    })
    .await;
    let root = tempfile::tempdir().unwrap();
    let policies_dir = ask_delete_policies(root.path());
    let replica = Replica::start("older", root.path(), &database.url, &policies_dir).await;

    let approved = replica.approve(&id).await;
    let refused = replica
        .send(
            reqwest::Method::POST,
            &format!("/v1/approvals/{id}/refuse"),
            Some(super::harness::APPROVER),
            Some(&json!({"note": "not this one"})),
        )
        .await;
    for (answer, reply) in [("approve", &approved), ("refuse", &refused)] {
        assert_eq!(reply.status, 503, "{answer}: {}", reply.body);
        assert!(
            reply.body["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("shared store is unavailable")),
            "{answer}: {}",
            reply.body
        );
    }
    let row = database
        .client()
        .await
        .query_one(
            "SELECT status, votes, approved_by, claimed_by FROM approvals WHERE id = $1",
            &[&id],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>("status"), "pending");
    assert_eq!(row.get::<_, Value>("votes"), json!([]));
    assert_eq!(row.get::<_, Option<String>>("approved_by"), None);
    assert_eq!(row.get::<_, Option<String>>("claimed_by"), None);
    let shown = replica.approval(&id, "0s").await;
    assert_eq!(shown.body["status"], "pending", "{}", shown.body);
    assert_eq!(
        replica.sandbox_projects_requests().await,
        0,
        "nothing reached the upstream"
    );
}
