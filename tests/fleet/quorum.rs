//! Issue 35 across a fleet: two real `askgate serve --store postgres://…` replicas hold a
//! Projects delete whose ask policy says `@quorum("2")`. Approvers racing their votes on
//! different replicas never run the call twice and never lose a vote: exactly one vote
//! completes the quorum, its replica alone runs the call, and the approval and the decision
//! logs hold every vote that counted.

use std::path::Path;

use serde_json::{json, Value};

use super::harness::{approval_records, session, Database, Replica, Reply};

const AGENT: &str = "quorum-agent-token-0123456789abcdef0123";

/// The approvers, each with a token of their own.
const APPROVERS: [&str; 6] = ["bob", "dana", "erin", "frank", "gina", "hugo"];

fn token(approver: &str) -> String {
    format!("{approver}-approver-token-0123456789abcdef0123")
}

/// The shipped example ask on `project_delete`, with a quorum of two.
fn quorum_policies(root: &Path) -> std::path::PathBuf {
    let dir = root.join("policies");
    std::fs::create_dir_all(&dir).unwrap();
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/examples/ask-project-delete.cedar"),
    )
    .unwrap();
    let rule = example.replace("@ask(\"batch\")", "@ask(\"batch\")\n@quorum(\"2\")");
    assert!(rule.contains("@quorum(\"2\")"), "{rule}");
    std::fs::write(dir.join("ask-project-delete.cedar"), rule).unwrap();
    dir
}

async fn fleet(test: &str) -> (Database, tempfile::TempDir, Replica, Replica) {
    let database = Database::fresh(test).await;
    let root = tempfile::tempdir().unwrap();
    let policies = quorum_policies(root.path());
    let mut callers = vec![json!({"token": AGENT, "role": "agent", "principal": "alice"})];
    callers.extend(APPROVERS.iter().map(
        |approver| json!({"token": token(approver), "role": "approver", "principal": approver}),
    ));
    let config = root.path().join("askgate.json");
    std::fs::write(&config, json!({ "callers": callers }).to_string()).unwrap();
    let extra = ["--config", config.to_str().unwrap()];
    let (a, b) = tokio::join!(
        Replica::start_with("a", root.path(), &database.url, &policies, &extra),
        Replica::start_with("b", root.path(), &database.url, &policies, &extra),
    );
    (database, root, a, b)
}

async fn ask_delete(replica: &Replica) -> String {
    let body = json!({"session": session("fleet-quorum"),
                      "input": {"method": "project_delete", "path": "notes.md"}});
    let reply = replica
        .send(
            reqwest::Method::POST,
            "/v1/projects/call",
            Some(AGENT),
            Some(&body),
        )
        .await;
    assert_eq!(reply.status, 202, "expected an ask: {}", reply.body);
    assert_eq!(reply.body["approval"]["quorum"], 2, "{}", reply.body);
    reply.body["approval"]["id"].as_str().unwrap().to_string()
}

async fn approve(replica: &Replica, id: &str, approver: &str) -> Reply {
    let body = json!({ "note": format!("{approver} agrees") });
    replica
        .send(
            reqwest::Method::POST,
            &format!("/v1/approvals/{id}/approve"),
            Some(&token(approver)),
            Some(&body),
        )
        .await
}

/// The approval once ended (waits up to 30 s).
async fn ended(replica: &Replica, id: &str) -> Value {
    seen(replica, id, "30s").await
}

