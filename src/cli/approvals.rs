//! cli::approvals: `askgate approvals list|show|watch|approve|refuse` — the approver's command line
//! against a running service — and `approvals stats` (`stats`), approval fatigue read off the
//! decision logs. Cards print for people (`cards`); `--json` keeps the service's
//! JSON for scripts.

mod cards;
mod stats;

pub use cards::card_text;

use std::collections::HashSet;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::Value;

use super::{EXIT_FAILED, EXIT_OK};

/// The approver token's variable; the hook reads another (`ASKGATE_AGENT_TOKEN`).
pub const APPROVER_TOKEN_VARIABLE: &str = "ASKGATE_APPROVER_TOKEN";

#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    /// The askgate service.
    #[arg(
        long,
        global = true,
        default_value = "http://127.0.0.1:8080",
        env = "ASKGATE_SERVER"
    )]
    pub server: String,
    /// The approver's bearer token (never the agent's `ASKGATE_AGENT_TOKEN`).
    #[arg(long, global = true, env = APPROVER_TOKEN_VARIABLE, hide_env_values = true)]
    pub token: Option<String>,
    /// Print the service's JSON instead of readable cards.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub action: ApprovalAction,
}

#[derive(Debug, Subcommand)]
pub enum ApprovalAction {
    /// List pending approvals with their cards, oldest first, one page at a time (the
    /// answer's `next_cursor` fetches the next page).
    List {
        /// At most this many approvals (1..=200; the service's default is 200).
        #[arg(long)]
        limit: Option<u32>,
        /// The `next_cursor` of the previous page.
        #[arg(long)]
        cursor: Option<String>,
    },
    /// Show one approval (pending or decided) with its card, quorum and votes.
    Show { id: String },
    /// Follow new pending approvals as they arrive (until interrupted, or `--for-seconds`).
    Watch {
        /// How often to look, in seconds.
        #[arg(long, default_value_t = 2)]
        every_seconds: u64,
        /// Stop after this many seconds.
        #[arg(long)]
        for_seconds: Option<u64>,
    },
    /// Approve one: its follow-up and the call run once.
    Approve {
        id: String,
        /// A note for the log (why), at most 500 characters.
        #[arg(long)]
        note: Option<String>,
    },
    /// Approval fatigue, from decision logs (no server, no token): which asks are approved
    /// every time and by whom, with the change that would stop asking.
    Stats(stats::StatsArgs),
    /// Refuse one.
    Refuse {
        id: String,
        /// A note for the log (why), at most 500 characters.
        #[arg(long)]
        note: Option<String>,
    },
}

pub fn run(args: &ApprovalsArgs) -> u8 {
    if let ApprovalAction::Stats(stats) = &args.action {
        return stats::run(stats, args.json);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("askgate: {error}");
            return EXIT_FAILED;
        }
    };
    runtime.block_on(request(args))
}

async fn request(args: &ApprovalsArgs) -> u8 {
    let Some(token) = args.token.as_deref().filter(|token| !token.is_empty()) else {
        eprintln!("askgate: an approver token is required (--token or {APPROVER_TOKEN_VARIABLE})");
        return super::EXIT_BAD_INPUT;
    };
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(130))
        .build()
        .unwrap_or_default();
    let base = args.server.trim_end_matches('/');
    if let ApprovalAction::Watch {
        every_seconds,
        for_seconds,
    } = &args.action
    {
        return watch(
            &client,
            base,
            token,
            args.json,
            *every_seconds,
            *for_seconds,
        )
        .await;
    }
    let builder = match &args.action {
        ApprovalAction::Watch { .. } | ApprovalAction::Stats(_) => {
            client.get(format!("{base}/v1/approvals"))
        }
        ApprovalAction::List { limit, cursor } => {
            let mut query: Vec<(&str, String)> = Vec::new();
            if let Some(limit) = limit {
                query.push(("limit", limit.to_string()));
            }
            if let Some(cursor) = cursor {
                query.push(("cursor", cursor.clone()));
            }
            client.get(format!("{base}/v1/approvals")).query(&query)
        }
        ApprovalAction::Show { id } => client.get(format!("{base}/v1/approvals/{id}")),
        ApprovalAction::Approve { id, note } => client
            .post(format!("{base}/v1/approvals/{id}/approve"))
            .json(&serde_json::json!({"note": note})),
        ApprovalAction::Refuse { id, note } => client
            .post(format!("{base}/v1/approvals/{id}/refuse"))
            .json(&serde_json::json!({"note": note})),
    };
    let response = match builder.bearer_auth(token).send().await {
        Ok(response) => response,
        Err(error) => {
            eprintln!("askgate: cannot reach {base}: {}", error.without_url());
            return EXIT_FAILED;
        }
    };
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    let pretty = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| body.clone());
    if status.is_success() {
        match (&args.action, args.json) {
            (ApprovalAction::List { .. }, false) => print_cards(&body),
            (ApprovalAction::Show { .. }, false) => match serde_json::from_str::<Value>(&body) {
                Ok(approval) => {
                    println!(
                        "{}",
                        cards::card_text(&approval, time::OffsetDateTime::now_utc())
                    );
                }
                Err(_) => println!("{pretty}"),
            },
            (ApprovalAction::Approve { .. } | ApprovalAction::Refuse { .. }, false) => {
                match serde_json::from_str::<Value>(&body) {
                    Ok(approval) => println!("{}", cards::decided_text(&approval)),
                    Err(_) => println!("{pretty}"),
                }
            }
            _ => println!("{pretty}"),
        }
        EXIT_OK
    } else {
        eprintln!("askgate: HTTP {}: {pretty}", status.as_u16());
        EXIT_FAILED
    }
}

fn approvals_of(body: &str) -> Vec<Value> {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|value| value.get("approvals").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

fn print_cards(body: &str) {
    let approvals = approvals_of(body);
    if approvals.is_empty() {
        println!("nothing is waiting for a decision");
    }
    let now = time::OffsetDateTime::now_utc();
    for approval in &approvals {
        println!("{}\n", cards::card_text(approval, now));
    }
    let next = serde_json::from_str::<Value>(body).ok().and_then(|value| {
        value
            .get("next_cursor")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    if let Some(cursor) = next {
        println!("more: askgate approvals list --cursor {cursor}");
    }
}

/// Prints each new pending approval once, as it appears.
async fn watch(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    json: bool,
    every_seconds: u64,
    for_seconds: Option<u64>,
) -> u8 {
    let started = std::time::Instant::now();
    let mut seen: HashSet<String> = HashSet::new();
    loop {
        let reply = client
            .get(format!("{base}/v1/approvals"))
            .bearer_auth(token)
            .send()
            .await;
        match reply {
            Ok(response) if response.status().is_success() => {
                let body = response.text().await.unwrap_or_default();
                let now = time::OffsetDateTime::now_utc();
                for approval in approvals_of(&body) {
                    let id = approval
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    if seen.insert(id) {
                        if json {
                            println!("{approval}");
                        } else {
                            println!("{}\n", cards::card_text(&approval, now));
                        }
                    }
                }
            }
            Ok(response) => {
                eprintln!("askgate: HTTP {}", response.status().as_u16());
                return EXIT_FAILED;
            }
            Err(error) => {
                eprintln!("askgate: cannot reach {base}: {}", error.without_url());
                return EXIT_FAILED;
            }
        }
        if for_seconds.is_some_and(|limit| started.elapsed() >= Duration::from_secs(limit)) {
            return EXIT_OK;
        }
        tokio::time::sleep(Duration::from_secs(every_seconds.max(1))).await;
    }
}
