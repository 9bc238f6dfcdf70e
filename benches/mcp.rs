//! benches/mcp: the MCP front door's figure of issue 10 §4 — p50 of one `tools/call` read
//! (`ClaudeDesign` `get_project`) through `/mcp` against the same call through
//! `/v1/design/call`, each on one kept-alive connection, calls one after another. The service
//! runs in process with its in-process sandbox upstream (consent recorded first), as `serve`
//! does with its embedded defaults. Two MCP shapes are timed: 2026-07-28 (stateless, what
//! Claude Code 2.1.328 speaks by default, served by the fast path `server::mcp::lean`; and the
//! same through rmcp's service, for comparison) and 2025-11-25 (inside an `initialize`d
//! session).
//! Every call is a distinct body (a new `claudecode/toolUseId` over MCP, a new session id over
//! HTTP). Informational only: it prints the figures and the ratio against the 1.2× target.
//!
//! Run: `cargo bench --bench mcp` (`-- --quick` for a short smoke run; `-- --only=http`,
//! `--only=stateless`, `--only=session` or `--only=stateless-service` times one case alone, for `perf stat` / `perf record`
//! per path).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::{Duration, Instant};

use askgate::server::config::{Config, RawConfig, DEMO_AGENT_TOKEN, DEMO_APPROVER_TOKEN};
use serde_json::{json, Value};

/// The allocator `serve` runs with (src/main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ROUNDS: usize = 20;

struct Target {
    url: String,
    /// Claude Code's `Accept`; a weighted one sends a 2026-07-28 call to rmcp's service
    /// (the fast path reads only plain media types), for the side-by-side figure.
    accept: &'static str,
    body: String,
    headers: Vec<(&'static str, String)>,
}

async fn boot() -> String {
    let spill = std::env::temp_dir().join("askgate-bench-mcp");
    let raw = RawConfig {
        listen: Some("127.0.0.1:0".into()),
        spill_dir: Some(spill),
        ..RawConfig::default()
    };
    let config = Config::validate(raw).unwrap();
    let booted = askgate::server::boot::boot(&config, askgate::server::boot::system_clock())
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::mem::forget(booted.sandbox);
    tokio::spawn(askgate::server::run(
        listener,
        booted.state,
        std::future::pending(),
    ));
    url
}

/// One client per target so each keeps exactly one connection.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .build()
        .unwrap()
}

/// Where a body carries the call's number: each call is a distinct body, as a client's are
/// (Claude Code sends a new `claudecode/toolUseId` with every call).
const CALL_NUMBER: &str = "@N@";

async fn send(http: &reqwest::Client, target: &Target) -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let number = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut request = http
        .post(&target.url)
        .bearer_auth(DEMO_AGENT_TOKEN)
        .header("content-type", "application/json")
        .header("accept", target.accept)
        .body(target.body.replace(CALL_NUMBER, &number.to_string()));
    for (name, value) in &target.headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    response.text().await.unwrap()
}

fn mcp_call(meta: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "ClaudeDesign", "_meta": meta,
        "arguments": {"operation": "get_project", "arguments": {"project_id": "p1"}}}})
    .to_string()
}

const ACCEPT: &str = "application/json, text/event-stream";

/// The meta and headers Claude Code 2.1.328 sends on a 2026-07-28 `tools/call`.
fn stateless(url: &str, accept: &'static str) -> Target {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "askgate-bench", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
        "claudecode/toolUseId": format!("toolu_bench_{CALL_NUMBER}")
    });
    Target {
        url: format!("{url}/mcp"),
        accept,
        body: mcp_call(meta),
        headers: vec![
            ("mcp-protocol-version", "2026-07-28".into()),
            ("mcp-method", "tools/call".into()),
            ("mcp-name", "ClaudeDesign".into()),
        ],
    }
}

