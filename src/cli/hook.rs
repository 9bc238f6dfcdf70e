//! cli::hook: `askgate hook claude-code` — the command Claude Code runs as its `PreToolUse`
//! hook: it reads the hook input on stdin, asks the running service, and prints the answer it
//! parsed ([`answer`]); and `askgate hook install claude-code`, which writes that command into
//! a settings file ([`install`]). It fails closed: on any failure (no token, service down,
//! deadline passed, a redirect or another non-2xx, an answer that is not `{}`, `deny` or
//! `ask`, stdout gone) it exits 2 with a one-line reason, which blocks the call. Its deadline
//! (at most 60 s) must be shorter than the hook's `timeout`, because the client lets a
//! timed-out hook's call proceed unless the entry says `onFailure: "block"`.

mod answer;
pub(crate) mod install;

use std::io::{Read, Write};
use std::time::Duration;

use clap::{Args, Subcommand};
use futures_util::StreamExt;

use super::EXIT_OK;
use crate::server::hook::ATTACHED_PROJECT_HEADER;
use answer::{AnswerError, HookAnswer};

/// Claude Code's exit code for "block this call" (stderr is the reason).
pub const EXIT_BLOCK: u8 = 2;
/// The longest `--deadline-seconds`: the hook's `timeout` must stay above it.
pub const MAX_DEADLINE_SECONDS: u64 = 60;
/// The most hook input read from stdin.
const INPUT_BYTES: u64 = 4 * 1024 * 1024;
/// The most of the service's answer read (its reasons are at most 2,000 characters).
const ANSWER_BYTES: usize = 64 * 1024;
/// The agent token's variable; the approvals CLI reads another (`ASKGATE_APPROVER_TOKEN`).
pub const AGENT_TOKEN_VARIABLE: &str = "ASKGATE_AGENT_TOKEN";
/// The variable both read before roles were split; read by neither now.
const RETIRED_TOKEN_VARIABLE: &str = "ASKGATE_TOKEN";

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub client: HookClient,
}

#[derive(Debug, Subcommand)]
pub enum HookClient {
    /// Answer one Claude Code `PreToolUse` hook (stdin → stdout; exit 2 blocks).
    ClaudeCode(ClaudeCodeArgs),
    /// Write the hook entry into an agent client's settings file.
    Install(install::InstallArgs),
}

#[derive(Debug, Args)]
pub struct ClaudeCodeArgs {
    /// The askgate service.
    #[arg(long, default_value = "http://127.0.0.1:8080", env = "ASKGATE_SERVER")]
    pub server: String,
    /// The agent's bearer token.
    #[arg(long, env = AGENT_TOKEN_VARIABLE, hide_env_values = true)]
    pub token: Option<String>,
    /// Give up (and block the call) after this many seconds, 1 to 60; keep it below the
    /// hook's `timeout` in settings.json.
    #[arg(long, default_value_t = 10, value_parser = deadline_seconds())]
    pub deadline_seconds: u64,
}

/// `--deadline-seconds`: 1..=60, refused past it with clap's error (exit 2).
pub(crate) fn deadline_seconds() -> clap::builder::RangedU64ValueParser {
    clap::value_parser!(u64).range(1..=MAX_DEADLINE_SECONDS)
}

/// Why the hook blocks the call.
#[derive(Debug, thiserror::Error)]
enum HookError {
    #[error("an agent token is required (--token or {AGENT_TOKEN_VARIABLE}){0}")]
    NoToken(&'static str),
    #[error("cannot read the hook input: {0}")]
    Input(std::io::Error),
    #[error("cannot start: {0}")]
    Runtime(std::io::Error),
    #[error("cannot reach {server}: {why}")]
    Unreachable { server: String, why: String },
    #[error("no answer from the service within {0}s")]
    Deadline(u64),
    #[error("the service answered HTTP {0}")]
    Status(u16),
    #[error("the service answered a redirect (HTTP {0}), which this command never follows")]
    Redirect(u16),
    #[error("cannot read the service's answer: {0}")]
    Body(String),
    #[error("the service's answer is longer than {ANSWER_BYTES} bytes")]
    BodyTooLong,
    #[error(transparent)]
    Answer(#[from] AnswerError),
    #[error("cannot write the answer to standard output: {0}")]
    Output(std::io::Error),
}

pub fn run(args: &HookArgs) -> u8 {
    match &args.client {
        HookClient::ClaudeCode(args) => claude_code(args),
        HookClient::Install(args) => install::run(args),
    }
}

fn claude_code(args: &ClaudeCodeArgs) -> u8 {
    let printed = answer(args).and_then(|answer| {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", answer.to_json())
            .and_then(|()| stdout.flush())
            .map_err(HookError::Output)
    });
    match printed {
        Ok(()) => EXIT_OK,
        Err(why) => {
            eprintln!("askgate hook: {why}; the call is blocked");
            EXIT_BLOCK
        }
    }
}

/// The service's answer, parsed, or why there is none.
fn answer(args: &ClaudeCodeArgs) -> Result<HookAnswer, HookError> {
    let token = args
        .token
        .as_deref()
        .filter(|token| !token.is_empty())
        .ok_or_else(|| HookError::NoToken(retired_variable_note()))?;
    let mut input = Vec::new();
    std::io::stdin()
        .take(INPUT_BYTES)
        .read_to_end(&mut input)
        .map_err(HookError::Input)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(HookError::Runtime)?;
    let deadline = Duration::from_secs(args.deadline_seconds);
    let body = runtime.block_on(async {
        tokio::time::timeout(deadline, ask(&args.server, token, input))
            .await
            .map_err(|_| HookError::Deadline(args.deadline_seconds))?
    })?;
    Ok(HookAnswer::parse(&body)?)
}

/// A hint for whoever still sets the variable both commands used to share.
fn retired_variable_note() -> &'static str {
    if std::env::var_os(RETIRED_TOKEN_VARIABLE).is_some() {
        "; `ASKGATE_TOKEN` is no longer read"
    } else {
        ""
    }
}

/// Posts the hook input and returns the 2xx body, at most [`ANSWER_BYTES`].
async fn ask(server: &str, token: &str, input: Vec<u8>) -> Result<Vec<u8>, HookError> {
    let base = server.trim_end_matches('/');
    let unreachable = |why: String| HookError::Unreachable {
        server: base.to_string(),
        why,
    };
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| unreachable(error.without_url().to_string()))?;
    let mut request = client
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
        .map_err(|error| unreachable(error.without_url().to_string()))?;
    let status = response.status();
    if status.is_redirection() {
        return Err(HookError::Redirect(status.as_u16()));
    }
    if !status.is_success() {
        return Err(HookError::Status(status.as_u16()));
    }
    read_bounded(response).await
}

async fn read_bounded(response: reqwest::Response) -> Result<Vec<u8>, HookError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| HookError::Body(error.without_url().to_string()))?;
        if body.len() + chunk.len() > ANSWER_BYTES {
            return Err(HookError::BodyTooLong);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
