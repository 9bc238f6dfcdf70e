//! cli::approvals: `askgate approvals list|approve|refuse` — the approver's command line
//! against a running service.

use clap::{Args, Subcommand};

use super::{EXIT_FAILED, EXIT_OK};

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
    /// The approver's bearer token.
    #[arg(long, global = true, env = "ASKGATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
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
    /// Approve one: its follow-up and the call run once.
    Approve { id: String },
    /// Refuse one.
    Refuse { id: String },
}

pub fn run(args: &ApprovalsArgs) -> u8 {
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
        eprintln!("askgate: an approver token is required (--token or ASKGATE_TOKEN)");
        return super::EXIT_BAD_INPUT;
    };
    let client = reqwest::Client::new();
    let base = args.server.trim_end_matches('/');
    let builder = match &args.action {
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
        ApprovalAction::Approve { id } => client.post(format!("{base}/v1/approvals/{id}/approve")),
        ApprovalAction::Refuse { id } => client.post(format!("{base}/v1/approvals/{id}/refuse")),
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
        .unwrap_or(body);
    if status.is_success() {
        println!("{pretty}");
        EXIT_OK
    } else {
        eprintln!("askgate: HTTP {}: {pretty}", status.as_u16());
        EXIT_FAILED
    }
}
