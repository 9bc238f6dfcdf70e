//! The front door under a reconnecting slowloris (N6), over real loopback TCP from distinct
//! loopback addresses (`127.0.0.2` is another peer than `127.0.0.1` to the service): one peer
//! holds at most `max_connections_per_peer` connections, near the cap a connection waiting for
//! a head gets the short deadline (a request in flight does not), the reserve is kept for peers
//! that completed a head, and the health listener answers on connections of its own.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use askgate::server::config::RawHttpLimits;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use super::load::{address, gateway_with};
use crate::gateway::harness::{main_session, AGENT};
use crate::reliability::harness::Binary;

pub(super) const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
pub(super) const ATTACKER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
const STRANGER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
const PARTIAL_HEAD: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";

/// A connection from `from` to `target` that sent part of a head (or `None` if connecting
/// failed, e.g. because the service refused it before the handshake finished).
pub(super) async fn partial_head(target: SocketAddr, from: IpAddr) -> Option<TcpStream> {
    try_partial_head(target, from).await.ok()
}

/// [`partial_head`], with the reason when connecting failed.
async fn try_partial_head(target: SocketAddr, from: IpAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    let mut stream = socket.connect(target).await?;
    let _ = stream.write_all(PARTIAL_HEAD).await;
    Ok(stream)
}

/// Whether the service closed `stream` within `limit`.
pub(super) async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buffer = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

/// Partial heads from `from` until the service refuses one (closes it at once), at most
/// `most`: then its pool is full. Waits first for the connections of earlier calls to end.
pub(super) async fn fill_pool(target: SocketAddr, from: IpAddr, most: usize) -> Vec<TcpStream> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut held = Vec::new();
    while held.len() < most {
        let Some(mut stream) = partial_head(target, from).await else {
            break;
        };
        if closed_within(&mut stream, Duration::from_millis(200)).await {
            break;
        }
        held.push(stream);
    }
    held
}

/// A pool of 8 that one peer may fill, with `reserved` reserved connections, a 30 s head
/// deadline and `busy_ms` near the cap.
pub(super) fn eight_connections(reserved: usize, busy_ms: u64) -> RawHttpLimits {
    RawHttpLimits {
        max_connections: Some(8),
        reserved_connections: Some(reserved),
        max_connections_per_peer: Some(8),
        header_read_timeout_ms: Some(30_000),
        busy_header_read_timeout_ms: Some(busy_ms),
        ..RawHttpLimits::default()
    }
}

/// A client on `from` that opens a new connection for every call.
pub(super) fn client_from(from: IpAddr) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(from)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

pub(super) async fn healthz_status(
    client: &reqwest::Client,
    url: &str,
    within: Duration,
) -> Option<u16> {
    let reply = client.get(url).timeout(within).send().await.ok()?;
    let status = reply.status().as_u16();
    reply.bytes().await.ok()?;
    Some(status)
}

async fn authorize_status(client: &reqwest::Client, base: &str, within: Duration) -> Option<u16> {
    let body = json!({"session": main_session("n6"), "tool": "ClaudeDesign",
                      "input": {"operation": "list"}});
    let reply = client
        .post(format!("{base}/v1/authorize"))
        .bearer_auth(AGENT)
        .json(&body)
        .timeout(within)
        .send()
        .await
        .ok()?;
    let status = reply.status().as_u16();
    reply.bytes().await.ok()?;
    Some(status)
}

/// What a slowloris saw of its connections.
#[derive(Debug, Default)]
struct Seen {
    opened: AtomicU64,
    /// Connects that had no answer within [`CONNECT_PATIENCE`] (the kernel's accept queue was
    /// full and dropped the SYN): given up and tried again, as a flood would.
    stalled: AtomicU64,
    /// Connects that failed on this side (no socket, no port): the attack's own trouble, not
    /// the service's answer; named in the failure message.
    failed: AtomicU64,
    /// Closed by the service within 100 ms of connecting (or reset while connecting).
    refused: AtomicU64,
    /// Held open for 5 s or more before the service closed it.
    held: AtomicU64,
}

