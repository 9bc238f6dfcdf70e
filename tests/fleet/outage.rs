//! PostgreSQL goes away under a replica (a TCP proxy between them is cut): the replica says
//! `degraded` naming the store, refuses what needs shared state with 503 naming it (an
//! approval to hold, a Design call deciding on the account's state), still answers decisions
//! that need no shared state, and recovers by itself when the store is back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::harness::{ask_delete_policies, session, Database, Replica, AGENT};

/// A loopback TCP proxy to PostgreSQL that can be cut (every connection closed, new ones
/// refused) and restored.
struct Proxy {
    port: u16,
    open: Arc<AtomicBool>,
    cut: watch::Sender<u64>,
}

impl Proxy {
    async fn to(target: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(AtomicBool::new(true));
        let (cut, cuts) = watch::channel(0u64);
        let accepting = Arc::clone(&open);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !accepting.load(Ordering::SeqCst) {
                    continue; // dropped: refused
                }
                let target = target.clone();
                let mut cuts = cuts.clone();
                // Only cuts after this connection opened close it.
                cuts.borrow_and_update();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(&target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cuts.changed() => {}
                    }
                });
            }
        });
        Proxy { port, open, cut }
    }

    fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.cut.send_modify(|n| *n += 1);
    }

    fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

async fn until(what: &str, within: Duration, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check().await {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_the_store_is_gone_shared_state_is_refused_naming_it_and_it_recovers_by_itself() {
    let database = Database::fresh("store_outage").await;
    let mut through = url::Url::parse(&database.url).unwrap();
    let target = format!(
        "{}:{}",
        through.host_str().unwrap(),
        through.port().unwrap_or(5432)
    );
    let proxy = Proxy::to(target).await;
    through.set_port(Some(proxy.port)).unwrap();
    let root = tempfile::tempdir().unwrap();
    let policies = ask_delete_policies(root.path());
    let a = Replica::start("a", root.path(), through.as_str(), &policies).await;
    let design_read = json!({"session": session("fleet-outage"), "input": {"operation": "read_file",
        "arguments": {"project_id": "p1", "path": "index.html"}}});
    let projects_read = json!({"session": session("fleet-outage"),
        "input": {"method": "project_read", "path": "notes.md"}});

    proxy.cut();
    until("degraded", Duration::from_secs(20), async || {
        a.healthz().await.body["status"] == "degraded"
    })
    .await;
    let health = a.healthz().await;
    let cause = health.body["store"]["cause"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(
        cause.contains(&format!("127.0.0.1:{}", proxy.port)),
        "{}",
        health.body
    );
    let body = json!({"session": session("fleet-outage"),
                      "input": {"method": "project_delete", "path": "notes.md"}});
    let ask = a
        .send(
            reqwest::Method::POST,
            "/v1/projects/call",
            Some(AGENT),
            Some(&body),
        )
        .await;
    assert_eq!(ask.status, 503, "{}", ask.body);
    assert!(
        ask.body.to_string().contains("shared store"),
        "{}",
        ask.body
    );
    let design = a
        .send(
            reqwest::Method::POST,
            "/v1/design/call",
            Some(AGENT),
            Some(&design_read),
        )
        .await;
    assert_eq!(design.status, 503, "{}", design.body);
    // A read that needs no shared state is still decided (and runs).
    let read = a
        .send(
            reqwest::Method::POST,
            "/v1/projects/call",
            Some(AGENT),
            Some(&projects_read),
        )
        .await;
    assert_eq!(read.status, 200, "{}", read.body);

    proxy.restore();
    until("ready again", Duration::from_secs(20), async || {
        a.healthz().await.body["status"] == "ok"
    })
    .await;
    let asked = a.ask_delete("fleet-outage", "notes.md").await;
    assert!(asked.starts_with("ap_"), "{asked}");
}
