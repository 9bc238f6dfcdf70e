//! Shared helpers: the corpus files, the baseline snapshot, scenario loading, a free port.

use std::path::{Path, PathBuf};

use askgate::authz::{baseline, PolicySnapshot, Source};
use askgate::scenario::suite::collect;
use askgate::scenario::Scenario;

pub const CORPUS: &str = "tests/scenarios";

/// A free loopback port (bound, then released for the caller to use).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind port 0");
    listener.local_addr().expect("address").port()
}

pub fn corpus_files() -> Vec<PathBuf> {
    collect(&[PathBuf::from(CORPUS)]).expect("the corpus is readable")
}

pub fn load_scenario(path: &Path) -> Scenario {
    let text = std::fs::read_to_string(path).expect("scenario readable");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

pub fn baseline_snapshot() -> PolicySnapshot {
    PolicySnapshot::load(&baseline::schema_source(), &baseline::policy_sources())
        .expect("baseline loads")
}

pub fn snapshot_without(policy_id: &str) -> PolicySnapshot {
    let sources: Vec<Source> = baseline::policy_sources()
        .into_iter()
        .map(|source| Source::new(source.name.clone(), remove_policy(&source.text, policy_id)))
        .collect();
    PolicySnapshot::load(&baseline::schema_source(), &sources)
        .expect("baseline minus one policy loads")
}

/// The text with the policy carrying `@id("<id>")` removed (from its leading annotations to
/// the `;` that ends it).
pub fn remove_policy(text: &str, policy_id: &str) -> String {
    let marker = format!("@id(\"{policy_id}\")");
    let Some(start) = text.find(&marker) else {
        return text.to_string();
    };
    // A policy ends at `};` (with a condition) or `);` (scope only), whichever comes first.
    // Search from the effect keyword, past the annotations (whose text may hold either).
    let body = [
        text[start..].find("\npermit"),
        text[start..].find("\nforbid"),
    ]
    .into_iter()
    .flatten()
    .min();
    let end = body.and_then(|body| {
        let from = start + body;
        let rest = &text[from..];
        [rest.find("};"), rest.find(");")]
            .into_iter()
            .flatten()
            .min()
            .map(|offset| from + offset + 2)
    });
    match end {
        Some(end) => format!("{}{}", &text[..start], &text[end..]),
        None => text.to_string(),
    }
}

/// A stable snapshot name from a corpus path: `design__001-foo`.
/// The `cedar` block of docs/admins.md holding `@id("<id>")`: tests load the rules the docs
/// show, so the page cannot drift from what works.
pub fn documented_rule(id: &str) -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/admins.md"))
            .expect("docs/admins.md");
    let marker = format!("@id(\"{id}\")");
    page.split("```cedar\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|block| block.contains(&marker))
        .unwrap_or_else(|| panic!("docs/admins.md shows no rule {marker}"))
        .to_string()
}

pub fn snapshot_name(path: &Path) -> String {
    let relative = path.strip_prefix(CORPUS).unwrap_or(path);
    relative
        .with_extension("")
        .to_string_lossy()
        .replace(['/', '\\'], "__")
}

pub mod browser;
pub mod claude_code;
pub mod fake_messages;
pub mod in_process;
pub mod oidc;
pub mod otlp;
pub mod reply;
pub mod serve;
