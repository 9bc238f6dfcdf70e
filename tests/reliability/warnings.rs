//! P7 of findings/trust-2026-12-04.md: the service's own warnings reach its operator. The real
//! binary writes them to stderr, as readable lines by default and as JSON lines with
//! `logging.format: json`; the warnings docs/operators.md promises appear.

use std::ffi::OsStr;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::harness::{send, Binary, APPROVER};

/// What the binary wrote to stderr so far.
fn stderr_of(work: &std::path::Path) -> String {
    std::fs::read_to_string(work.join("serve.err")).unwrap_or_default()
}

async fn eventually_in_stderr(work: &std::path::Path, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = stderr_of(work);
        if text.contains(needle) {
            return text;
        }
        assert!(Instant::now() < deadline, "no `{needle}` in stderr: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_connections_refused_at_the_front_door_are_a_warning_on_stderr() {
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("askgate.json");
    std::fs::write(
        &config,
        r#"{"http": {"max_connections_per_peer": 4, "header_read_timeout_ms": 5000}}"#,
    )
    .unwrap();
    let binary =
        Binary::start_with(&[OsStr::new("--config"), config.as_os_str()], work.path()).await;
    let address = binary.url.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for _ in 0..12 {
        if let Ok(mut stream) = TcpStream::connect(&address).await {
            let _ = stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                .await;
            held.push(stream);
        }
    }
    let text = eventually_in_stderr(work.path(), "connections refused at the front door").await;
    let line = text
        .lines()
        .find(|line| line.contains("connections refused at the front door"))
        .unwrap();
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("max_connections_per_peer=4"), "{line}");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p7_json_lines_carry_a_refused_reload() {
    let work = tempfile::tempdir().unwrap();
    let managed = work.path().join("managed");
    std::fs::create_dir_all(&managed).unwrap();
    let config = work.path().join("askgate.json");
    std::fs::write(
        &config,
        r#"{"logging": {"format": "json", "level": "warn"}}"#,
    )
    .unwrap();
    let binary = Binary::start_with(
        &[
            OsStr::new("--config"),
            config.as_os_str(),
            OsStr::new("--policies"),
            managed.as_os_str(),
            OsStr::new("--watch-seconds"),
            OsStr::new("0"),
        ],
        work.path(),
    )
    .await;
    std::fs::write(
        managed.join("broken.cedar"),
        "@id(\"broken\")\n@reason(\"x\")\nforbid (principal, action == Action::\"nope\", resource);\n",
    )
    .unwrap();
    let http = reqwest::Client::new();
    let url = format!("{}/v1/admin/reload", binary.url);
    send(&http, reqwest::Method::POST, url, Some(APPROVER), None)
        .await
        .unwrap();
    let text = eventually_in_stderr(work.path(), "policy reload refused").await;
    let line = text
        .lines()
        .find(|line| line.contains("policy reload refused"))
        .unwrap();
    let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
    assert_eq!(record["level"], "WARN", "{line}");
    assert!(
        record["message"]
            .as_str()
            .unwrap()
            .contains("keeping the running set"),
        "{line}"
    );
    // Nothing below the configured level, and no token anywhere.
    assert!(!text.contains("\"level\":\"INFO\""), "{text}");
    assert!(!text.contains(APPROVER), "{text}");
}

/// Issue 38 §5: a `@gate` that reads a fact known only after the upstream is asked loads, and
/// the running service says, on its log, that it can never act as a gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i38_a_gate_reading_upstream_facts_is_a_warning_at_boot() {
    let work = tempfile::tempdir().unwrap();
    let managed = work.path().join("managed");
    std::fs::create_dir_all(&managed).unwrap();
    std::fs::write(managed.join("budget.cedar"), UPSTREAM_GATE).unwrap();
    let _binary = Binary::start_with(
        &[OsStr::new("--policies"), managed.as_os_str()],
        work.path(),
    )
    .await;
    let text = eventually_in_stderr(work.path(), "policy loaded with a warning").await;
    let line = text
        .lines()
        .find(|line| line.contains("policy loaded with a warning"))
        .unwrap();
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("managed.budget-gate"), "{line}");
    assert!(line.contains("context.projects.knowledge_size"), "{line}");
}

/// A managed `@gate` on the attached project's knowledge size, which only the upstream knows.
const UPSTREAM_GATE: &str = "@id(\"managed.budget-gate\")\n@reason(\"the project is full\")\n@gate\nforbid (principal, action == Action::\"project_write\", resource)\nwhen { context.projects.knowledge_size > 1000 };\n";