/// The approval as the asking agent reads it, waiting up to `wait` for it to end.
async fn seen(replica: &Replica, id: &str, wait: &str) -> Value {
    let reply = replica
        .send(
            reqwest::Method::GET,
            &format!("/v1/approvals/{id}?wait={wait}"),
            Some(AGENT),
            None,
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

/// The actions of approval `id`'s records in both replicas' decision logs, sorted.
fn logged_actions(root: &Path, id: &str) -> Vec<(String, String)> {
    let mut actions: Vec<(String, String)> = approval_records(root, &["a", "b"], id)
        .into_iter()
        .map(|record| {
            (
                record["action"].as_str().unwrap_or("").to_string(),
                record["by"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    actions.sort();
    actions
}

fn voters(view: &Value) -> Vec<String> {
    let mut voters: Vec<String> = view["votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ballot| ballot["by"].as_str().unwrap().to_string())
        .collect();
    voters.sort();
    voters
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_two_approvers_racing_on_two_replicas_run_the_call_once_with_both_votes() {
    let (_database, root, a, b) = fleet("quorum_two_racing").await;
    let id = ask_delete(&a).await;
    let before = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    let (on_a, on_b) = tokio::join!(approve(&a, &id, "bob"), approve(&b, &id, "dana"));
    assert!(
        [on_a.status, on_b.status]
            .iter()
            .all(|status| [200, 202].contains(status)),
        "both votes count: A {} B {}",
        on_a.body,
        on_b.body
    );
    let pending = [&on_a, &on_b]
        .iter()
        .filter(|reply| reply.body["status"] == "pending")
        .count();
    assert_eq!(pending, 1, "one waited, one completed the quorum");
    let view = ended(&b, &id).await;
    assert_eq!(view["status"], "completed", "{view}");
    assert_eq!(voters(&view), ["bob", "dana"], "{view}");
    // Only the replica whose vote completed the quorum ran the call, on its own sandbox.
    let after = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    let winner = usize::from(view["approved_by"] == "dana");
    let loser = 1 - winner;
    assert_eq!(after[loser], before[loser], "the other replica ran nothing");
    assert!(
        after[winner] > before[winner],
        "the claiming replica ran it"
    );
    // The logs hold both votes: one `voted`, and the `approved` records of the claim (the
    // ask's decision and the re-decision).
    let claimer = view["approved_by"].as_str().unwrap().to_string();
    let other = if claimer == "bob" { "dana" } else { "bob" };
    let mut expected = vec![
        ("approved".to_string(), claimer.clone()),
        ("approved".to_string(), claimer.clone()),
        ("voted".to_string(), other.to_string()),
    ];
    expected.sort();
    assert_eq!(logged_actions(root.path(), &id), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_six_approvers_racing_on_a_quorum_of_two_never_run_it_twice() {
    let (_database, root, a, b) = fleet("quorum_six_racing").await;
    let id = ask_delete(&a).await;
    let before = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    let replies =
        futures_util::future::join_all(APPROVERS.iter().enumerate().map(|(index, approver)| {
            let replica = if index % 2 == 0 { &a } else { &b };
            approve(replica, &id, approver)
        }))
        .await;
    let counted: Vec<&Reply> = replies
        .iter()
        .filter(|reply| [200, 202].contains(&reply.status))
        .collect();
    let refused: Vec<&Reply> = replies.iter().filter(|reply| reply.status == 409).collect();
    assert_eq!(
        (counted.len(), refused.len()),
        (2, 4),
        "{:?}",
        replies.iter().map(|reply| &reply.body).collect::<Vec<_>>()
    );
    for late in refused {
        let text = late.body["error"]["message"].to_string();
        assert!(
            text.contains("already running") || text.contains("already completed"),
            "{text}"
        );
    }
    let view = ended(&a, &id).await;
    assert_eq!(view["status"], "completed", "{view}");
    assert_eq!(view["votes"].as_array().unwrap().len(), 2, "{view}");
    let notes: Vec<&str> = view["votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ballot| ballot["note"].as_str().unwrap())
        .collect();
    assert!(
        notes.iter().all(|note| note.ends_with(" agrees")),
        "{notes:?}"
    );
    let after = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    let ran: Vec<bool> = (0..2).map(|n| after[n] > before[n]).collect();
    assert_eq!(
        ran.iter().filter(|ran| **ran).count(),
        1,
        "one replica ran it: {ran:?}"
    );
    let actions = logged_actions(root.path(), &id);
    let approved = actions
        .iter()
        .filter(|(action, _)| action == "approved")
        .count();
    let voted = actions
        .iter()
        .filter(|(action, _)| action == "voted")
        .count();
    assert_eq!((approved, voted), (2, 1), "{actions:?}");
}

/// Issue 35 §1 across a fleet: who may answer is decided the same on every replica. With the
/// owners rule docs/admins.md shows in the shared policies, the asking agent's own person
/// (separation of duties) and a non-owner are refused on either replica and nothing counts;
/// two owners approving on different replicas complete the quorum of two, and it runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_eligibility_holds_on_both_replicas_and_two_owners_complete_the_quorum() {
    let database = Database::fresh("quorum_eligibility").await;
    let root = tempfile::tempdir().unwrap();
    let policies = quorum_policies(root.path());
    let approving = policies.join("approving");
    std::fs::create_dir_all(&approving).unwrap();
    std::fs::write(
        approving.join("owners.cedar"),
        crate::support::documented_rule("org.deletes-by-owners"),
    )
    .unwrap();
    let owners = ["erin", "frank"];
    let mut callers = vec![
        json!({"token": AGENT, "role": "agent", "principal": "alice"}),
        json!({"token": token("alice"), "role": "approver", "principal": "alice", "groups": ["owners"]}),
    ];
    callers.extend(APPROVERS.iter().map(|approver| {
        let groups: Vec<&str> = if owners.contains(approver) { vec!["owners"] } else { vec![] };
        json!({"token": token(approver), "role": "approver", "principal": approver, "groups": groups})
    }));
    let config = root.path().join("askgate.json");
    std::fs::write(&config, json!({ "callers": callers }).to_string()).unwrap();
    let extra = ["--config", config.to_str().unwrap()];
    let (a, b) = tokio::join!(
        Replica::start_with("a", root.path(), &database.url, &policies, &extra),
        Replica::start_with("b", root.path(), &database.url, &policies, &extra),
    );
    let id = ask_delete(&a).await;
    let before = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    for (replica, approver, reason) in [
        (&b, "alice", "separation of duties"),
        (&a, "alice", "separation of duties"),
        (&b, "bob", "destructive deletes are approved only by owners"),
        (
            &a,
            "dana",
            "destructive deletes are approved only by owners",
        ),
    ] {
        let refused = approve(replica, &id, approver).await;
        assert_eq!(
            refused.status, 403,
            "{approver} on {}: {}",
            replica.name, refused.body
        );
        let text = refused.body["error"]["message"].to_string();
        assert!(
            text.contains(reason),
            "{approver} on {}: {text}",
            replica.name
        );
    }
    let view = seen(&a, &id, "0s").await;
    assert_eq!(view["status"], "pending", "{view}");
    assert_eq!(view["votes"], json!([]), "nothing counted: {view}");

    let (on_a, on_b) = tokio::join!(approve(&a, &id, "erin"), approve(&b, &id, "frank"));
    assert!(
        [on_a.status, on_b.status]
            .iter()
            .all(|status| [200, 202].contains(status)),
        "both owners count: A {} B {}",
        on_a.body,
        on_b.body
    );
    let view = ended(&a, &id).await;
    assert_eq!(view["status"], "completed", "{view}");
    assert_eq!(voters(&view), ["erin", "frank"], "{view}");
    let after = [
        a.sandbox_projects_requests().await,
        b.sandbox_projects_requests().await,
    ];
    let ran = (0..2).filter(|n| after[*n] > before[*n]).count();
    assert_eq!(ran, 1, "one replica ran it");
}