async fn in_session(http: &reqwest::Client, url: &str) -> Target {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "askgate-bench", "version": "0"}}});
    let response = http
        .post(format!("{url}/mcp"))
        .bearer_auth(DEMO_AGENT_TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(initialize.to_string())
        .send()
        .await
        .unwrap();
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    response.text().await.unwrap();
    let headers = vec![
        ("mcp-protocol-version", "2025-11-25".to_string()),
        ("mcp-session-id", session),
    ];
    let initialized = Target {
        url: format!("{url}/mcp"),
        accept: ACCEPT,
        body: json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        headers: headers.clone(),
    };
    send(http, &initialized).await;
    Target {
        url: format!("{url}/mcp"),
        accept: ACCEPT,
        body: mcp_call(json!({"claudecode/toolUseId": format!("toolu_bench_{CALL_NUMBER}")})),
        headers,
    }
}

fn p50(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|argument| argument == "--quick");
    let per_round = if quick { 20 } else { 100 };
    let only = std::env::args().find_map(|argument| {
        let case = argument.strip_prefix("--only=")?.to_string();
        Some(
            ["http", "stateless", "session", "stateless-service"]
                .iter()
                .position(|name| *name == case),
        )
    });
    let only =
        only.map(|position| position.expect("--only=http|stateless|session|stateless-service"));
    let url = boot().await;
    reqwest::Client::new()
        .post(format!("{url}/v1/design/consent"))
        .bearer_auth(DEMO_APPROVER_TOKEN)
        .send()
        .await
        .unwrap();
    let http_target = Target {
        url: format!("{url}/v1/design/call"),
        accept: ACCEPT,
        body: json!({"session": {"id": format!("bench-{CALL_NUMBER}"), "agent": "main", "mode": "default",
            "interactive": true},
            "input": {"operation": "get_project", "arguments": {"project_id": "p1"}}})
        .to_string(),
        headers: Vec::new(),
    };
    let clients = [client(), client(), client(), client()];
    let session_target = in_session(&clients[2], &url).await;
    let weighted = "application/json;q=1, text/event-stream";
    let targets = [
        http_target,
        stateless(&url, ACCEPT),
        session_target,
        stateless(&url, weighted),
    ];
    for (http, target) in clients.iter().zip(&targets) {
        let answer = send(http, target).await;
        assert!(answer.contains("Q3 deck"), "the read is allowed: {answer}");
    }
    let mut samples: [Vec<Duration>; 4] = Default::default();
    // Rounds interleave the three so drift on a shared machine hits them alike.
    for _ in 0..ROUNDS {
        let cases = clients.iter().zip(&targets).zip(samples.iter_mut());
        for (case, ((http, target), times)) in cases.enumerate() {
            if only.is_some_and(|only| only != case) {
                continue;
            }
            for _ in 0..per_round {
                let started = Instant::now();
                send(http, target).await;
                times.push(started.elapsed());
            }
        }
    }
    if let Some(only) = only {
        let times = &mut samples[only];
        println!("calls: {}  p50 {:>8.1} µs", times.len(), micros(p50(times)));
        return;
    }
    let [http, stateless, session, service] = samples.each_mut().map(|times| p50(times));
    println!("calls per case: {}", ROUNDS * per_round);
    println!(
        "p50 /v1/design/call get_project    {:>8.1} µs",
        micros(http)
    );
    println!(
        "p50 /mcp tools/call (2026-07-28)   {:>8.1} µs  ratio {:.2}× (target ≤ 1.2×)",
        micros(stateless),
        ratio(stateless, http)
    );
    println!(
        "p50 /mcp tools/call (2026-07-28 on rmcp's service) {:>8.1} µs  ratio {:.2}×",
        micros(service),
        ratio(service, http)
    );
    println!(
        "p50 /mcp tools/call (2025-11-25)   {:>8.1} µs  ratio {:.2}× (target ≤ 1.2×)",
        micros(session),
        ratio(session, http)
    );
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn ratio(mcp: Duration, http: Duration) -> f64 {
    mcp.as_secs_f64() / http.as_secs_f64()
}
