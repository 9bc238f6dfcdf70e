//! The hardening pack end to end (issue 9 §6, findings C2 and C3): the same service started
//! with and without `--policies policies/hardening`, a grant held for p1, and writes whose
//! paths hold an invisible character or look like CLAUDE.md. With the pack they ask per batch
//! (and nothing reaches the sandbox before approval); without it they are allowed and
//! written, as the reference allows them.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::harness::{assert_policy, main_session, write_args, Gateway};

const C2_PATHS: [&str; 2] = ["CLAUDE.md\u{2060}", "in\u{2060}dex.html"];
const C3_PATHS: [&str; 2] = [
    "\u{FF23}\u{FF2C}\u{FF21}\u{FF35}\u{FF24}\u{FF25}.md",
    "\u{0421}LAUDE.md",
];

fn pack() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("policies/hardening")
}

/// A service with the hardening pack (or the baseline alone), consent recorded and a write
/// grant held for p1 (approved through its card, as an operator would).
async fn granted(hardened: bool) -> (Gateway, Value) {
    let gateway = if hardened {
        Gateway::start_with(|raw| raw.policies = Some(vec![pack()])).await
    } else {
        Gateway::start().await
    };
    gateway.record_consent().await;
    let session = main_session(if hardened {
        "s-hardened"
    } else {
        "s-reference"
    });
    let asked = gateway
        .design(&session, "write_files", write_args("p1", &["first.html"]))
        .await;
    assert_eq!(asked.card_kind(), "grant", "{}", asked.body);
    let result = gateway.approved_result(&asked).await;
    assert_eq!(result["isError"], false, "{result}");
    (gateway, session)
}

/// With the pack: each path asks per batch under the held grant, naming `reason`, and the
/// write does not run; approving the batch then writes it.
async fn asks_per_batch(paths: &[&str], reason: &str) {
    let (gateway, session) = granted(true).await;
    for path in paths {
        let before = gateway.tool_calls("write_files").await;
        let asked = gateway
            .design(&session, "write_files", write_args("p1", &[path]))
            .await;
        assert_eq!(asked.status, 202, "{path:?}: {}", asked.body);
        assert_eq!(asked.card_kind(), "batch", "{path:?}: {}", asked.body);
        assert_policy(&asked, "grants.reserved-targets-ask");
        let why = asked.body["reason"].as_str().unwrap_or_default();
        assert!(
            why.contains(&format!("{reason}: {path}")),
            "{path:?}: {why}"
        );
        assert_eq!(
            gateway.tool_calls("write_files").await,
            before,
            "{path:?} ran"
        );
        assert_eq!(gateway.read_file("p1", path).await, None, "{path:?}");

        let result = gateway.approved_result(&asked).await;
        assert_eq!(result["isError"], false, "{path:?}: {result}");
        let written = gateway.read_file("p1", path).await;
        assert_eq!(written, Some(format!("<p>{path}</p>")), "{path:?}");
    }
}

/// Without the pack (the reference): each path is an ordinary write under the held grant.
async fn allowed_as_the_reference(paths: &[&str]) {
    let (gateway, session) = granted(false).await;
    for path in paths {
        let reply = gateway
            .design(&session, "write_files", write_args("p1", &[path]))
            .await;
        assert_eq!(reply.status, 200, "{path:?}: {}", reply.body);
        assert_eq!(reply.decision(), "allow");
        assert_eq!(reply.policies(), ["grants.held"], "{path:?}");
        let written = gateway.read_file("p1", path).await;
        assert_eq!(written, Some(format!("<p>{path}</p>")), "{path:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c2_invisible_characters_in_paths_ask_per_batch_with_the_hardening_pack() {
    asks_per_batch(&C2_PATHS, "invisible (default-ignorable) character in path").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c2_invisible_characters_in_paths_stay_allowed_without_the_pack() {
    allowed_as_the_reference(&C2_PATHS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c3_reserved_look_alikes_ask_per_batch_with_the_hardening_pack() {
    asks_per_batch(&C3_PATHS, "look-alike of a reserved path").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c3_reserved_look_alikes_stay_allowed_without_the_pack() {
    allowed_as_the_reference(&C3_PATHS).await;
}

/// Without a grant, a blocked target cannot be approved per batch: denied like CLAUDE.md.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c3_reserved_look_alikes_without_a_grant_are_denied_with_the_hardening_pack() {
    let gateway = Gateway::start_with(|raw| raw.policies = Some(vec![pack()])).await;
    gateway.record_consent().await;
    let session = main_session("s-no-grant");
    for path in C3_PATHS.iter().chain(&C2_PATHS) {
        let denied = gateway
            .design(&session, "write_files", write_args("p1", &[path]))
            .await;
        assert_eq!(denied.status, 403, "{path:?}: {}", denied.body);
        assert_eq!(denied.policies(), ["grants.reserved-targets-denied"]);
    }
    assert_eq!(gateway.tool_calls("write_files").await, 0);
    let ordinary = gateway
        .design(&session, "write_files", write_args("p1", &["index.html"]))
        .await;
    assert_eq!(ordinary.card_kind(), "grant", "{}", ordinary.body);
    assert_eq!(
        ordinary.body["approval"]["card"]["writes"],
        json!(["index.html"])
    );
}
