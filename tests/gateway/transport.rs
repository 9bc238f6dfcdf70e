//! The Design transport end to end (issue 3, client-facts §6–§7): token refresh on 401, session
//! re-initialize on 404, SSE and oversized bodies refused, the image cap, one shared initialize.

use serde_json::{json, Value};

use super::harness::{main_session, text_of, Gateway, SANDBOX_TOKEN};

fn read() -> Value {
    json!({"project_id": "p1", "path": "index.html"})
}

/// A service with consent recorded, so reads are allowed outright.
async fn connected() -> Gateway {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    gateway
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_refreshes_once_and_a_second_401_is_a_clear_auth_error_without_the_token() {
    let gateway = connected().await;
    let session = main_session("s-auth");
    gateway
        .fault(json!({"fault": "token_expired", "count": 1, "tool": "read_file"}))
        .await;
    let ok = gateway.design(&session, "read_file", read()).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.body["result"]["isError"], false, "{}", ok.body);
    let stats = gateway.stats().await;
    assert_eq!(stats["token_refreshes"], 1);
    // The faulted 401 is answered before the sandbox's handler: only the retry reached it.
    assert_eq!(stats["tools_call"]["read_file"], 1);

    gateway
        .fault(json!({"fault": "token_expired", "count": 2, "tool": "read_file"}))
        .await;
    let failed = gateway.design(&session, "read_file", read()).await;
    assert_eq!(failed.status, 200, "{}", failed.body);
    let result = &failed.body["result"];
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(result);
    assert!(text.contains("HTTP 401"), "{text}");
    assert!(text.contains("sign in to claude.ai again"), "{text}");
    let whole = failed.body.to_string();
    assert!(!whole.contains(SANDBOX_TOKEN), "{whole}");
    assert!(!whole.contains("sandbox-access-"), "{whole}");
    assert!(!whole.contains("sandbox-refresh"), "{whole}");
    let stats = gateway.stats().await;
    assert_eq!(
        stats["token_refreshes"], 2,
        "exactly one refresh per 401 chain"
    );
    assert_eq!(
        stats["tools_call"]["read_file"], 1,
        "neither 401 reached the handler"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_initialized_again_once() {
    let gateway = connected().await;
    let session = main_session("s-session");
    let first = gateway.design(&session, "read_file", read()).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(gateway.stats().await["initialize"], 1);

    gateway
        .fault(json!({"fault": "session_expired", "count": 1}))
        .await;
    let again = gateway.design(&session, "read_file", read()).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["result"]["isError"], false, "{}", again.body);
    let stats = gateway.stats().await;
    assert_eq!(stats["initialize"], 2);
    assert_eq!(
        stats["tools_call"]["read_file"], 2,
        "the 404 is not a tools/call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_stream_and_oversized_responses_are_refused_with_clear_errors() {
    let gateway = connected().await;
    let session = main_session("s-body");
    gateway
        .fault(json!({"fault": "sse", "tool": "read_file"}))
        .await;
    let sse = gateway.design(&session, "read_file", read()).await;
    assert_eq!(sse.body["result"]["isError"], true, "{}", sse.body);
    assert!(
        text_of(&sse.body["result"]).contains("text/event-stream"),
        "{}",
        sse.body
    );

    gateway
        .fault(json!({"fault": "oversized", "bytes": 3_000_000, "tool": "read_file"}))
        .await;
    let big = gateway.design(&session, "read_file", read()).await;
    assert_eq!(big.body["result"]["isError"], true, "{}", big.body);
    assert!(
        text_of(&big.body["result"]).contains("exceeded the response size cap"),
        "{}",
        big.body
    );

    // Both were transient: the next call works.
    let ok = gateway.design(&session, "read_file", read()).await;
    assert_eq!(ok.body["result"]["isError"], false, "{}", ok.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_render_preview_image_is_replaced_by_the_cap_notice() {
    let gateway = connected().await;
    let asked = gateway
        .design(
            &main_session("s-render"),
            "render_preview",
            json!({"project_id": "p1", "path": "index.html", "render": "large"}),
        )
        .await;
    assert_eq!(asked.card_kind(), "batch", "{}", asked.body);
    let result = gateway.approved_result(&asked).await;
    assert_eq!(result["isError"], false, "{result}");
    let blocks = result["content"].as_array().expect("content");
    assert!(
        blocks.iter().all(|block| block["type"] == "text"),
        "no image block survives: {result}"
    );
    let text = text_of(&result);
    assert!(
        text.contains("[render_preview image omitted — 195KB exceeds 127KB cap]"),
        "{text}"
    );
    assert!(
        text.contains("\"ok\":true"),
        "the report block is kept: {text}"
    );
    assert_eq!(result["notices"].as_array().map(Vec::len), Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_first_calls_share_one_initialize() {
    let gateway = std::sync::Arc::new(connected().await);
    assert_eq!(gateway.stats().await["initialize"], 0);
    let calls = (0..50).map(|index| {
        let gateway = std::sync::Arc::clone(&gateway);
        tokio::spawn(async move {
            let session = main_session(&format!("s-{index}"));
            gateway.design(&session, "read_file", read()).await
        })
    });
    for reply in futures_util::future::join_all(calls).await {
        let reply = reply.expect("task");
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["result"]["isError"], false, "{}", reply.body);
    }
    let stats = gateway.stats().await;
    assert_eq!(stats["initialize"], 1);
    assert_eq!(stats["tools_call"]["read_file"], 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_past_the_aggregate_cap_are_dropped_with_a_notice() {
    let gateway = connected().await;
    // An image just under the 130,000-character image cap; the report block then crosses the
    // aggregate cap.
    let asked = gateway
        .design(
            &main_session("s-aggregate"),
            "render_preview",
            json!({"project_id": "p1", "render": 129_996}),
        )
        .await;
    let result = gateway.approved_result(&asked).await;
    assert_eq!(result["isError"], false, "{result}");
    let blocks = result["content"].as_array().expect("content");
    assert_eq!(
        blocks.first().map(|block| &block["type"]),
        Some(&json!("image"))
    );
    assert_eq!(
        blocks
            .first()
            .and_then(|block| block["data"].as_str())
            .map(str::len),
        Some(129_996)
    );
    let text = text_of(&result);
    assert!(
        text.contains("[ClaudeDesign result truncated — 1 block(s)"),
        "{text}"
    );
    assert!(
        !text.contains("validators"),
        "the report block was dropped: {text}"
    );
}
