//! The service under hostile load over real loopback TCP (F4, C10, C1): stalled heads and
//! bodies are closed after their deadlines, a flood past the connection cap leaves `/healthz`
//! answering from the reserve, and oversized bodies get the documented JSON 413. The
//! reconnecting slowloris of N6 is `front_door`'s.

use std::time::{Duration, Instant};

use askgate::server::config::RawHttpLimits;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::front_door::{
    client_from, eight_connections, healthz_status, partial_head, ATTACKER, CLIENT,
};
use crate::gateway::harness::{main_session, Gateway, AGENT};

pub(super) async fn gateway_with(limits: RawHttpLimits) -> Gateway {
    Gateway::start_with(|raw| raw.http = Some(limits)).await
}

pub(super) fn address(gateway: &Gateway) -> String {
    gateway.url.trim_start_matches("http://").to_string()
}

/// Reads until the peer closes (or `limit` passes) and returns what came, and when.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = limit.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            Err(_) => panic!("connection still open after {limit:?}"),
        }
    }
    (
        String::from_utf8_lossy(&received).into_owned(),
        started.elapsed(),
    )
}

/// The JSON body of a raw HTTP/1.1 response.
fn json_body(response: &str) -> Value {
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f4_stalled_header_is_closed_after_its_timeout() {
    let gateway = gateway_with(RawHttpLimits {
        header_read_timeout_ms: Some(300),
        ..RawHttpLimits::default()
    })
    .await;
    let mut stream = TcpStream::connect(address(&gateway)).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let (_, elapsed) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(
        elapsed >= Duration::from_millis(250),
        "closed after {elapsed:?}"
    );
    // An idle keep-alive connection is a stalled head too: closed after the same deadline.
    let mut idle = TcpStream::connect(address(&gateway)).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let (response, _) = read_until_closed(&mut idle, Duration::from_secs(5)).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c10_stalled_body_is_closed_after_its_timeout() {
    let gateway = gateway_with(RawHttpLimits {
        body_read_timeout_ms: Some(300),
        ..RawHttpLimits::default()
    })
    .await;
    let mut stream = TcpStream::connect(address(&gateway)).await.unwrap();
    let head = format!(
        "POST /v1/authorize HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {AGENT}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (response, elapsed) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(
        elapsed >= Duration::from_millis(250),
        "answered after {elapsed:?}"
    );
    let body = json_body(&response);
    assert_eq!(body["error"]["field"], "body", "{response}");
    assert_eq!(
        body["error"]["message"],
        "the request body was not received within 300 ms"
    );
}

/// P3: `/mcp` honours `http.body_read_timeout_ms` like every other route, on the fast path
/// (a 2026-07-28 `tools/call`'s headers) and on rmcp's service alike: the unfinished body gets
/// the JSON 408 and the connection closes, long before the idle timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p3_a_stalled_mcp_body_is_closed_after_its_timeout() {
    let gateway = gateway_with(RawHttpLimits {
        body_read_timeout_ms: Some(300),
        ..RawHttpLimits::default()
    })
    .await;
    let fast =
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: ClaudeDesign\r\n";
    for extra in [fast, ""] {
        let mut stream = TcpStream::connect(address(&gateway)).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {AGENT}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             {extra}Content-Length: 1000\r\n\r\n{{\"jsonrpc\""
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let (response, elapsed) = read_until_closed(&mut stream, Duration::from_secs(10)).await;
        assert!(
            response.starts_with("HTTP/1.1 408"),
            "{extra:?}: {response}"
        );
        assert!(
            elapsed >= Duration::from_millis(250) && elapsed < Duration::from_secs(10),
            "answered after {elapsed:?}"
        );
        assert_eq!(json_body(&response)["error"]["field"], "body", "{response}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f4_slowloris_past_the_cap_leaves_healthz_answering() {
    let gateway = gateway_with(eight_connections(4, 30_000)).await;
    // The health checker has been answered before: the reserve is kept for such peers (N6).
    let checker = client_from(CLIENT);
    let url = format!("{}/healthz", gateway.url);
    let within = Duration::from_millis(500);
    assert_eq!(healthz_status(&checker, &url, within).await, Some(200));
    // 40 connections from another peer each send part of a head and stall: 8 take the
    // normal pool and the rest are closed at once (that peer never completed a head).
    let target = address(&gateway).parse().unwrap();
    let mut stalled = Vec::new();
    for _ in 0..40 {
        stalled.extend(partial_head(target, ATTACKER).await);
    }
    let started = Instant::now();
    while healthz_status(&checker, &url, within).await != Some(200) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "/healthz never answered under the flood"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The reserve answers nothing but /healthz while the normal pool is full.
    let body = json!({"session": main_session("s"), "tool": "ClaudeDesign",
                      "input": {"operation": "list"}});
    let busy = checker
        .post(format!("{}/v1/authorize", gateway.url))
        .bearer_auth(AGENT)
        .json(&body)
        .timeout(within)
        .send()
        .await
        .unwrap();
    assert_eq!(busy.status(), 503);
    let body: Value = busy.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "too many connections: only /healthz is answered until some close"
    );
    drop(stalled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1_oversized_body_gets_a_json_413() {
    let gateway = gateway_with(RawHttpLimits {
        max_body_bytes: Some(1_024),
        ..RawHttpLimits::default()
    })
    .await;
    let big = json!({"session": main_session("s"), "tool": "ClaudeDesign",
                     "input": {"operation": "list", "arguments": {"full": "x".repeat(2_000)}}});
    let reply = gateway.post("/v1/authorize", Some(AGENT), Some(big)).await;
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert_eq!(reply.body["error"]["field"], "body");
    assert_eq!(
        reply.body["error"]["message"],
        "the request body is larger than the limit of 1024 bytes"
    );
    // A chunked body declares no length: it is cut off once it passes the limit.
    let mut stream = TcpStream::connect(address(&gateway)).await.unwrap();
    let head = format!(
        "POST /v1/design/call HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {AGENT}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..3 {
        let chunk = format!("{:x}\r\n{}\r\n", 600, "a".repeat(600));
        let _ = stream.write_all(chunk.as_bytes()).await;
    }
    let (response, _) = read_until_closed(&mut stream, Duration::from_secs(5)).await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(
        response.contains("content-type: application/json"),
        "{response}"
    );
    assert_eq!(json_body(&response)["error"]["field"], "body");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_body_limit_is_2_mib() {
    let gateway = Gateway::start().await;
    let body = format!("{{\"x\":\"{}\"}}", "a".repeat(2 * 1024 * 1024));
    let reply = gateway
        .send(
            reqwest::Method::POST,
            format!("{}/v1/authorize", gateway.url),
            Some(AGENT),
            Some(body.into_bytes()),
        )
        .await;
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert_eq!(
        reply.body["error"]["message"],
        "the request body is larger than the limit of 2097152 bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bench_floor_is_not_in_the_production_router() {
    let gateway = Gateway::start().await;
    let body = json!({"session": main_session("s"), "tool": "ClaudeDesign",
                      "input": {"operation": "list"}});
    let reply = gateway.post("/_bench/floor", Some(AGENT), Some(body)).await;
    assert_eq!(reply.status, 404, "{}", reply.body);
}
