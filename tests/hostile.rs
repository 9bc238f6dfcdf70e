//! Hostile input: thousands of random and adversarial calls never panic, bad input is an error
//! naming a field, and a decision never allows a tokenless write whose targets the reference
//! gate (client-facts §2 GnS, re-implemented here independently) would stop.
//!
//! Submodules drive a real service over loopback HTTP: `load` (slowloris, stalled bodies,
//! oversized bodies, the connection cap), `front_door` (a reconnecting slowloris from another
//! peer, N6), `input` (types, duplicate keys, hostile project ids, query parameters) and
//! `config` (the binary refusing unsafe configurations).

mod config;
mod front_door;
mod input;
mod load;

use askgate::authz::{decide, Outcome};
use askgate::call::{DesignCall, ProjectsCall};
use askgate::facts::{self, DesignObservations, Environment, Mode, ServerGrants, Session};
use askgate::state::DesignState;
use serde_json::{json, Map, Value};
use time::macros::datetime;

use crate::support::baseline_snapshot;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const NASTY: &[&str] = &[
    "index.html",
    "CLAUDE.md",
    ".claude/settings.json",
    "a/Claude.MD/b",
    "CLAUDE.md. ",
    " .claude",
    "CLAUDE~1.MD",
    "a/../b",
    " .. ",
    "./",
    "",
    "\\\\server\\share",
    "a\u{0}b",
    "a\u{202E}b",
    "a\u{200B}b",
    "a#b",
    "a?b",
    "a:b",
    "a,b",
    "[x]",
    "\u{FEFF}x",
    "x\u{FF1A}y",
    "\u{2028}",
    "é/ü/中文.txt",
    "secrets/key",
    "a//b//./c",
    "....",
    "~",
    "x~9",
    "a\tb",
    "\u{7F}",
    "\u{9F}",
    "\u{AD}",
    "\u{61C}",
    "\u{2026}",
    "\u{2066}",
    "../../etc/passwd",
    "C:\\Windows",
];

const OPERATIONS: &[&str] = &[
    "list",
    "get_project",
    "read_file",
    "write_files",
    "delete_files",
    "copy_files",
    "create_support_js",
    "finalize_plan",
    "update_sharing",
    "add_member",
    "render_preview",
    "mystery_op",
    "",
    "a b",
    "write_files\u{0}",
];

fn random_string(random: &mut Random) -> Value {
    match random.below(5) {
        0 => Value::String("x".repeat(random.below(5000))),
        1 => json!(random.next() as i64),
        2 => json!(random.below(2) == 0),
        3 => Value::Null,
        _ => Value::String(random.pick(NASTY).to_string()),
    }
}

fn random_value(random: &mut Random, depth: usize) -> Value {
    if depth > 3 {
        return random_string(random);
    }
    match random.below(4) {
        0 => Value::Array(
            (0..random.below(6))
                .map(|_| random_value(random, depth + 1))
                .collect(),
        ),
        1 => {
            let files: Vec<Value> = (0..random.below(30))
                .map(|_| json!({"path": random.pick(NASTY), "data": "x"}))
                .collect();
            Value::Array(files)
        }
        2 => json!({"path": random.pick(NASTY), "nested": random_value(random, depth + 1)}),
        _ => random_string(random),
    }
}

fn random_arguments(random: &mut Random) -> Value {
    let keys = [
        "project_id",
        "files",
        "paths",
        "path",
        "plan_token",
        "scope",
        "writes",
        "deletes",
        "role",
        "Files",
        "junk",
    ];
    let mut arguments = Map::new();
    for _ in 0..random.below(5) {
        let key = random.pick(&keys).to_string();
        let value = if key == "project_id" {
            json!("p1")
        } else {
            random_value(random, 0)
        };
        arguments.insert(key, value);
    }
    Value::Object(arguments)
}

/// client-facts §2 GnS, written independently of `paths`: does this target pass?
fn reference_gate_passes(raw: &str) -> bool {
    let rejected = |c: char| {
        let u = c as u32;
        u <= 0x1F
            || (0x7F..=0x9F).contains(&u)
            || "#?,:[]".contains(c)
            || u == 0xAD
            || u == 0x61C
            || (0x200B..=0x200F).contains(&u)
            || u == 0x2026
            || u == 0x2028
            || u == 0x2029
            || (0x202A..=0x202E).contains(&u)
            || (0x2066..=0x2069).contains(&u)
            || u == 0xFEFF
            || [0xFF0C, 0xFF1A, 0xFF3B, 0xFF3D].contains(&u)
    };
    if raw.chars().any(rejected) {
        return false;
    }
    let normalized: Vec<&str> = raw
        .split(['/', '\\'])
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let lower = normalized.join("/").to_lowercase();
    if lower == "claude.md"
        || lower == ".claude"
        || lower.starts_with("claude.md/")
        || lower.starts_with(".claude/")
    {
        return false;
    }
    for segment in &normalized {
        let folded = segment.to_lowercase();
        let folded = folded
            .trim_start()
            .trim_end_matches(|c: char| c.is_whitespace() || c == '.');
        if folded == "claude.md" || folded == ".claude" {
            return false;
        }
        let trimmed = segment.trim();
        if trimmed.starts_with("..") && trimmed.chars().all(|c| c == '.' || c.is_whitespace()) {
            return false;
        }
    }
    let has_short_name = lower
        .as_bytes()
        .windows(2)
        .any(|pair| pair[0] == b'~' && pair[1].is_ascii_digit());
    !normalized.is_empty() && !has_short_name
}

