//! The reliability harness: an in-process service (`boot` + `run` on 127.0.0.1:0) whose state
//! a test may hand to the watcher, the real binary as a child process that can be killed with
//! SIGKILL, the call bodies the tests send, and the two known policy sets. It only talks HTTP
//! to a service; it reads policies and logs with the crate's own loaders and reader.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use askgate::authz::{baseline, PolicySnapshot, Source};
use askgate::sandbox::Sandbox;
use askgate::server::boot::{boot, system_clock};
use askgate::server::config::{Config, RawConfig, DEMO_AGENT_TOKEN, DEMO_APPROVER_TOKEN};
use askgate::server::AppState;
use serde_json::{json, Value};

pub const AGENT: &str = DEMO_AGENT_TOKEN;
pub const APPROVER: &str = DEMO_APPROVER_TOKEN;

/// The managed example that turns a Projects `project_delete` into an ask.
pub const ASK_DELETE_FILE: &str = "ask-project-delete.cedar";
pub const ASK_DELETE_POLICY: &str = "example.ask-project-delete";

pub fn ask_delete_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("policies/examples")
        .join(ASK_DELETE_FILE);
    std::fs::read_to_string(path).expect("the example policy is readable")
}

/// The hashes of the two sets a managed directory alternates between: A (empty: the baseline
/// alone) and B (the baseline plus `ask-project-delete.cedar` in that directory).
#[derive(Debug, Clone)]
pub struct KnownSets {
    pub baseline_only: String,
    pub with_ask_delete: String,
}

impl KnownSets {
    /// Loads both sets the way the service names their sources (by full path).
    pub fn for_managed_dir(managed: &Path) -> KnownSets {
        let schema = baseline::schema_source();
        let mut sources = baseline::policy_sources();
        let only = PolicySnapshot::load(&schema, &sources).expect("the baseline loads");
        let name = managed.join(ASK_DELETE_FILE).display().to_string();
        sources.push(Source::new(name, ask_delete_text()));
        let with = PolicySnapshot::load(&schema, &sources).expect("set B loads");
        assert_ne!(only.hash(), with.hash());
        KnownSets {
            baseline_only: only.hash().to_string(),
            with_ask_delete: with.hash().to_string(),
        }
    }
}

/// A status and a JSON body (`Null` when the body is not JSON).
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    pub fn text(&self, key: &str) -> &str {
        self.body[key].as_str().unwrap_or("")
    }
}

pub fn session(id: &str) -> Value {
    json!({"id": id, "agent": "main", "mode": "default", "interactive": true})
}

/// `POST /v1/authorize` of a Projects `project_delete` of `notes.md` (attached project).
pub fn delete_notes(session_id: &str) -> Value {
    json!({
        "session": session(session_id),
        "tool": "Projects",
        "input": {"method": "project_delete", "path": "notes.md"},
    })
}

pub fn read_notes(session_id: &str) -> Value {
    json!({
        "session": session(session_id),
        "tool": "Projects",
        "input": {"method": "project_read", "path": "notes.md"},
    })
}

/// A Design `copy_files` without a plan token (denied by `design.tokenless-copy`).
pub fn tokenless_copy(session_id: &str) -> Value {
    json!({
        "session": session(session_id),
        "tool": "ClaudeDesign",
        "input": {"operation": "copy_files", "arguments": {
            "project_id": "p1", "files": [{"src": "index.html", "dest": "copy.html"}]}},
    })
}

