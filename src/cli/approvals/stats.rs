//! cli::approvals::stats: `askgate approvals stats LOG...` — approval fatigue (issue 35 §4)
//! from decision logs: each kind of ask with how often it was asked, approved, refused and left
//! unanswered, who approved it, and for one approved every time the change that would stop
//! asking (`audit::fatigue`). Reads the logs only; an unreadable log exits 4.

use std::path::PathBuf;

use clap::Args;

use super::super::log::with_records;
use super::super::EXIT_OK;
use crate::audit::fatigue::{fatigue, AskGroup};
use crate::server::present::shown::visible_text;

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Decision logs (files or directories; several replicas' read as one).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Only asks decided at or after this RFC 3339 time.
    #[arg(long, value_parser = super::super::log::parse_time)]
    pub since: Option<time::OffsetDateTime>,
    /// A kind of ask is "approved every time" once approved at least this often, never refused.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub min: u64,
}

pub fn run(args: &StatsArgs, json: bool) -> u8 {
    with_records(&args.logs, |records| {
        let min = usize::try_from(args.min).unwrap_or(usize::MAX);
        let groups = fatigue(records, args.since, min);
        if json {
            let value = serde_json::json!({"min": args.min, "groups": groups});
            println!(
                "{}",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        } else {
            print_table(&groups, min);
        }
        EXIT_OK
    })
}

fn print_table(groups: &[AskGroup], min: usize) {
    let every_time = groups
        .iter()
        .filter(|group| group.approved_every_time(min))
        .count();
    println!(
        "{} kinds of ask; {every_time} approved every time (at least {min} approvals, none refused)",
        groups.len()
    );
    for group in groups {
        let asked = &group.asked;
        println!(
            "\n{} {}{}  card {}  asked by [{}]",
            visible_text(&asked.tool),
            visible_text(&asked.operation),
            asked
                .project
                .as_deref()
                .map(|project| format!(" on {}", visible_text(project)))
                .unwrap_or_default(),
            asked.card,
            asked.policies.join(", ")
        );
        println!(
            "  asks {}: approved {}, refused {}, unanswered {}, open {}  ({} … {})",
            group.asks,
            group.approved,
            group.refused,
            group.unanswered,
            group.open,
            group.first,
            group.last
        );
        if !group.approvers.is_empty() {
            println!("  approved by: {}", visible_text(&group.approvers_line()));
        }
        if let Some(suggestion) = &group.suggestion {
            println!("  suggestion: {}", visible_text(suggestion));
        }
    }
}
