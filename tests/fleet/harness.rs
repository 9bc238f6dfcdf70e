//! The fleet harness: a fresh PostgreSQL database per test (created on the server
//! `cluster::server_url` names, dropped when the test ends), replicas of the real binary as
//! child processes on loopback (`serve --store`, through `support::serve`), the calls the tests
//! send, and a TCP proxy to the store that can be cut. It only talks HTTP to the replicas
//! (`support::reply`) and SQL to the store.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_postgres::NoTls;

use super::cluster;

pub use askgate::server::config::{DEMO_AGENT_TOKEN as AGENT, DEMO_APPROVER_TOKEN as APPROVER};

/// A database of its own for one test; dropped (connections and all) with the value.
pub struct Database {
    pub url: String,
    server: String,
    name: String,
}

impl Database {
    /// A fresh database on the fleet tests' server (the configured one, or a throwaway
    /// cluster when it does not answer).
    pub async fn fresh(test: &str) -> Database {
        Database::fresh_on(&cluster::server_url().await, test).await
    }

    /// A fresh database on `server`.
    pub async fn fresh_on(server: &str, test: &str) -> Database {
        let connected = tokio::time::timeout(
            Duration::from_secs(10),
            tokio_postgres::connect(server, NoTls),
        )
        .await;
        let (client, connection) = match connected {
            Ok(Ok(pair)) => pair,
            Ok(Err(error)) => panic!("{test}: no PostgreSQL at {server}: {error}"),
            Err(_) => panic!("{test}: no PostgreSQL at {server}: no answer within 10 s"),
        };
        tokio::spawn(connection);
        let suffix = uuid::Uuid::new_v4().simple().to_string();
        let name = format!("askgate_{}", suffix.get(..16).unwrap_or("x"));
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("the test database is created");
        let mut url = url::Url::parse(server).expect("a URL");
        url.set_path(&format!("/{name}"));
        Database {
            url: url.to_string(),
            server: server.to_string(),
            name,
        }
    }

    /// A client on the test's database.
    pub async fn client(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.url, NoTls)
            .await
            .expect("connects to the test database");
        tokio::spawn(connection);
        client
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let server = self.server.clone();
        let name = self.name.clone();
        // A thread of its own: the test's runtime may be shutting down.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                if let Ok((client, connection)) = tokio_postgres::connect(&server, NoTls).await {
                    tokio::spawn(connection);
                    let _ = client
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await;
                }
            });
        });
        let _ = dropped.join();
    }
}

pub use crate::support::reply::{session, Reply};

/// The managed example that turns a Projects `project_delete` into an ask.
pub fn ask_delete_policies(work: &Path) -> PathBuf {
    let dir = work.join("policies");
    std::fs::create_dir_all(&dir).expect("policy dir");
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/examples/ask-project-delete.cedar");
    std::fs::copy(source, dir.join("ask-project-delete.cedar")).expect("policy copied");
    dir
}

pub use crate::support::free_port;
use crate::support::serve::Binary;

/// One replica: `askgate serve --store <url>` with its own work and log directories.
pub struct Replica {
    pub name: String,
    pub url: String,
    pub work: PathBuf,
    pub http: reqwest::Client,
    binary: Binary,
}

impl Replica {
    /// Starts replica `name` of the fleet on `store`, in `root/name`, with `policies`.
    pub async fn start(name: &str, root: &Path, store: &str, policies: &Path) -> Replica {
        Replica::start_with(name, root, store, policies, &[]).await
    }

    /// Like [`Replica::start`], with `extra` arguments for `serve`.
    pub async fn start_with(
        name: &str,
        root: &Path,
        store: &str,
        policies: &Path,
        extra: &[&str],
    ) -> Replica {
        let work = root.join(name);
        std::fs::create_dir_all(&work).expect("work dir");
        let store = std::ffi::OsStr::new(store);
        let logs = work.join("logs");
        let mut args = vec![
            "--store".as_ref(),
            store,
            "--policies".as_ref(),
            policies.as_os_str(),
            "--log-dir".as_ref(),
            logs.as_os_str(),
            "--watch-seconds".as_ref(),
            "0".as_ref(),
        ];
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let envs = [("ASKGATE_REPLICA_ID", name), ("RUST_LOG", "info")];
        let binary = Binary::spawn(&args, &envs, &work).await;
        let replica = Replica {
            name: name.to_string(),
            url: binary.url.clone(),
            work,
            http: reqwest::Client::new(),
            binary,
        };
        replica.wait_until_ready().await;
        replica
    }

