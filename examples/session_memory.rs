//! Measures what a million distinct sessions cost the session state (F3), through the same
//! `DesignState` methods the service uses: decision-only lookups, then plan registrations up to
//! and past the session bound. Prints resident memory; asserts nothing about time.
//!
//! `cargo run --release --example session_memory`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use askgate::state::sessions::MAX_SESSIONS;
use askgate::state::{DesignState, PlanApproval, SessionKey};
use time::OffsetDateTime;

const SESSIONS: usize = 1_000_000;

/// Resident set size in KiB, from /proc/self/status.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let state = DesignState::default();
    let now = OffsetDateTime::now_utc();
    let start = rss_kib();

    for index in 0..SESSIONS {
        let key = SessionKey::new("agent", format!("session-{index:07}"));
        let stores = state.stores(&key);
        assert!(stores.plan("token").is_none());
        state.plan_finalize_started(&key, "project");
    }
    let looked_up = rss_kib();
    println!(
        "{SESSIONS} distinct decision-only sessions: +{} KiB RSS, {} sessions stored",
        looked_up.saturating_sub(start),
        state.sessions.len()
    );

    let writes = vec!["index.html".to_string()];
    let mut refused = 0;
    for index in 0..SESSIONS {
        let key = SessionKey::new("agent", format!("session-{index:07}"));
        let token = format!("plan-{index:07}");
        let approval = PlanApproval {
            token: &token,
            project_id: "0a1b2c3d-0000-4000-8000-00000000abcd",
            scope: None,
            writes: &writes,
            deletes: &[],
            server_expiry: None,
            ask_was_shown: true,
            prompt_reaches_user: true,
            main_agent_without_hook: true,
            result_is_error: false,
        };
        if state.plan_registered(&key, approval, now).is_err() {
            refused += 1;
        }
    }
    let registered = rss_kib();
    let held = state.sessions.len();
    println!(
        "{SESSIONS} sessions registering a live plan: {held} held (bound {MAX_SESSIONS}), {refused} refused, +{} KiB RSS (~{} bytes per held session)",
        registered.saturating_sub(looked_up),
        (registered.saturating_sub(looked_up) * 1024) / held.max(1) as u64
    );

    let later = now + time::Duration::minutes(16);
    let dropped = state.plans_expired(later);
    println!(
        "after expiry: {dropped} plans dropped, {} sessions left",
        state.sessions.len()
    );
}
