//! cli::hook::install: `askgate hook install claude-code --settings FILE` — writes (or merges
//! into) a Claude Code settings file the `PreToolUse` entry that runs this very binary as the
//! hook of `ClaudeDesign` and `Projects` (finding H1). Claude Code blocks a call only on exit
//! 2; a missing binary (127), a crash or a timeout would let it through, so the entry is
//! guarded twice: the shell command maps any non-zero exit of the binary to 2 (`|| exit 2`;
//! exit 0 with its JSON on stdout passes as it is), and `onFailure: "block"` makes the client
//! block on a hook that cannot start, times out or exits otherwise. It never writes a token:
//! the hook reads `ASKGATE_AGENT_TOKEN` from the client's environment. Every other key and
//! hook of the file is kept; askgate's own entries are replaced, so running it twice leaves
//! one, matching every tool either run named (A5). Must not write anything when the file
//! cannot be read as settings.

mod settings;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{deadline_seconds, AGENT_TOKEN_VARIABLE};
use crate::cli::{EXIT_BAD_INPUT, EXIT_IO, EXIT_OK};
pub(crate) use settings::{HookEntry, Merged};

/// The client's built-in tools askgate decides.
const TOOLS: [&str; 2] = ["ClaudeDesign", "Projects"];
/// How much longer than the command's own deadline the client waits for the hook.
const TIMEOUT_MARGIN_SECONDS: u64 = 10;
/// The longest `--mcp-server` name.
const MCP_SERVER_CHARS: usize = 64;

#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(subcommand)]
    pub client: InstallClient,
}

#[derive(Debug, Subcommand)]
pub enum InstallClient {
    /// Write the `PreToolUse` entry for `ClaudeDesign` and `Projects` into a Claude Code
    /// settings file (created if missing; every other key and hook is kept).
    ClaudeCode(InstallClaudeCodeArgs),
}

#[derive(Debug, Args)]
pub struct InstallClaudeCodeArgs {
    /// The settings file, e.g. `~/.claude/settings.json` or `.claude/settings.json`.
    #[arg(long)]
    pub settings: PathBuf,
    /// The askgate service the hook asks.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub server: String,
    /// The hook command's deadline, 1 to 60; the entry's `timeout` is 10 s longer.
    #[arg(long, default_value_t = 10, value_parser = deadline_seconds())]
    pub deadline_seconds: u64,
    /// Also match askgate's MCP tools, as the client names them when askgate is its MCP
    /// server `NAME` (`mcp__NAME__ClaudeDesign`, `mcp__NAME__Projects`).
    #[arg(long, value_name = "NAME")]
    pub mcp_server: Option<String>,
}

/// Why nothing was written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InstallError {
    #[error("`--server` must be an http or https URL without user or password, not `{0}`")]
    Server(String),
    #[error("`--mcp-server` must be 1–{MCP_SERVER_CHARS} letters, digits, `_` or `-`, not `{0}`")]
    McpServer(String),
    #[error("cannot tell where this askgate binary is: {0}")]
    Binary(String),
    #[error("`{path}` {problem}")]
    Settings { path: String, problem: String },
    #[error("cannot write `{path}`: {error}")]
    Write { path: String, error: std::io::Error },
}

impl InstallError {
    pub(crate) fn code(&self) -> u8 {
        match self {
            Self::Write { .. } => EXIT_IO,
            _ => EXIT_BAD_INPUT,
        }
    }
}

pub fn run(args: &InstallArgs) -> u8 {
    let InstallClient::ClaudeCode(args) = &args.client;
    match install(args) {
        Ok((merged, entry)) => {
            let verb = if merged.replaced { "updated" } else { "added" };
            println!(
                "{verb} the `PreToolUse` hook for `{}` in `{}`: it runs `{}`, and any failure \
                 to run it blocks the call; give Claude Code the agent's token in \
                 `{AGENT_TOKEN_VARIABLE}`",
                merged.matcher,
                args.settings.display(),
                entry.binary
            );
            if !merged.kept.is_empty() {
                println!(
                    "kept `{}` from the earlier entry (to stop matching them, remove askgate's \
                     entry from the file and install again)",
                    merged.kept.join("|")
                );
            }
            EXIT_OK
        }
        Err(error) => {
            eprintln!("askgate: {error}");
            error.code()
        }
    }
}

