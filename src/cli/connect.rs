//! cli::connect: `askgate connect claude-code` — Claude Code behind askgate in one step: the MCP
//! server entry (added with the client's own `claude mcp add-json`, user scope by default, or
//! written as an `--mcp-config` file), whose `Authorization` header is
//! `Bearer ${ASKGATE_AGENT_TOKEN}`: the client expands it from its environment when it starts,
//! so no token is ever written; the `PreToolUse` hook for the built-in and the MCP tools (the
//! entry `hook install` writes, fail-closed); then what to do when an ask appears. Nothing is
//! written to the settings file when the MCP step fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};

use super::hook::install::{install_hook, valid_server, InstallError};
use super::hook::{deadline_seconds, AGENT_TOKEN_VARIABLE};
use super::{EXIT_BAD_INPUT, EXIT_IO, EXIT_OK};

/// The header value Claude Code expands from its environment (Claude Code 2.1.328 expands
/// `${VAR}` in an MCP server's `headers`).
pub const AUTHORIZATION: &str = "Bearer ${ASKGATE_AGENT_TOKEN}";

#[derive(Debug, Args)]
pub struct ConnectArgs {
    #[command(subcommand)]
    pub client: ConnectClient,
}

#[derive(Debug, Subcommand)]
pub enum ConnectClient {
    /// Add askgate as Claude Code's MCP server and its `PreToolUse` hook; print what to do
    /// when an ask appears.
    ClaudeCode(ConnectClaudeCodeArgs),
}

#[derive(Debug, Args)]
pub struct ConnectClaudeCodeArgs {
    /// The askgate service (its `/mcp` is the MCP server, its console at `/console`).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// The MCP server's name in Claude Code (its tools are `mcp__NAME__ClaudeDesign`, …).
    #[arg(long, default_value = "askgate")]
    pub name: String,
    /// The Claude Code settings file the hook goes into (default `~/.claude/settings.json`).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Write the MCP server into this file (for `claude --mcp-config FILE`) instead of adding
    /// it with `claude mcp add-json`.
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
    /// Where `claude mcp add-json` keeps the server.
    #[arg(long, value_enum, default_value_t = Scope::User)]
    pub scope: Scope,
    /// The Claude Code command.
    #[arg(long, default_value = "claude")]
    pub claude: PathBuf,
    /// The hook command's deadline, 1 to 60.
    #[arg(long, default_value_t = 10, value_parser = deadline_seconds())]
    pub deadline_seconds: u64,
}

/// `claude mcp add-json --scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    User,
    Project,
    Local,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Project => "project",
            Self::Local => "local",
        }
    }
}

/// Why the client was not connected.
#[derive(Debug, thiserror::Error)]
enum ConnectError {
    #[error(transparent)]
    Hook(#[from] InstallError),
    #[error("`--name` must be 1–64 letters, digits, `_` or `-`, not `{0}`")]
    Name(String),
    #[error("no settings file given and `HOME` is not set: pass `--settings FILE`")]
    NoHome,
    #[error("cannot run `{claude}` ({error}): install Claude Code, pass `--claude PATH`, or write an MCP config file with `--mcp-config FILE`")]
    Claude { claude: String, error: String },
    #[error("`{claude} mcp add-json` failed: {said}")]
    AddJson { claude: String, said: String },
    #[error("`{path}` {problem}")]
    McpConfig { path: String, problem: String },
}

impl ConnectError {
    fn code(&self) -> u8 {
        match self {
            Self::Hook(error) => error.code(),
            Self::Claude { .. } | Self::AddJson { .. } | Self::McpConfig { .. } => EXIT_IO,
            Self::Name(_) | Self::NoHome => EXIT_BAD_INPUT,
        }
    }
}

pub fn run(args: &ConnectArgs) -> u8 {
    let ConnectClient::ClaudeCode(args) = &args.client;
    match connect(args) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            EXIT_OK
        }
        Err(error) => {
            eprintln!("askgate: {error}");
            error.code()
        }
    }
}

/// Connects, and says what was done and what to do next.
fn connect(args: &ConnectClaudeCodeArgs) -> Result<Vec<String>, ConnectError> {
    let server = valid_server(&args.server)?;
    let name = valid_name(&args.name)?;
    let settings = match &args.settings {
        Some(path) => path.clone(),
        None => default_settings()?,
    };
    let entry = json!({"type": "http", "url": format!("{server}/mcp"),
        "headers": {"Authorization": AUTHORIZATION}});
    let added = match &args.mcp_config {
        Some(path) => write_mcp_config(path, name, &entry)?,
        None => add_json(&args.claude, args.scope, name, &entry)?,
    };
    let (merged, hook) = install_hook(&settings, &server, args.deadline_seconds, Some(name))?;
    let mut lines = vec![
        format!("connected Claude Code to askgate at {server}:"),
        format!(
            "- MCP server `{name}` {added}: {server}/mcp with the header `Authorization: \
             {AUTHORIZATION}` (Claude Code reads the token from its environment when it \
             starts; no token is written)"
        ),
        format!(
            "- `PreToolUse` hook in `{}` for `{}`: it runs `{}`, and any failure to run it \
             blocks the call",
            settings.display(),
            merged.matcher,
            hook.binary
        ),
    ];
    lines.extend(next_steps(&server, args.mcp_config.as_deref()));
    Ok(lines)
}

