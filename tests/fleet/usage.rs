//! Usage counts shared by a fleet (issue 36 §2): two replicas of the real binary on one
//! PostgreSQL store, an admin's per-minute cap written as policy. Each replica hands its counts
//! to the store and reads the other's every second, so a limit holds across the fleet within
//! that bound: calls made on replica A count on replica B. When the store is away the counts
//! are unknown after `STALE_AFTER` seconds and the limit fails closed; they are known again
//! once it is back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::harness::{session, Database, Proxy, Replica, AGENT};
use super::outage::until;

const CAP: &str = r#"@id("org.three-calls-a-minute")
@reason("at most 3 calls a minute per agent across the fleet: wait a minute")
forbid (principal, action in Action::"Projects", resource) when { context.caller.usage.calls_minute >= 3 };
"#;

/// A limit no read reaches while the counts are known.
const DELETES: &str = r#"@id("org.deletes-a-day")
@reason("at most 3 deleted paths a day per agent")
forbid (principal, action in Action::"Projects", resource) when { context.caller.usage.deletes_day >= 3 };
"#;

fn policies(root: &Path, rule: &str) -> PathBuf {
    let dir = root.join("policies");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("limit.cedar"), rule).unwrap();
    dir
}

fn read(path: &str) -> Value {
    json!({"session": session("fleet-usage"), "input": {"method": "project_read", "path": path}})
}

async fn call(replica: &Replica, path: &str) -> (u16, Value) {
    let body = read(path);
    let reply = replica
        .send(
            reqwest::Method::POST,
            "/v1/projects/call",
            Some(AGENT),
            Some(&body),
        )
        .await;
    (reply.status, reply.body)
}

fn denied_by(body: &Value, id: &str) -> bool {
    body["policies"]
        .as_array()
        .is_some_and(|ids| ids.iter().any(|found| found == id))
}

fn capped(body: &Value) -> bool {
    denied_by(body, "org.three-calls-a-minute")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_a_per_minute_cap_holds_across_two_replicas() {
    let database = Database::fresh("usage_shared").await;
    let root = tempfile::tempdir().unwrap();
    let policies = policies(root.path(), CAP);
    let a = Replica::start("a", root.path(), &database.url, &policies).await;
    let b = Replica::start("b", root.path(), &database.url, &policies).await;
    // Both replicas have exchanged once: the counts are known.
    tokio::time::sleep(Duration::from_millis(2_500)).await;

    for path in ["one.md", "two.md"] {
        let (status, body) = call(&a, path).await;
        assert!(!capped(&body), "{status} {body}");
    }
    // Within the bound (a flush and a read, a second each), B counts A's calls.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let (status, body) = call(&b, "three.md").await;
    assert!(
        !capped(&body),
        "the third call of the minute: {status} {body}"
    );
    let (status, body) = call(&b, "four.md").await;
    assert_eq!(status, 403, "the fourth call, on the other replica: {body}");
    assert!(capped(&body), "{body}");
    assert!(
        body["reason"]
            .as_str()
            .unwrap_or("")
            .contains("across the fleet"),
        "{body}"
    );
    // And A counts B's.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let (status, body) = call(&a, "five.md").await;
    assert_eq!(status, 403, "{body}");
    assert!(capped(&body), "{body}");

    let client = database.client().await;
    let rows: i64 = client
        .query_one(
            "SELECT count(*) FROM usage_counts WHERE principal = 'demo-agent'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        rows >= 6,
        "each replica's buckets are rows of the store: {rows}"
    );
    // B's refusal went to the store as a count of its own (`denies_*`).
    let denies: i64 = client
        .query_one(
            "SELECT coalesce(sum(denies), 0)::bigint FROM usage_counts \
             WHERE principal = 'demo-agent' AND replica = 'b' AND width = 1",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(denies, 1, "B refused one call");
    // The session's calls are rows of their own (five-minute buckets), on both replicas.
    let sessions: i64 = client
        .query_one(
            "SELECT coalesce(sum(calls), 0)::bigint FROM usage_counts WHERE width = 300",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        (4..=5).contains(&sessions),
        "the session's calls, all but the last surely flushed: {sessions}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_with_the_store_away_the_counts_are_unknown_and_the_limit_fails_closed() {
    let database = Database::fresh("usage_outage").await;
    let (proxy, through) = Proxy::in_front_of(&database.url).await;
    let root = tempfile::tempdir().unwrap();
    let policies = policies(root.path(), DELETES);
    let a = Replica::start("a", root.path(), &through, &policies).await;
    let limited = |body: &Value| denied_by(body, "org.deletes-a-day");
    until("a first exchange", Duration::from_secs(10), async || {
        let (status, body) = call(&a, "known.md").await;
        status != 403 && !limited(&body)
    })
    .await;

    proxy.cut();
    // Past the staleness bound the counts read unknown: the limit denies, naming itself.
    until(
        "the limit failing closed",
        Duration::from_secs(20),
        async || {
            let (status, body) = call(&a, "away.md").await;
            status == 403 && limited(&body)
        },
    )
    .await;
    let logs = std::fs::read_dir(a.work.join("logs"))
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        logs.contains(r#""known":false"#),
        "the record says the counts were unknown"
    );

    proxy.restore();
    until(
        "the counts known again",
        Duration::from_secs(30),
        async || {
            let (status, body) = call(&a, "back.md").await;
            status != 403 && !limited(&body)
        },
    )
    .await;
}
