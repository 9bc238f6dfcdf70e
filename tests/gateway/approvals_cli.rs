//! `askgate approvals list|watch` against a running service: readable cards for people, the
//! service's JSON with `--json`.

use serde_json::{json, Value};

use super::harness::{main_session, Gateway, APPROVER};

async fn approvals(gateway: &Gateway, args: &[&str]) -> String {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
        .arg("approvals")
        .args(args)
        .args(["--server", &gateway.url, "--token", APPROVER])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_prints_readable_cards_and_json_for_scripts() {
    let gateway = Gateway::start().await;
    assert!(approvals(&gateway, &["list"])
        .await
        .contains("nothing is waiting for a decision"));
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("cli"),
            "finalize_plan",
            json!({"project_id": "p1", "scope": "paths",
                   "writes": ["site/a.html", "site/\u{202e}b.html"], "deletes": ["old.css"]}),
        )
        .await;
    let id = asked.approval_id();
    let cards = approvals(&gateway, &["list"]).await;
    for expected in [
        id.as_str(),
        // A path with a rejected character can never be registered as a plan (§3 jnS), so
        // the card is for this call only and says why (issue 23 §2).
        "This call only",
        "min",
        "left",
        "scope:    this call only; no plan is kept (the plan can't be registered: a path has the rejected character U+202E)",
        "writes:   site/a.html",
        "site/\\u202eb.html",
        "deletes:  old.css",
        "ClaudeDesign finalize_plan on p1",
    ] {
        assert!(cards.contains(expected), "{expected} in {cards}");
    }
    assert!(!cards.contains('\u{202e}'), "{cards}");
    assert!(!cards.contains("15 minutes"), "{cards}");
    let json: Value =
        serde_json::from_str(&approvals(&gateway, &["list", "--json"]).await).unwrap();
    assert_eq!(json["approvals"][0]["id"], json!(id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_prints_each_new_approval_once() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let watching = {
        let url = gateway.url.clone();
        tokio::spawn(async move {
            tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
                .args([
                    "approvals",
                    "watch",
                    "--every-seconds",
                    "1",
                    "--for-seconds",
                    "4",
                ])
                .args(["--server", &url, "--token", APPROVER])
                .output()
                .await
                .unwrap()
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let asked = gateway
        .design(
            &main_session("watch"),
            "delete_files",
            json!({"project_id": "p1", "paths": ["gone.html"]}),
        )
        .await;
    let id = asked.approval_id();
    let output = watching.await.unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.matches(id.as_str()).count(), 1, "{text}");
    assert!(text.contains("gone.html"), "{text}");
}
