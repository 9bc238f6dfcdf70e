//! cli::hook: `askgate hook claude-code` — the command to put in Claude Code's `settings.json`
//! as a `PreToolUse` hook. It reads the hook input on stdin, asks the running service, and
//! prints the hook output. It fails closed: on any failure (service down, deadline passed,
//! non-2xx, unreadable reply) it exits 2 with a one-line reason, which blocks the call. Its own
//! deadline must be shorter than the hook's `timeout`, because the client lets a timed-out
//! hook's call proceed.

use std::io::Read;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::EXIT_OK;
use crate::server::hook::ATTACHED_PROJECT_HEADER;

/// Claude Code's exit code for "block this call" (stderr is the reason).
pub const EXIT_BLOCK: u8 = 2;
/// The most hook input read from stdin.
const INPUT_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub client: HookClient,
}

#[derive(Debug, Subcommand)]
pub enum HookClient {
    /// Answer one Claude Code `PreToolUse` hook (stdin → stdout; exit 2 blocks).
    ClaudeCode(ClaudeCodeArgs),
}

#[derive(Debug, Args)]
pub struct ClaudeCodeArgs {
    /// The askgate service.
    #[arg(long, default_value = "http://127.0.0.1:8080", env = "ASKGATE_SERVER")]
    pub server: String,
    /// The agent's bearer token.
    #[arg(long, env = "ASKGATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Give up (and block the call) after this many seconds; keep it below the hook's
    /// `timeout` in settings.json.
    #[arg(long, default_value_t = 10)]
    pub deadline_seconds: u64,
}

pub fn run(args: &HookArgs) -> u8 {
    let HookClient::ClaudeCode(args) = &args.client;
    match answer(args) {
        Ok(output) => {
            if !output.is_empty() {
                println!("{output}");
            }
            EXIT_OK
        }
        Err(why) => {
            eprintln!("askgate hook: {why}; the call is blocked");
            EXIT_BLOCK
        }
    }
}

/// The hook output to print (empty for no opinion), or why there is none.
fn answer(args: &ClaudeCodeArgs) -> Result<String, String> {
    let token = args
        .token
        .as_deref()
        .filter(|token| !token.is_empty())
        .ok_or("an agent token is required (--token or ASKGATE_TOKEN)")?;
    let mut input = Vec::new();
    std::io::stdin()
        .take(INPUT_BYTES)
        .read_to_end(&mut input)
        .map_err(|error| format!("cannot read the hook input: {error}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    let deadline = Duration::from_secs(args.deadline_seconds.max(1));
    runtime.block_on(async {
        tokio::time::timeout(deadline, ask(&args.server, token, input))
            .await
            .map_err(|_| format!("no answer from the service within {}s", deadline.as_secs()))?
    })
}

async fn ask(server: &str, token: &str, input: Vec<u8>) -> Result<String, String> {
    let base = server.trim_end_matches('/');
    let mut request = reqwest::Client::new()
        .post(format!("{base}/v1/hooks/claude-code"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(input);
    if let Ok(project) = std::env::var("CLAUDE_PROJECT_UUID") {
        request = request.header(ATTACHED_PROJECT_HEADER, project);
    }
    let response = request
        .send()
        .await
        .map_err(|error| format!("cannot reach {base}: {}", error.without_url()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the service answered HTTP {}", status.as_u16()));
    }
    let body = response
        .text()
        .await
        .map_err(|error| format!("cannot read the service's answer: {}", error.without_url()))?;
    let output: serde_json::Value =
        serde_json::from_str(&body).map_err(|_| "the service's answer is not JSON".to_string())?;
    match output.as_object() {
        Some(fields) if fields.is_empty() => Ok(String::new()),
        Some(fields) if fields.contains_key("hookSpecificOutput") => Ok(output.to_string()),
        _ => Err("the service's answer is not a hook output".to_string()),
    }
}
