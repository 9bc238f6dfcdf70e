//! support::serve: `askgate serve` as a child process — the one way the tests run the real
//! binary as a service. It listens on port 0 and its URL is the one it announces (T1: a port
//! found free here and bound by the child later can be taken in between). Its stdout and
//! stderr go to `serve.out` and `serve.err` in its working directory; it is killed with
//! SIGKILL when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::reply::send;

/// `askgate serve` as a child process; killed with SIGKILL when dropped.
pub struct Binary {
    pub url: String,
    /// Its working directory: `serve.out` and `serve.err` are written there.
    pub work: PathBuf,
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
        Binary::spawn(args, &[], work).await
    }

    /// [`Binary::start_with`] with the environment variables `envs` set (and `OTEL_*`,
    /// `ASKGATE_*` of the test's own environment left out unless named here).
    pub async fn spawn(args: &[&std::ffi::OsStr], envs: &[(&str, &str)], work: &Path) -> Binary {
        let output = |name: &str| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(work.join(name))
                .expect("output file")
        };
        let out_from = std::fs::metadata(work.join("serve.out")).map_or(0, |meta| meta.len());
        let mut command = Command::new(env!("CARGO_BIN_EXE_askgate"));
        for (name, _) in std::env::vars() {
            if name.starts_with("OTEL_") || name.starts_with("ASKGATE_") {
                command.env_remove(name);
            }
        }
        let child = command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(envs.iter().copied())
            .current_dir(work)
            .stdin(Stdio::null())
            .stdout(output("serve.out"))
            .stderr(output("serve.err"))
            .spawn()
            .expect("askgate serve starts");
        let mut binary = Binary {
            url: String::new(),
            work: work.to_path_buf(),
            child,
            out_from,
        };
        binary.url = binary.announced("askgate listening on ").await;
        binary.wait_until_healthy().await;
        binary
    }

    /// The rest of the first line this run printed that starts with `prefix` (up to its first
    /// space), waiting up to 15 s for it.
    pub async fn announced(&mut self, prefix: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Some(rest) = self.printed(prefix) {
                return rest;
            }
            if let Some(status) = self.child.try_wait().expect("child status") {
                panic!(
                    "askgate serve exited ({status}) before printing `{prefix}`: {}",
                    self.errors()
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("askgate serve never printed `{prefix}`");
    }

    /// The rest of the first line this run has printed so far that starts with `prefix` (up
    /// to its first space).
    pub fn printed(&self, prefix: &str) -> Option<String> {
        let printed = std::fs::read(self.work.join("serve.out")).unwrap_or_default();
        let start = usize::try_from(self.out_from)
            .unwrap_or(0)
            .min(printed.len());
        let text = String::from_utf8_lossy(&printed[start..]).into_owned();
        let rest = text.lines().find_map(|line| line.strip_prefix(prefix))?;
        Some(rest.split(' ').next().unwrap_or(rest).to_string())
    }

    /// What it wrote to stderr.
    pub fn errors(&self) -> String {
        std::fs::read_to_string(self.work.join("serve.err")).unwrap_or_default()
    }

    async fn wait_until_healthy(&self) {
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
        let errors = self.errors();
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

    /// The in-process sandbox's address, from this run's start-up summary (printed before
    /// the service answers).
    pub fn sandbox_url(&self) -> String {
        self.printed("upstream: in-process sandbox at ")
            .expect("the summary names the sandbox")
            .trim_end_matches('/')
            .to_string()
    }

    /// SIGKILL, then reap.
    pub fn kill_9(&mut self) {
        let _already_gone = self.child.kill();
        self.child.wait().expect("child reaped");
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