fn install(args: &InstallClaudeCodeArgs) -> Result<(Merged, HookEntry), InstallError> {
    install_hook(
        &args.settings,
        &args.server,
        args.deadline_seconds,
        args.mcp_server.as_deref(),
    )
}

/// Writes askgate's hook entry into the settings file `path` (shared with `askgate connect`).
pub(crate) fn install_hook(
    path: &Path,
    server: &str,
    deadline_seconds: u64,
    mcp_server: Option<&str>,
) -> Result<(Merged, HookEntry), InstallError> {
    let entry = HookEntry {
        matcher: matcher(mcp_server)?,
        binary: binary()?,
        server: valid_server(server)?,
        deadline_seconds,
        timeout_seconds: deadline_seconds + TIMEOUT_MARGIN_SECONDS,
    };
    let merged = settings::write(path, &entry)?;
    Ok((merged, entry))
}

/// The tools the entry matches: an exact list (letters, digits, `_`, `-` and `|` only), so
/// the client never reads it as a regex.
fn matcher(mcp_server: Option<&str>) -> Result<String, InstallError> {
    let mut tools: Vec<String> = TOOLS.iter().map(|tool| tool.to_string()).collect();
    if let Some(name) = mcp_server {
        let valid = (1..=MCP_SERVER_CHARS).contains(&name.chars().count())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(InstallError::McpServer(name.escape_debug().to_string()));
        }
        tools.extend(TOOLS.iter().map(|tool| format!("mcp__{name}__{tool}")));
    }
    Ok(tools.join("|"))
}

/// The absolute path of the running binary, as the client's shell will run it.
fn binary() -> Result<String, InstallError> {
    let path = std::env::current_exe().map_err(|error| InstallError::Binary(error.to_string()))?;
    let path = path.canonicalize().unwrap_or(path);
    absolute_text(&path)
}

fn absolute_text(path: &Path) -> Result<String, InstallError> {
    match path.to_str() {
        Some(text) if path.is_absolute() && !text.chars().any(char::is_control) => {
            Ok(text.to_string())
        }
        _ => Err(InstallError::Binary(format!(
            "`{}` is not an absolute path of printable UTF-8",
            path.display()
        ))),
    }
}

/// An http(s) URL without credentials, its trailing `/` taken off.
pub(crate) fn valid_server(raw: &str) -> Result<String, InstallError> {
    let refused = || InstallError::Server(raw.escape_debug().to_string());
    let url = url::Url::parse(raw).map_err(|_| refused())?;
    let usable = matches!(url.scheme(), "http" | "https")
        && url.username().is_empty()
        && url.password().is_none()
        && url.host().is_some();
    if !usable || raw.chars().any(char::is_control) {
        return Err(refused());
    }
    Ok(raw.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matcher_is_an_exact_list_and_may_add_the_mcp_tools() {
        assert_eq!(matcher(None).unwrap(), "ClaudeDesign|Projects");
        assert_eq!(
            matcher(Some("askgate")).unwrap(),
            "ClaudeDesign|Projects|mcp__askgate__ClaudeDesign|mcp__askgate__Projects"
        );
        for bad in ["", "a.*", "a b", "a|b", &"x".repeat(65)] {
            assert!(matches!(
                matcher(Some(bad)),
                Err(InstallError::McpServer(_))
            ));
        }
    }

    #[test]
    fn the_server_is_an_http_url_without_credentials() {
        assert_eq!(
            valid_server("http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert!(valid_server("https://askgate.example").is_ok());
        for bad in [
            "127.0.0.1:8080",
            "ftp://h",
            "http://user:secret@h",
            "http://h/\n",
        ] {
            assert!(
                matches!(valid_server(bad), Err(InstallError::Server(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn only_an_absolute_printable_path_is_written() {
        assert!(absolute_text(Path::new("/opt/ask gate/askgate")).is_ok());
        assert!(absolute_text(Path::new("askgate")).is_err());
        assert!(absolute_text(Path::new("/tmp/a\nb")).is_err());
    }
}
