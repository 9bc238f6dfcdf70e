//! Issue 35 §3 across a fleet: an approval is bound to its held call's digest. A held call that
//! changes in the shared store between the ask and the approval (a row edited by hand, a
//! replica that wrote it differently) is refused with `call_changed` on whichever replica
//! claims it, and nothing reaches the upstream; an untouched one runs.

use super::harness::{approval_records, ask_delete_policies, Database, Replica};

async fn fleet(test: &str) -> (Database, tempfile::TempDir, Replica, Replica) {
    let database = Database::fresh(test).await;
    let root = tempfile::tempdir().unwrap();
    let policies = ask_delete_policies(root.path());
    let (a, b) = tokio::join!(
        Replica::start("a", root.path(), &database.url, &policies),
        Replica::start("b", root.path(), &database.url, &policies),
    );
    (database, root, a, b)
}

/// The `approved` records' call digests for approval `id` in replica `name`'s log.
fn logged_digests(root: &std::path::Path, name: &str, id: &str) -> Vec<String> {
    approval_records(root, &[name], id)
        .into_iter()
        .map(|record| record["call"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_a_held_call_changed_in_the_store_is_refused_on_the_other_replica() {
    let (database, root, a, b) = fleet("binding_changed").await;
    let id = a.ask_delete("fleet-binding", "notes.md").await;
    let asked = a.approval(&id, "0s").await;
    let digest = asked.body["bound"]["call"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(digest.starts_with("sha256:"), "{}", asked.body);
    // Someone with the store's credentials points the held delete at another file.
    let client = database.client().await;
    let changed = client
        .execute(
            "UPDATE approvals SET call = jsonb_set(call, '{call,call,path}', '\"secrets.md\"') \
             WHERE id = $1 AND call #>> '{call,call,path}' = 'notes.md'",
            &[&id],
        )
        .await
        .unwrap();
    assert_eq!(
        changed, 1,
        "the held call's path is where the test expects it"
    );
    let before = b.sandbox_projects_requests().await;

    let answer = b.approve(&id).await;
    assert!([200, 202].contains(&answer.status), "{}", answer.body);
    let ended = b.approval(&id, "30s").await;
    assert_eq!(ended.body["status"], "failed", "{}", ended.body);
    let result = &ended.body["result"];
    assert_eq!(result["error"], "call_changed", "{result}");
    let text = result.to_string();
    assert!(
        text.contains("not the call that was approved") && text.contains(&digest),
        "{text}"
    );
    assert_eq!(
        b.sandbox_projects_requests().await,
        before,
        "nothing reached the upstream"
    );
    assert_eq!(logged_digests(root.path(), "b", &id), [digest]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_an_untouched_held_call_runs_on_the_other_replica_under_its_binding() {
    let (_database, root, a, b) = fleet("binding_kept").await;
    let id = a.ask_delete("fleet-binding", "notes.md").await;
    let digest = a.approval(&id, "0s").await.body["bound"]["call"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let answer = b.approve(&id).await;
    assert!([200, 202].contains(&answer.status), "{}", answer.body);
    let ended = b.approval(&id, "30s").await;
    assert_eq!(ended.body["status"], "completed", "{}", ended.body);
    assert_eq!(ended.body["bound"]["call"], digest.as_str());
    // The ask's `approved` record and the re-decision's both name the digest.
    assert_eq!(
        logged_digests(root.path(), "b", &id),
        [digest.clone(), digest]
    );
}
