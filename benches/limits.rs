//! benches/limits: the memory of the per-caller counts (issue 36 §2) under 1,000,000 distinct
//! principals — the usage windows (`state::usage`, at most 100,000 principals) and the rate
//! limiter (`state::rate`, at most 100,000 keys) — each fed one call per principal, RSS read
//! from `/proc/self/status` at 100k, 500k and 1M principals, and the time per call. The goal is
//! a flat RSS past the caps. Informational only: it never exits non-zero.
//!
//! Run: `cargo bench --bench limits` (`ASKGATE_BENCH_QUICK=1`: 200,000 principals).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::num::NonZeroU32;
use std::time::Instant;

use askgate::state::rate::{RateLimiter, RateQuota};
use askgate::state::usage::{Counted, Usage};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let quick = std::env::var("ASKGATE_BENCH_QUICK").is_ok()
        || std::env::args().any(|arg| arg == "--quick");
    let total: usize = if quick { 200_000 } else { 1_000_000 };
    let marks = [100_000, 500_000, 1_000_000];
    let usage = Usage::default();
    let rate = RateLimiter::new(RateQuota {
        per_second: NonZeroU32::new(10).unwrap(),
        burst: NonZeroU32::new(20).unwrap(),
    });
    println!(
        "limits: {total} distinct principals, one call each (RSS at start {} KiB)",
        rss_kib()
    );
    let started = Instant::now();
    let mut limited = 0_u64;
    for n in 1..=total {
        let principal = format!("https://idp.bench|agent-{n}");
        let now = i64::try_from(n / 1_000).unwrap();
        let facts = usage.facts(&principal, 7, now);
        std::hint::black_box(facts);
        usage.count(
            &principal,
            Counted {
                writes: n % 3 == 0,
                deleted_paths: 0,
                asked: false,
                denied: n % 7 == 0,
                uploaded_bytes: if n % 3 == 0 { 2_048 } else { 0 },
                shape: 7,
            },
            now,
        );
        if rate.over(&principal).is_some() {
            limited += 1;
        }
        if marks.contains(&n) {
            println!(
                "  {n:>9} principals: RSS {:>7} KiB; usage keeps {:>6}, rate keeps {:>6}; {:.2} µs a call",
                rss_kib(),
                usage.len(),
                rate.len(),
                started.elapsed().as_secs_f64() * 1e6 / n as f64
            );
        }
    }
    println!("  limited: {limited} (a new caller past the rate limiter's cap is limited until room is made)");
}
