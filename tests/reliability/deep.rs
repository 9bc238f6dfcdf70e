//! P5 of findings/trust-2026-12-04.md: a policy set that Cedar would take but whose building
//! overflows a thread's stack. A policy past askgate's limits (a 3,000-way `||` list, brackets
//! 1,000 deep) is a problem with its file and line for `validate`, `diff`, `serve`, a reload
//! through `POST /v1/admin/reload` and the directory watcher alike — never an abort — and a
//! policy at the limits loads, reloads on a runtime worker and decides.

use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use askgate::authz::limits::{MAX_BOOLEAN_OPERATORS, MAX_NESTING};

use super::harness::{self, askgate, send, Binary, APPROVER};

fn chain(n: usize) -> String {
    let terms: Vec<String> = (0..n)
        .map(|i| format!("context.lowercase == \"f{i}.html\""))
        .collect();
    format!(
        "@id(\"long\")\n@reason(\"x\")\nforbid (principal, action in Action::\"DesignTarget\", resource)\nwhen {{ {} }};\n",
        terms.join(" || ")
    )
}

fn nested(n: usize) -> String {
    format!(
        "@id(\"deep\")\n@reason(\"x\")\nforbid (principal, action in Action::\"DesignTarget\", resource)\nwhen {{ {}context.lowercase == \"x.html\"{} }};\n",
        "(".repeat(n),
        ")".repeat(n)
    )
}

fn dir_with(root: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("p.cedar"), text).unwrap();
    dir
}

#[test]
fn p5_validate_and_diff_report_a_long_or_deep_policy_with_its_file_and_line() {
    let root = tempfile::tempdir().unwrap();
    for (name, text, says) in [
        ("long", chain(3_000), "2999 `||` / `&&` operators"),
        ("deep", nested(1_000), "nests brackets 1001 deep"),
    ] {
        let dir = dir_with(root.path(), name, &text);
        let (code, out, err) = askgate(&[
            OsStr::new("validate"),
            OsStr::new("--policies"),
            dir.as_os_str(),
        ]);
        let printed = format!("{out}{err}");
        assert_ne!(code, 134, "{name}: aborted: {printed}");
        assert!(code == 1 || code == 3, "{name}: exit {code}: {printed}");
        assert!(printed.contains("p.cedar:1:"), "{name}: {printed}");
        assert!(printed.contains(says), "{name}: {printed}");
        let empty = root.path().join(format!("{name}-before"));
        std::fs::create_dir_all(&empty).unwrap();
        let (code, out, err) = askgate(&[OsStr::new("diff"), empty.as_os_str(), dir.as_os_str()]);
        assert_eq!(code, 3, "{name}: diff: {out}{err}");
        assert!(format!("{out}{err}").contains(says), "{name}: {out}{err}");
    }
}

async fn reload(binary: &Binary) -> serde_json::Value {
    let http = reqwest::Client::new();
    let url = format!("{}/v1/admin/reload", binary.url);
    send(&http, reqwest::Method::POST, url, Some(APPROVER), None)
        .await
        .expect("the service answers the reload")
        .body
}

async fn healthz(binary: &Binary) -> serde_json::Value {
    let http = reqwest::Client::new();
    let url = format!("{}/healthz", binary.url);
    send(&http, reqwest::Method::GET, url, None, None)
        .await
        .expect("the service is alive")
        .body
}

async fn authorize(binary: &Binary, path: &str) -> serde_json::Value {
    let body = json!({
        "session": {"id": "deep", "agent": "main", "mode": "default", "interactive": true},
        "tool": "ClaudeDesign",
        "input": {"operation": "write_files", "arguments": {"project_id": "p1",
            "files": [{"path": path, "data": "x"}]}},
    });
    let reply = harness::authorize(&reqwest::Client::new(), &binary.url, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p5_a_reload_of_a_long_or_deep_policy_is_refused_and_the_service_lives_on() {
    let work = tempfile::tempdir().unwrap();
    let managed = work.path().join("managed");
    std::fs::create_dir_all(&managed).unwrap();
    let binary = Binary::start_with(
        &[
            OsStr::new("--policies"),
            managed.as_os_str(),
            OsStr::new("--watch-seconds"),
            OsStr::new("0"),
        ],
        work.path(),
    )
    .await;
    for (text, says) in [(chain(3_000), "operators"), (nested(60), "nests brackets")] {
        std::fs::write(managed.join("p.cedar"), &text).unwrap();
        let report = reload(&binary).await;
        assert!(report.to_string().contains(says), "{report}");
        let health = healthz(&binary).await;
        assert_eq!(health["status"], "degraded", "{health}");
    }
    // At both limits at once: the set reloads on a runtime worker, and the policy evaluates
    // there without Cedar's recursion limit (which would deny with an error).
    let at_limits = format!(
        "@id(\"long\")\n@reason(\"listed\")\nforbid (principal, action in Action::\"DesignTarget\", resource)\nwhen {{ {}{}{} }};\n",
        "(".repeat(MAX_NESTING - 1),
        (0..=MAX_BOOLEAN_OPERATORS)
            .map(|i| format!("context.lowercase == \"f{i}.html\""))
            .collect::<Vec<_>>()
            .join(" || "),
        ")".repeat(MAX_NESTING - 1),
    );
    std::fs::write(managed.join("p.cedar"), at_limits).unwrap();
    let report = reload(&binary).await;
    assert!(report["error"].is_null(), "{report}");
    assert_eq!(healthz(&binary).await["status"], "ok");
    let last = format!("f{MAX_BOOLEAN_OPERATORS}.html");
    let denied = authorize(&binary, &last).await;
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert_eq!(denied["errors"], json!([]), "{denied}");
    assert!(
        denied["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("(listed: {last})")),
        "{denied}"
    );
    let other = authorize(&binary, "other.html").await;
    assert_eq!(other["errors"], json!([]), "{other}");
    assert!(!other.to_string().contains("listed"), "{other}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p5_the_watcher_refuses_a_deep_policy_and_the_service_lives_on() {
    let work = tempfile::tempdir().unwrap();
    let managed = work.path().join("managed");
    std::fs::create_dir_all(&managed).unwrap();
    let binary = Binary::start_with(
        &[
            OsStr::new("--policies"),
            managed.as_os_str(),
            OsStr::new("--watch-seconds"),
            OsStr::new("1"),
        ],
        work.path(),
    )
    .await;
    std::fs::write(managed.join("p.cedar"), nested(1_000)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let health = healthz(&binary).await;
        if health["status"] == "degraded" {
            assert!(health.to_string().contains("nests brackets"), "{health}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watcher never reported: {health}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Still deciding on the running set.
    let decided = authorize(&binary, "index.html").await;
    assert!(decided["decision"].is_string(), "{decided}");
}