    async fn wait_until_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(reply) = self
                .try_send(reqwest::Method::GET, "/healthz", None, None)
                .await
            {
                if reply.status == 200 && reply.body["store"]["ready"] == true {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "replica {} did not become ready: {}",
            self.name,
            self.errors()
        );
    }

    pub fn errors(&self) -> String {
        self.binary.errors()
    }

    /// The URL of this replica's in-process sandbox upstream (from its start-up summary).
    pub fn sandbox_url(&self) -> String {
        self.binary.sandbox_url()
    }

    /// How many Projects requests this replica's sandbox has seen.
    pub async fn sandbox_projects_requests(&self) -> u64 {
        let url = format!("{}/_sandbox/stats", self.sandbox_url());
        let stats: Value = self
            .http
            .get(url)
            .send()
            .await
            .expect("stats")
            .json()
            .await
            .expect("json");
        stats["projects_requests"]
            .as_u64()
            .unwrap_or_else(|| panic!("{stats}"))
    }

    pub async fn try_send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<Reply, reqwest::Error> {
        let url = format!("{}{path}", self.url);
        let body = body.map(|body| body.to_string().into_bytes());
        crate::support::reply::send(&self.http, method, url, token, body).await
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        self.try_send(method, path, token, body)
            .await
            .unwrap_or_else(|error| panic!("{} {path}: {error}", self.name))
    }

    /// Asks for a Projects `project_delete` of `path`; returns the approval id.
    pub async fn ask_delete(&self, session_id: &str, path: &str) -> String {
        let body = json!({"session": session(session_id),
                          "input": {"method": "project_delete", "path": path}});
        let reply = self
            .send(
                reqwest::Method::POST,
                "/v1/projects/call",
                Some(AGENT),
                Some(&body),
            )
            .await;
        assert_eq!(reply.status, 202, "expected an ask: {}", reply.body);
        reply.body["approval"]["id"]
            .as_str()
            .expect("approval id")
            .to_string()
    }

    /// Records consent as the demo approver (`POST /v1/design/consent`), checked to succeed.
    pub async fn consent(&self) {
        let consent = self
            .send(
                reqwest::Method::POST,
                "/v1/design/consent",
                Some(APPROVER),
                None,
            )
            .await;
        assert_eq!(consent.status, 200, "{}", consent.body);
    }

    pub async fn approve(&self, id: &str) -> Reply {
        self.send(
            reqwest::Method::POST,
            &format!("/v1/approvals/{id}/approve"),
            Some(APPROVER),
            None,
        )
        .await
    }

    pub async fn approval(&self, id: &str, wait: &str) -> Reply {
        self.send(
            reqwest::Method::GET,
            &format!("/v1/approvals/{id}?wait={wait}"),
            Some(AGENT),
            None,
        )
        .await
    }

    pub async fn healthz(&self) -> Reply {
        self.send(reqwest::Method::GET, "/healthz", None, None)
            .await
    }

    /// SIGKILL, then reap.
    pub fn kill_9(&mut self) {
        self.binary.kill_9();
    }
}

/// Approval `id`'s approval records in the decision logs of the replicas `names` (under
/// `root`), in file order.
pub fn approval_records(root: &Path, names: &[&str], id: &str) -> Vec<Value> {
    names
        .iter()
        .flat_map(|name| {
            std::fs::read_dir(root.join(name).join("logs"))
                .into_iter()
                .flatten()
        })
        .flatten()
        .map(|file| std::fs::read_to_string(file.path()).unwrap_or_default())
        .flat_map(|text| {
            text.lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .collect::<Vec<_>>()
        })
        .filter(|record| record["kind"] == "approval" && record["approval_id"] == id)
        .collect()
}

/// A loopback TCP proxy to PostgreSQL that can be cut (every connection closed, new ones
/// refused) and restored.
pub struct Proxy {
    pub port: u16,
    open: Arc<AtomicBool>,
    cut: watch::Sender<u64>,
}

impl Proxy {
    pub async fn to(target: String) -> Proxy {
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

    /// A proxy in front of the store at `url`, and `url` through it.
    pub async fn in_front_of(url: &str) -> (Proxy, String) {
        let mut through = url::Url::parse(url).unwrap();
        let target = format!(
            "{}:{}",
            through.host_str().unwrap(),
            through.port().unwrap_or(5432)
        );
        let proxy = Proxy::to(target).await;
        through.set_port(Some(proxy.port)).unwrap();
        (proxy, through.to_string())
    }

    pub fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.cut.send_modify(|n| *n += 1);
    }

    pub fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}