/// A peer on `from` that keeps `count` partial heads open on `target`, reopening each as soon
/// as the service closes it, on a thread and runtime of its own (as another process would).
struct Slowloris {
    stop: Arc<AtomicBool>,
    seen: Arc<Seen>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Slowloris {
    fn start(target: SocketAddr, from: IpAddr, count: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Seen::default());
        let (stopping, seeing) = (Arc::clone(&stop), Arc::clone(&seen));
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let holders: Vec<_> = (0..count)
                    .map(|_| tokio::spawn(hold(target, from, stopping.clone(), seeing.clone())))
                    .collect();
                for holder in holders {
                    let _ = holder.await;
                }
            });
        });
        Self {
            stop,
            seen,
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> Arc<Seen> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        Arc::clone(&self.seen)
    }
}

impl Drop for Slowloris {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// How long a slowloris waits for a connect before it gives it up and tries another.
const CONNECT_PATIENCE: Duration = Duration::from_millis(500);

async fn hold(target: SocketAddr, from: IpAddr, stop: Arc<AtomicBool>, seen: Arc<Seen>) {
    while !stop.load(Ordering::SeqCst) {
        let mut stream =
            match tokio::time::timeout(CONNECT_PATIENCE, try_partial_head(target, from)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    let refused_by_the_service = matches!(
                        error.kind(),
                        std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::ConnectionReset
                    );
                    match refused_by_the_service {
                        true => seen.refused.fetch_add(1, Ordering::Relaxed),
                        false => seen.failed.fetch_add(1, Ordering::Relaxed),
                    };
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
                Err(_) => {
                    seen.stalled.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
        seen.opened.fetch_add(1, Ordering::Relaxed);
        let opened = Instant::now();
        while !stop.load(Ordering::SeqCst) {
            if closed_within(&mut stream, Duration::from_millis(100)).await {
                break;
            }
        }
        let lasted = opened.elapsed();
        if lasted < Duration::from_millis(100) {
            seen.refused.fetch_add(1, Ordering::Relaxed);
        } else if lasted >= Duration::from_secs(5) && !stop.load(Ordering::SeqCst) {
            seen.held.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Raises the soft open-file limit to the hard one if it is below `needed` (the attacker's
/// sockets and the service's share this machine's limits when the child inherits them).
fn raise_descriptor_limit(needed: u64) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|soft| soft < needed) {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        setrlimit(Resource::Nofile, raised).unwrap();
    }
    let soft = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    assert!(
        soft >= needed,
        "the open-file limit {soft} is below {needed}"
    );
}

/// The finding's attack against the real `askgate serve` with its default limits: 1,100
/// partial heads from 127.0.0.2, each reopened as it is closed, for 15 s. Meanwhile a client
/// on 127.0.0.1 calls `/v1/authorize` and `/healthz` (and the health listener's `/healthz`),
/// each on a new connection: at least 99% are answered within 2 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_a_reconnecting_slowloris_leaves_other_peers_answered_within_2_s() {
    raise_descriptor_limit(4_096);
    let work = tempfile::tempdir().unwrap();
    let mut binary = Binary::start_with(
        &["--health-listen".as_ref(), "127.0.0.1:0".as_ref()],
        work.path(),
    )
    .await;
    let health = binary.announced("health checks: ").await;
    let base = binary.url.clone();
    let target: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let attack = Slowloris::start(target, ATTACKER, 1_100);
    tokio::time::sleep(Duration::from_secs(1)).await;

    let client = client_from(CLIENT);
    let within = Duration::from_secs(2);
    let started = Instant::now();
    let (mut calls, mut answered, mut slow) = (0u32, 0u32, Vec::new());
    let mut latencies = Vec::new();
    while started.elapsed() < Duration::from_secs(14) {
        let call = Instant::now();
        let status = match calls % 3 {
            0 => authorize_status(&client, &base, within).await,
            1 => healthz_status(&client, &format!("{base}/healthz"), within).await,
            _ => healthz_status(&client, &health, within).await,
        };
        calls += 1;
        latencies.push(call.elapsed());
        match status {
            Some(200) => answered += 1,
            other => slow.push((calls, other, call.elapsed())),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seen = attack.stop();
    latencies.sort();
    let count = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
    eprintln!(
        "n6: {answered} of {calls} calls answered within 2 s (median {:?}, slowest {:?}); the \
         slowloris opened {} connections, {} refused at once, {} held 5 s or more, {} connects \
         unanswered for {CONNECT_PATIENCE:?}, {} failed on its side; not answered: {slow:?}",
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1],
        count(&seen.opened),
        count(&seen.refused),
        count(&seen.held),
        count(&seen.stalled),
        count(&seen.failed),
    );
    assert!(calls >= 100, "only {calls} calls in 14 s");
    assert!(
        u64::from(answered) * 100 >= u64::from(calls) * 99,
        "{answered} of {calls} answered: {slow:?}"
    );
    // The attack was real: more than 1,100 connection attempts, a peer's worth of them held to
    // the head deadline (10 s), the rest turned away as they came — closed at once by the
    // service, or (when the flood outruns its accept loop) left unanswered by the kernel's
    // full accept queue. Attempts that failed on the attacker's side count for nothing.
    let attempts = count(&seen.opened) + count(&seen.stalled) + count(&seen.refused);
    assert!(attempts > 1_100, "{seen:?}");
    assert!(count(&seen.held) >= 200, "{seen:?}");
    assert!(
        count(&seen.refused) + count(&seen.stalled) >= 800,
        "{seen:?}"
    );
    drop(binary);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_one_peer_holds_at_most_max_connections_per_peer() {
    let gateway = gateway_with(RawHttpLimits {
        max_connections_per_peer: Some(4),
        header_read_timeout_ms: Some(30_000),
        ..RawHttpLimits::default()
    })
    .await;
    let target: SocketAddr = address(&gateway).parse().unwrap();
    let url = format!("{}/healthz", gateway.url);
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(partial_head(target, ATTACKER).await.unwrap());
    }
    // A fifth connection of the same peer is closed, even with a complete request.
    let attacker = client_from(ATTACKER);
    let within = Duration::from_secs(2);
    assert_eq!(healthz_status(&attacker, &url, within).await, None);
    // Another peer is not affected.
    let client = client_from(CLIENT);
    assert_eq!(healthz_status(&client, &url, within).await, Some(200));
    for stream in &mut held {
        assert!(!closed_within(stream, Duration::from_millis(50)).await);
    }
    // One of the four ends: the peer may connect again.
    drop(held.pop());
    let started = Instant::now();
    while healthz_status(&attacker, &url, within).await != Some(200) {
        assert!(started.elapsed() < Duration::from_secs(5), "never again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A request from `from` whose head is complete and whose body comes `after` later.
async fn slow_request(target: SocketAddr, from: IpAddr, after: Duration) -> String {
    let body = json!({"session": main_session("n6"), "tool": "ClaudeDesign",
                      "input": {"operation": "list"}})
    .to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let head = format!(
        "POST /v1/authorize HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {AGENT}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    let mut stream = socket.connect(target).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(first.as_bytes()).await.unwrap();
    tokio::time::sleep(after).await;
    stream.write_all(rest.as_bytes()).await.unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response).await;
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_near_the_cap_a_waiting_head_gets_the_short_deadline_and_a_request_does_not() {
    let gateway = gateway_with(eight_connections(1, 300)).await;
    let target: SocketAddr = address(&gateway).parse().unwrap();
    // 5 stalled heads of 8: not near the cap (3/4), so they keep their 30 s.
    let mut stalled = Vec::new();
    for _ in 0..5 {
        stalled.push(partial_head(target, ATTACKER).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    for stream in &mut stalled {
        assert!(
            !closed_within(stream, Duration::from_millis(10)).await,
            "closed while calm"
        );
    }
    // A request whose body takes 2 s makes 6 of 8: near the cap. Heads that waited 300 ms
    // are closed until the server is calm again (below half: at most 3 open, the request
    // among them), so at least 3 of the 5 go long before their 30 s. The request, in flight
    // since its head, is not cut.
    let request = tokio::spawn(slow_request(target, CLIENT, Duration::from_secs(2)));
    let mut closed = 0;
    for stream in &mut stalled {
        if closed_within(stream, Duration::from_secs(2)).await {
            closed += 1;
        }
    }
    assert!(
        closed >= 3,
        "only {closed} of 5 stalled heads closed near the cap"
    );
    let response = request.await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_the_reserve_is_kept_for_peers_that_sent_a_complete_head() {
    let gateway = gateway_with(eight_connections(4, 30_000)).await;
    let target: SocketAddr = address(&gateway).parse().unwrap();
    let url = format!("{}/healthz", gateway.url);
    let within = Duration::from_secs(2);
    let client = client_from(CLIENT);
    assert_eq!(healthz_status(&client, &url, within).await, Some(200));
    let flood = fill_pool(target, ATTACKER, 9).await;
    assert_eq!(flood.len(), 8);
    // A stranger reconnects partial heads as fast as it is refused: none gets the reserve.
    let stranger = Slowloris::start(target, STRANGER, 8);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fresh = client_from(STRANGER);
    assert_eq!(
        healthz_status(&fresh, &url, within).await,
        None,
        "a peer that never sent a head got a reserved connection"
    );
    // The client, which did, still gets /healthz, and a JSON 503 for anything else.
    for _ in 0..5 {
        assert_eq!(healthz_status(&client, &url, within).await, Some(200));
    }
    assert_eq!(
        authorize_status(&client, &gateway.url, within).await,
        Some(503)
    );
    let seen = stranger.stop();
    assert!(seen.refused.load(Ordering::Relaxed) > 0, "{seen:?}");
    assert_eq!(seen.held.load(Ordering::Relaxed), 0, "{seen:?}");
    drop(flood);
}

/// `health_listen` from the config file, on the real binary: `/healthz` answers there on new
/// connections while the main listener is full, and nothing else is served there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n6_the_health_listener_answers_while_the_main_listener_is_full() {
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("askgate.json");
    let http = json!({"max_connections": 4, "reserved_connections": 1,
                      "max_connections_per_peer": 4, "header_read_timeout_ms": 30000,
                      "busy_header_read_timeout_ms": 30000});
    std::fs::write(
        &config,
        json!({"health_listen": "127.0.0.1:0", "http": http}).to_string(),
    )
    .unwrap();
    let mut binary =
        Binary::start_with(&["--config".as_ref(), config.as_os_str()], work.path()).await;
    let health = binary.announced("health checks: ").await;
    let target: SocketAddr = binary.url.trim_start_matches("http://").parse().unwrap();
    let flood = fill_pool(target, ATTACKER, 5).await;
    assert_eq!(flood.len(), 4);
    let within = Duration::from_secs(2);
    let stranger = client_from(STRANGER);
    let main = format!("{}/healthz", binary.url);
    assert_eq!(healthz_status(&stranger, &main, within).await, None);
    for _ in 0..5 {
        assert_eq!(healthz_status(&stranger, &health, within).await, Some(200));
    }
    let other = health.replace("/healthz", "/v1/authorize");
    let reply = stranger.get(&other).send().await.unwrap();
    assert_eq!(reply.status(), 404);
    let body: serde_json::Value = reply.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "this address answers only /healthz"
    );
    drop(flood);
}
