//! The reliability harness: an in-process service on the system clock
//! (`support::in_process`) whose state a test may hand to the watcher, the real binary
//! (`support::serve::Binary`, killable with SIGKILL), the call bodies the tests send, and the
//! two known policy sets. It only talks HTTP to a service (`support::reply`); it reads
//! policies and logs with the crate's own loaders and reader.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use askgate::authz::{baseline, PolicySnapshot, Source};
use askgate::server::boot::system_clock;
use askgate::server::config::{RawConfig, DEMO_AGENT_TOKEN, DEMO_APPROVER_TOKEN};
use askgate::server::AppState;
use serde_json::{json, Value};

use crate::support::in_process::InProcess;

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

pub use crate::support::reply::{send, session, Reply};
pub use crate::support::serve::Binary;

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

pub async fn authorize(http: &reqwest::Client, base: &str, body: &Value) -> Reply {
    let url = format!("{base}/v1/authorize");
    let body = Some(body.to_string().into_bytes());
    send(http, reqwest::Method::POST, url, Some(AGENT), body)
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

/// A service booted in this process, on the system clock; stops when dropped with the test's
/// runtime.
pub struct Service {
    pub url: String,
    pub state: AppState,
    pub http: reqwest::Client,
    _scratch: tempfile::TempDir,
    _service: InProcess,
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
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let service = InProcess::start(listener, raw, system_clock()).await;
        Service {
            url: service.url.clone(),
            state: service.state.clone(),
            http: reqwest::Client::new(),
            _scratch: scratch,
            _service: service,
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
