//! Approval fatigue (issue 35 §4) end to end: asks held and answered over real HTTP, logged,
//! then `askgate approvals stats` reads the decision log and names the ask approved every time,
//! by whom, with the change that would stop asking; an ask that was refused gets none.

use serde_json::{json, Value};

use super::console::Browser;
use super::harness::{main_session, Gateway, APPROVER};

fn delete(path: &str) -> Value {
    json!({"project_id": "p1", "paths": [path]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i35_stats_names_the_ask_approved_every_time_and_what_would_stop_it() {
    let work = tempfile::tempdir().unwrap();
    let logs = work.path().join("logs");
    let log_dir = logs.clone();
    let gateway = Gateway::start_with(move |raw| raw.log_dir = Some(log_dir)).await;
    gateway.record_consent().await;
    let session = main_session("s-fatigue");
    for n in 0..4 {
        let asked = gateway
            .design(&session, "delete_files", delete(&format!("old-{n}.css")))
            .await;
        let approved = gateway.approve(&asked.approval_id()).await;
        assert_eq!(approved.status, 200, "{}", approved.body);
    }
    let sharing = gateway
        .design(
            &session,
            "update_sharing",
            json!({"project_id": "p1", "scope": "org"}),
        )
        .await;
    let refused = gateway.refuse(&sharing.approval_id()).await;
    assert_eq!(refused.status, 200, "{}", refused.body);
    // One more delete left pending: counted as open, not as approved.
    let pending = gateway
        .design(&session, "delete_files", delete("pending.css"))
        .await;
    assert_eq!(pending.status, 202, "{}", pending.body);

    let log = logs.to_str().unwrap();
    let run = |args: Vec<&str>| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
            .args(args)
            .env_remove("ASKGATE_APPROVER_TOKEN")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let report: Value = serde_json::from_str(&run(vec![
        "approvals",
        "stats",
        log,
        "--min",
        "4",
        "--json",
    ]))
    .unwrap();
    let groups = report["groups"].as_array().unwrap();
    let deletes = groups
        .iter()
        .find(|group| group["operation"] == "delete_files")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(deletes["asks"], 5, "{deletes:#}");
    assert_eq!(deletes["approved"], 4, "{deletes:#}");
    assert_eq!(deletes["open"], 1, "{deletes:#}");
    assert_eq!(deletes["refused"], 0, "{deletes:#}");
    assert_eq!(deletes["card"], "batch", "{deletes:#}");
    assert_eq!(deletes["project"], "p1", "{deletes:#}");
    let approver = deletes["approvers"].as_object().unwrap();
    assert_eq!(
        approver.values().map(|n| n.as_u64().unwrap()).sum::<u64>(),
        4
    );
    let suggestion = deletes["suggestion"].as_str().unwrap_or_default();
    assert!(
        suggestion.contains("approved 4 of 4 times, never refused")
            && suggestion.contains("finalize_plan")
            && suggestion.contains("askgate diff"),
        "{suggestion}"
    );
    let sharing = groups
        .iter()
        .find(|group| group["operation"] == "update_sharing")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(
        (sharing["asks"].as_u64(), sharing["refused"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(sharing.get("suggestion"), None, "{sharing:#}");

    // The table says the same for a person; a higher bar suggests nothing.
    let table = run(vec!["approvals", "stats", log, "--min", "4"]);
    assert!(
        table.contains("2 kinds of ask; 1 approved every time"),
        "{table}"
    );
    assert!(
        table.contains("asks 5: approved 4, refused 0, unanswered 0, open 1"),
        "{table}"
    );
    assert!(
        table.contains("  suggestion: approved 4 of 4 times"),
        "{table}"
    );
    let strict = run(vec!["approvals", "stats", log, "--min", "5"]);
    assert!(!strict.contains("suggestion:"), "{strict}");

    // The console's page reads the same log (its bar is 5 approvals: no suggestion yet).
    let mut console = Browser::new(&gateway);
    console.sign_in(APPROVER).await;
    let page = console.get("/console/fatigue").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body
            .contains("5 asked: 4 approved, 0 refused, 0 unanswered, 1 open"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("1 asked: 0 approved, 1 refused"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("class=\"suggestion\""), "{}", page.body);
    // One more approval makes five: the page names what would stop the asking.
    let approved = gateway.approve(&pending.approval_id()).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    let page = console.get("/console/fatigue").await;
    assert!(
        page.body.contains("approved 5 of 5 times, never refused"),
        "{}",
        page.body
    );
}
