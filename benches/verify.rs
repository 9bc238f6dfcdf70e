//! benches/verify: what verifying a bearer JWT costs (issue 34 §1), with the verified-token
//! cache and without. A loopback issuer (discovery + JWKS over real HTTP, as an IdP serves
//! them) publishes the throwaway keys of `benches/verify/test-keys.json`; tokens are signed
//! beforehand (untimed), RS256 and ES256. Per algorithm, four rows:
//! - fresh: `verify_uncached`, every iteration a full verification (parse, key lookup,
//!   signature, claims, mapping);
//! - first sight: `verify` of a token never seen (a miss, the verification, the insert);
//! - cached, distinct: `verify` round-robin over tokens all in the cache;
//! - cached, repeat: `verify` of one token again and again.
//!
//! Informational only: it never exits non-zero.
//!
//! Run: `cargo bench --bench verify` (add `-- --quick` or `ASKGATE_BENCH_QUICK=1` for a short
//! smoke run).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use askgate::server::auth::{IdentityConfig, Issuers, RawIdentity};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use time::OffsetDateTime;

const AUDIENCE: &str = "https://askgate.bench/mcp";

struct Budget {
    max_iterations: usize,
    max_time: Duration,
    /// Distinct tokens signed per algorithm (the first-sight row's ceiling).
    distinct: usize,
}

impl Budget {
    fn from_environment() -> Self {
        let quick = std::env::args().any(|argument| argument == "--quick")
            || std::env::var("ASKGATE_BENCH_QUICK").is_ok_and(|value| value == "1");
        if quick {
            Self {
                max_iterations: 2_000,
                max_time: Duration::from_millis(300),
                distinct: 300,
            }
        } else {
            Self {
                max_iterations: 20_000,
                max_time: Duration::from_secs(2),
                distinct: 2_000,
            }
        }
    }
}

struct Row {
    name: String,
    median: f64,
    p99: f64,
    samples: usize,
}

fn row(name: String, mut samples: Vec<Duration>) -> Row {
    samples.sort_unstable();
    let micros = |duration: Duration| duration.as_secs_f64() * 1e6;
    let p99_rank = (samples.len() * 99).div_ceil(100).max(1) - 1;
    Row {
        name,
        median: micros(samples[samples.len() / 2]),
        p99: micros(samples[p99_rank]),
        samples: samples.len(),
    }
}

/// Times `issuers.verify*` on token `pick(n)` for the n-th iteration, within the budget.
async fn measure(budget: &Budget, limit: usize, mut one: impl AsyncFnMut(usize)) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(limit.min(budget.max_iterations));
    let started = Instant::now();
    while samples.len() < limit.min(budget.max_iterations)
        && (started.elapsed() < budget.max_time || samples.len() < 10)
    {
        let start = Instant::now();
        one(samples.len()).await;
        samples.push(start.elapsed());
    }
    samples
}

/// Serves the discovery document and the key set on loopback; returns the issuer URL.
async fn issuer(keys: Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let discovery = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
    let router = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || async move { axum::Json(discovery) }),
        )
        .route(
            "/jwks",
            axum::routing::get(move || async move { axum::Json(json!({"keys": keys})) }),
        );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    issuer
}

fn issuers(issuer: &str) -> Issuers {
    let raw: RawIdentity = serde_json::from_value(json!({"issuers": [{
        "issuer": issuer, "audience": AUDIENCE, "agent_scopes": ["askgate:agent"],
    }]}))
    .unwrap();
    Issuers::new(
        &IdentityConfig::validate(raw).unwrap(),
        reqwest::Client::new(),
        100_000,
    )
}

/// `count` distinct agent tokens, valid for an hour, as an IdP would issue them.
fn tokens(issuer: &str, algorithm: Algorithm, kid: &str, pem: &str, count: usize) -> Vec<String> {
    let key = match algorithm {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap(),
        _ => EncodingKey::from_ec_pem(pem.as_bytes()).unwrap(),
    };
    let mut header = Header::new(algorithm);
    header.kid = Some(kid.to_string());
    header.typ = Some("at+jwt".into());
    let now = OffsetDateTime::now_utc().unix_timestamp();
    (0..count)
        .map(|n| {
            let claims = json!({
                "iss": issuer, "sub": format!("agent-{n}"), "aud": AUDIENCE, "iat": now,
                "exp": now + 3600, "jti": n.to_string(), "client_id": "ci", "scope": "askgate:agent",
                "groups": ["design", "engineering"], "email": format!("agent-{n}@acme.test"),
            });
            jsonwebtoken::encode(&header, &claims, &key).unwrap()
        })
        .collect()
}

async fn run(budget: Budget) -> Vec<Row> {
    let fixture: Value = serde_json::from_str(include_str!("verify/test-keys.json"))
        .expect("the key fixture parses");
    let issuer = issuer(fixture["keys"].clone()).await;
    let mut rows = Vec::new();
    for (algorithm, kid) in [
        (Algorithm::RS256, "bench-rs256"),
        (Algorithm::ES256, "bench-es256"),
    ] {
        let pem = fixture["private"][kid].as_str().unwrap();
        let tokens = tokens(&issuer, algorithm, kid, pem, budget.distinct);
        let now = OffsetDateTime::now_utc();
        let (warm, cold) = (issuers(&issuer), issuers(&issuer));
        cold.verify_uncached(&tokens[0], now).await.unwrap();
        let n = tokens.len();
        let label = |case: &str| format!("{algorithm:?} {case}");
        let fresh = measure(&budget, usize::MAX, async |i| {
            black_box(warm.verify_uncached(&tokens[i % n], now).await.unwrap());
        });
        rows.push(row(label("fresh (no cache)"), fresh.await));
        let first = measure(&budget, n, async |i| {
            black_box(cold.verify(&tokens[i], now).await.unwrap());
        });
        rows.push(row(
            label("first sight (miss + verify + insert)"),
            first.await,
        ));
        for token in &tokens {
            warm.verify(token, now).await.unwrap();
        }
        let distinct = measure(&budget, usize::MAX, async |i| {
            black_box(warm.verify(&tokens[i % n], now).await.unwrap());
        });
        rows.push(row(label("cached, distinct"), distinct.await));
        let repeat = measure(&budget, usize::MAX, async |_| {
            black_box(warm.verify(&tokens[0], now).await.unwrap());
        });
        rows.push(row(label("cached, repeat"), repeat.await));
    }
    rows
}

fn main() {
    let budget = Budget::from_environment();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let rows = runtime.block_on(run(budget));
    println!(
        "{:<48} {:>12} {:>12} {:>9}",
        "case", "median µs", "p99 µs", "samples"
    );
    for row in &rows {
        println!(
            "{:<48} {:>12.2} {:>12.2} {:>9}",
            row.name, row.median, row.p99, row.samples
        );
    }
    for pair in rows.chunks(4) {
        if let [fresh, _, distinct, _] = pair {
            println!(
                "{}: the cache answers {:.0}x faster than a fresh verification (medians)",
                fresh.name.split(' ').next().unwrap_or_default(),
                fresh.median / distinct.median
            );
        }
    }
}