pub async fn send(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<Reply, reqwest::Error> {
    let mut request = http.request(method, url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await?;
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    Ok(Reply { status, body })
}

pub async fn authorize(http: &reqwest::Client, base: &str, body: &Value) -> Reply {
    let url = format!("{base}/v1/authorize");
    send(http, reqwest::Method::POST, url, Some(AGENT), Some(body))
        .await
        .expect("authorize answered")
}

pub async fn reload(http: &reqwest::Client, base: &str, token: &str) -> Reply {
    let url = format!("{base}/v1/admin/reload");
    send(http, reqwest::Method::POST, url, Some(token), None)
        .await
        .expect("reload answered")
}

pub async fn healthz(http: &reqwest::Client, base: &str) -> Reply {
    let url = format!("{base}/healthz");
    send(http, reqwest::Method::GET, url, None, None)
        .await
        .expect("healthz answered")
}

/// A service booted in this process; stops when dropped with the test's runtime.
pub struct Service {
    pub url: String,
    pub state: AppState,
    pub http: reqwest::Client,
    _scratch: tempfile::TempDir,
    _sandbox: Option<Sandbox>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// What a test varies about an in-process service.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub policies: Vec<PathBuf>,
    pub shadow_policies: Vec<PathBuf>,
    pub log_dir: Option<PathBuf>,
    /// `log_failure` (`refuse` when `None`).
    pub log_failure: Option<String>,
    /// `log_room_bytes` (none when `None`).
    pub log_room_bytes: Option<u64>,
}

impl Service {
    pub async fn start(setup: Setup) -> Service {
        let scratch = tempfile::tempdir().expect("scratch dir");
        let raw = RawConfig {
            listen: Some("127.0.0.1:0".into()),
            policies: Some(setup.policies),
            shadow_policies: Some(setup.shadow_policies),
            log_dir: setup.log_dir,
            log_failure: setup.log_failure,
            log_room_bytes: setup.log_room_bytes,
            spill_dir: Some(scratch.path().to_path_buf()),
            ..RawConfig::default()
        };
        let config = Config::validate(raw).expect("valid config");
        let booted = boot(&config, system_clock()).await.expect("boots");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(askgate::server::run(
            listener,
            booted.state.clone(),
            async move {
                let _ = stopped.await;
            },
        ));
        Service {
            url,
            state: booted.state,
            http: reqwest::Client::new(),
            _scratch: scratch,
            _sandbox: booted.sandbox,
            _shutdown: shutdown,
        }
    }

    pub async fn authorize(&self, body: &Value) -> Reply {
        authorize(&self.http, &self.url, body).await
    }

    pub async fn healthz(&self) -> Reply {
        healthz(&self.http, &self.url).await
    }

    /// The text of `/metrics`.
    pub async fn metrics(&self) -> String {
        let url = format!("{}/metrics", self.url);
        let reply = send(&self.http, reqwest::Method::GET, url, None, None)
            .await
            .expect("metrics answered");
        assert_eq!(reply.status, 200, "{}", reply.body);
        reply.body.as_str().unwrap_or_default().to_string()
    }

    pub async fn reload(&self) -> Reply {
        reload(&self.http, &self.url, APPROVER).await
    }

    /// Polls `/healthz` until its snapshot is `hash`; false after `within`.
    pub async fn wait_for_snapshot(&self, hash: &str, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if self.healthz().await.text("snapshot") == hash {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    }
}

/// `askgate serve` as a child process; killed with SIGKILL when dropped.
pub struct Binary {
    pub url: String,
    child: Child,
    /// Where this run's stdout starts in `serve.out` (a restart appends to the same file).
    out_from: u64,
}

impl Binary {
    /// Starts `serve --log-dir logs` in `work` and waits (up to 15 s) for `/healthz`.
    pub async fn start(logs: &Path, work: &Path) -> Binary {
        Binary::start_with(&["--log-dir".as_ref(), logs.as_os_str()], work).await
    }

    /// Starts `serve` with `args` (after `--listen`) in `work` and waits for `/healthz`.
    ///
    /// It listens on port 0 and the URL is the one it announces (T1): a port found free here
    /// and bound by the child later can be taken in between, by a client's ephemeral port.
    pub async fn start_with(args: &[&std::ffi::OsStr], work: &Path) -> Binary {
        let output = |name: &str| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(work.join(name))
                .expect("output file")
        };
        let out_from = std::fs::metadata(work.join("serve.out")).map_or(0, |meta| meta.len());
        let child = Command::new(env!("CARGO_BIN_EXE_askgate"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .current_dir(work)
            .stdin(Stdio::null())
            .stdout(output("serve.out"))
            .stderr(output("serve.err"))
            .spawn()
            .expect("askgate serve starts");
        let mut binary = Binary {
            url: String::new(),
            child,
            out_from,
        };
        binary.url = binary.announced("askgate listening on ", work).await;
        binary.wait_until_healthy(work).await;
        binary
    }

    /// The rest of the first line this run printed that starts with `prefix` (up to its first
    /// space), waiting up to 15 s for it.
    pub async fn announced(&mut self, prefix: &str, work: &Path) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            let printed = std::fs::read(work.join("serve.out")).unwrap_or_default();
            let start = usize::try_from(self.out_from)
                .unwrap_or(0)
                .min(printed.len());
            let text = String::from_utf8_lossy(&printed[start..]).into_owned();
            let line = text.lines().find_map(|line| line.strip_prefix(prefix));
            if let Some(rest) = line {
                return rest.split(' ').next().unwrap_or(rest).to_string();
            }
            if let Some(status) = self.child.try_wait().expect("child status") {
                let errors = std::fs::read_to_string(work.join("serve.err")).unwrap_or_default();
                panic!("askgate serve exited ({status}) before printing `{prefix}`: {errors}");
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("askgate serve never printed `{prefix}`");
    }

    async fn wait_until_healthy(&self, work: &Path) {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            let url = format!("{}/healthz", self.url);
            if let Ok(reply) = send(&http, reqwest::Method::GET, url, None, None).await {
                if reply.status == 200 {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let errors = std::fs::read_to_string(work.join("serve.err")).unwrap_or_default();
        panic!("askgate serve did not become healthy: {errors}");
    }

    /// Sends `signal` (a `kill -<signal>` name) and waits up to `within` for the exit code
    /// (`None` when a signal ended it, or it is still running).
    pub fn signal_and_wait(&mut self, signal: &str, within: Duration) -> Option<i32> {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -{signal} failed");
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("child status") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// SIGKILL, then reap.
    pub fn kill_9(&mut self) {
        self.child.kill().expect("SIGKILL sent");
        self.child.wait().expect("child reaped");
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the binary with `args` and returns its exit code and output.
pub fn askgate(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .output()
        .expect("askgate runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