fn valid_name(name: &str) -> Result<&str, ConnectError> {
    let valid = (1..=64).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(name)
    } else {
        Err(ConnectError::Name(name.escape_debug().to_string()))
    }
}

fn default_settings() -> Result<PathBuf, ConnectError> {
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty());
    let home = home.ok_or(ConnectError::NoHome)?;
    Ok(PathBuf::from(home).join(".claude").join("settings.json"))
}

/// `claude mcp add-json --scope SCOPE NAME ENTRY`, after removing a server of that name in
/// that scope (so connecting again updates it).
fn add_json(
    claude: &Path,
    scope: Scope,
    name: &str,
    entry: &Value,
) -> Result<String, ConnectError> {
    let shown = claude.display().to_string();
    let cannot = |error: std::io::Error| ConnectError::Claude {
        claude: shown.clone(),
        error: error.to_string(),
    };
    let scope_arg = ["--scope", scope.as_str()];
    // A server of that name from an earlier run: replaced, not duplicated.
    Command::new(claude)
        .args(["mcp", "remove"])
        .args(scope_arg)
        .arg(name)
        .output()
        .map_err(cannot)?;
    let output = Command::new(claude)
        .args(["mcp", "add-json"])
        .args(scope_arg)
        .arg(name)
        .arg(entry.to_string())
        .output()
        .map_err(cannot)?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
        let said = if said.is_empty() {
            String::from_utf8_lossy(&output.stdout).trim().to_string()
        } else {
            said
        };
        return Err(ConnectError::AddJson {
            claude: shown,
            said,
        });
    }
    Ok(format!(
        "added with `{shown} mcp add-json --scope {}`",
        scope.as_str()
    ))
}

/// Merges `{"mcpServers": {NAME: ENTRY}}` into `path` (created if missing; every other key
/// and server kept).
fn write_mcp_config(path: &Path, name: &str, entry: &Value) -> Result<String, ConnectError> {
    let shown = path.display().to_string();
    let problem = |problem: String| ConnectError::McpConfig {
        path: shown.clone(),
        problem,
    };
    let mut config = match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => {
            serde_json::from_str(&text).map_err(|error| problem(format!("is not JSON: {error}")))?
        }
        Ok(_) => Value::Object(Map::new()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(error) => return Err(problem(format!("cannot be read: {error}"))),
    };
    let servers = config
        .as_object_mut()
        .ok_or_else(|| problem("does not hold a JSON object".to_string()))?
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| problem("has an `mcpServers` that is not an object".to_string()))?;
    servers.insert(name.to_string(), entry.clone());
    let mut text =
        serde_json::to_string_pretty(&config).map_err(|error| problem(error.to_string()))?;
    text.push('\n');
    std::fs::write(path, text).map_err(|error| problem(format!("cannot be written: {error}")))?;
    Ok(format!(
        "written to `{shown}` (start the client with `claude --mcp-config {shown}`)"
    ))
}

/// What the user does next: the token, the service, and where to approve.
fn next_steps(server: &str, mcp_config: Option<&Path>) -> Vec<String> {
    let mut lines = Vec::new();
    if std::env::var_os(AGENT_TOKEN_VARIABLE).is_none_or(|token| token.is_empty()) {
        lines.push(format!(
            "- `{AGENT_TOKEN_VARIABLE}` is not set here: set it to the agent's token in the \
             environment Claude Code starts in (the demo `serve` takes \
             `askgate-demo-agent-token`; a real one: `askgate token new --role agent \
             --principal NAME`)"
        ));
    }
    if !answers(server) {
        lines.push(format!(
            "- askgate does not answer at {server}/healthz yet: start it (`askgate serve`)"
        ));
    }
    let start = match mcp_config {
        Some(path) => format!("claude --mcp-config {}", path.display()),
        None => "claude".to_string(),
    };
    lines.push(format!(
        "next: start Claude Code (`{start}`). When askgate asks for an approval, the call \
         waits (up to `mcp.approval_wait_seconds`, 120 s by default) and Claude Code shows \
         the approval's link: open it, or {server}/console, sign in with an approver token \
         and approve or refuse (or run `askgate approvals list` and `askgate approvals \
         approve ID`). The model then reads the call's result, or why it did not run."
    ));
    lines
}

/// Whether the service answers `/healthz` within 2 s.
fn answers(server: &str) -> bool {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return false;
    };
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .redirect(reqwest::redirect::Policy::none())
            .build();
        let Ok(client) = client else { return false };
        let answer = client.get(format!("{server}/healthz")).send().await;
        answer.is_ok_and(|answer| answer.status().is_success())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_config_file_keeps_other_servers_and_holds_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"other": {"type": "stdio"}}, "x": 1}"#,
        )
        .unwrap();
        let entry = json!({"type": "http", "url": "http://h/mcp",
            "headers": {"Authorization": AUTHORIZATION}});
        write_mcp_config(&path, "askgate", &entry).unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["x"], 1);
        assert_eq!(written["mcpServers"]["other"]["type"], "stdio");
        assert_eq!(written["mcpServers"]["askgate"], entry);
        assert!(valid_name("a b").is_err() && valid_name("askgate-2").is_ok());
    }
}