fn random_session(random: &mut Random) -> Session {
    let modes = [
        Mode::Default,
        Mode::AcceptEdits,
        Mode::Plan,
        Mode::Auto,
        Mode::DontAsk,
        Mode::BypassPermissions,
    ];
    Session {
        mode: *random.pick(&modes),
        interactive: random.below(4) != 0,
        permission_hook: random.below(4) == 0,
        bypass_available: random.below(2) == 0,
        ..Session::default()
    }
}

#[test]
fn thousands_of_hostile_design_calls_never_panic_and_never_allow_a_stopped_target() {
    let snapshot = baseline_snapshot();
    let mut random = Random(0x5eed_1234_abcd_ef01);
    let (mut decided, mut refused) = (0, 0);
    for _ in 0..4000 {
        let input = json!({"operation": random.pick(OPERATIONS), "arguments": random_arguments(&mut random)});
        let call = match DesignCall::parse(input.clone(), None) {
            Ok(call) => call,
            Err(error) => {
                assert!(
                    !error.field.is_empty() && !error.message.is_empty(),
                    "{input}"
                );
                refused += 1;
                continue;
            }
        };
        let state = DesignState::default();
        state.consent.consent_recorded();
        if random.below(2) == 0 {
            state.grants.grant_recorded("p1");
        }
        let observed = DesignObservations {
            server_grants: ServerGrants::default(),
            project_identity: [("p1".to_string(), json!({"name": "Deck", "sharing": {"scope": "invited"}, "url": "https://claude.ai/design/p/p1"}))].into(),
            catalog: None,
        };
        let session = random_session(&mut random);
        let facts = facts::design::gather(
            &call,
            &session,
            &Environment::default(),
            state.stores(&askgate::state::SessionKey::new("hostile", "hostile")),
            &observed,
            datetime!(2026-11-30 10:00 UTC),
        );
        let decision = decide(&facts, &snapshot);
        decided += 1;
        assert!(decision.errors.is_empty(), "{input}: {:?}", decision.errors);
        let tokenless_write =
            matches!(call.operation.as_str(), "write_files" | "create_support_js")
                && call.is_tokenless();
        let stopped = facts
            .targets
            .iter()
            .any(|target| !reference_gate_passes(&target.raw));
        if tokenless_write && stopped && decision.decision == Outcome::Allow {
            let bypass = session.mode == Mode::BypassPermissions
                || (session.mode == Mode::Plan && session.bypass_available);
            assert!(
                bypass,
                "a stopped target was allowed without bypass: {input}"
            );
        }
    }
    assert!(
        decided > 500 && refused > 500,
        "decided {decided}, refused {refused}"
    );
}

#[test]
fn hostile_projects_inputs_are_errors_or_decisions_never_panics() {
    let snapshot = baseline_snapshot();
    let mut random = Random(0xfeed_beef_0000_0001);
    let methods = [
        "project_info",
        "project_read",
        "project_search",
        "project_write",
        "project_delete",
        "project_nuke",
        "",
    ];
    let environment = Environment {
        attached_project: Some("proj-1".to_string()),
        ..Environment::default()
    };
    for _ in 0..2000 {
        let mut input = Map::new();
        input.insert("method".to_string(), json!(random.pick(&methods)));
        for key in [
            "path",
            "content",
            "local_path",
            "query",
            "n",
            "force",
            "present_to_user",
            "extra",
        ] {
            if random.below(2) == 0 {
                input.insert(key.to_string(), random_value(&mut random, 2));
            }
        }
        match ProjectsCall::parse(&Value::Object(input)) {
            Ok(call) => {
                let decision = decide(
                    &facts::projects::gather(
                        &call,
                        &Session::default(),
                        &environment,
                        None,
                        datetime!(2026-11-30 10:00 UTC),
                    ),
                    &snapshot,
                );
                assert!(decision.errors.is_empty());
            }
            Err(error) => assert!(!error.field.is_empty()),
        }
    }
}
