//! The real Claude Code CLI for end-to-end tests: installed once from npm (pinned) into the
//! git-ignored `target/claude-code/`, then run headless (`-p --output-format json`) against a
//! [`FakeMessages`](super::fake_messages::FakeMessages) with a throwaway `HOME`.
//!
//! Never skips: when the client cannot be installed the test fails saying why.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

/// The pinned client (reference/agent-integration-facts.md §1).
pub const VERSION: &str = "2.1.328";
const PACKAGE: &str = "@anthropic-ai/claude-code";

/// The `claude` binary, installing it on first use.
pub fn binary() -> PathBuf {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match INSTALLED.get_or_init(install) {
        Ok(path) => path.clone(),
        Err(why) => panic!("the real Claude Code client is needed and could not be had: {why}"),
    }
}

fn install() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/claude-code");
    let bin = root.join("node_modules/.bin/claude");
    if installed_version(&bin).as_deref() == Some(VERSION) {
        return Ok(bin);
    }
    std::fs::create_dir_all(&root).map_err(|error| format!("{}: {error}", root.display()))?;
    let output = std::process::Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&root)
        .arg(format!("{PACKAGE}@{VERSION}"))
        .output()
        .map_err(|error| format!("`npm` could not run ({error}): install Node.js and npm"))?;
    if !output.status.success() {
        return Err(format!(
            "`npm install {PACKAGE}@{VERSION}` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    match installed_version(&bin) {
        Some(version) if version == VERSION => Ok(bin),
        other => Err(format!(
            "installed, but `claude --version` says {other:?}, not {VERSION}"
        )),
    }
}

fn installed_version(bin: &Path) -> Option<String> {
    let output = std::process::Command::new(bin)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().next().map(str::to_string)
}

/// One headless run of the client.
pub struct Run<'a> {
    pub api_url: &'a str,
    pub prompt: &'a str,
    /// `--mcp-config` contents, when the run talks to MCP servers.
    pub mcp_config: Option<Value>,
    /// `--settings` contents (hooks and the like).
    pub settings: Option<Value>,
    /// `--allowedTools`, so a tool runs without a prompt in `-p` mode.
    pub allowed_tools: Vec<String>,
    /// Further arguments (e.g. `--permission-mode plan`).
    pub args: Vec<String>,
    /// Extra environment (e.g. `CLAUDE_PROJECT_UUID`, `ASKGATE_SERVER`).
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

impl Run<'_> {
    /// Runs the client to completion and returns its final JSON (`result`, `is_error`,
    /// `permission_denials`, ...).
    pub async fn json(&self) -> Value {
        let home = tempfile::tempdir().expect("home dir");
        self.json_in(home.path()).await
    }

    /// [`Run::json`] with `home` as the client's `HOME` (and working directory), so that what
    /// was configured there (`claude mcp add`, `askgate connect claude-code`) applies.
    pub async fn json_in(&self, home: &Path) -> Value {
        let mut command = client(home);
        command
            .arg("-p")
            .arg(self.prompt)
            .args(["--output-format", "json"])
            .args(&self.args)
            .env("ANTHROPIC_BASE_URL", self.api_url)
            .envs(self.env.iter().map(|(key, value)| (key, value)));
        if let Some(config) = &self.mcp_config {
            let path = home.join("mcp.json");
            std::fs::write(&path, config.to_string()).expect("mcp config written");
            command.arg("--mcp-config").arg(path);
        }
        if let Some(settings) = &self.settings {
            let path = home.join("settings.json");
            std::fs::write(&path, settings.to_string()).expect("settings written");
            command.arg("--settings").arg(path);
        }
        if !self.allowed_tools.is_empty() {
            command
                .arg("--allowedTools")
                .arg(self.allowed_tools.join(","));
        }
        let output = tokio::time::timeout(self.timeout, command.output())
            .await
            .expect("the client finished before its deadline")
            .expect("the client ran");
        let stdout = String::from_utf8_lossy(&output.stdout);
        serde_json::from_str(stdout.trim()).unwrap_or_else(|error| {
            panic!(
                "the client's output is not JSON ({error}); status {}, stdout {stdout}, stderr {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            )
        })
    }
}

/// The client with a clean environment and `home` as its `HOME` and working directory; it is
/// killed if the test drops it.
fn client(home: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(binary());
    command
        .current_dir(home)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-for-tests")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    command
}

/// Runs `claude ARGS` (e.g. `mcp add`, `mcp list`) in `home` and returns its exit status and
/// everything it printed (stdout, then stderr).
pub async fn command(home: &Path, args: &[&str], timeout: Duration) -> (bool, String) {
    let output = tokio::time::timeout(timeout, client(home).args(args).output())
        .await
        .expect("the client finished before its deadline")
        .expect("the client ran");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), printed)
}

/// Starts `claude ARGS` in `home` on a terminal of its own (`script` gives it a pty, as a
/// person's shell would), its output piped and `env` added, for a command that does something
/// to act on and then waits (e.g. `mcp login`); killed if the test drops it.
pub fn spawn_on_terminal(
    home: &Path,
    args: &[&str],
    env: &[(&str, String)],
) -> tokio::process::Child {
    let line = std::iter::once(binary().display().to_string())
        .chain(args.iter().map(|arg| arg.to_string()))
        .map(|word| format!("'{}'", word.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let mut command = tokio::process::Command::new("script");
    command
        .args(["-qfec", &line, "/dev/null"])
        .current_dir(home)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("TERM", "dumb")
        .env("ANTHROPIC_API_KEY", "sk-ant-fake-for-tests")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .envs(env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command.spawn().expect("script starts the client")
}
