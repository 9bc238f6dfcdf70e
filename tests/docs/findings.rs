//! What the docs promise a newcomer, held to the product (findings A8, A11, A13, A14 of
//! 2026-12-04, and `askgate token new` of issue 33 §3): each test runs the binary the way the
//! docs tell a person to.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::gateway::harness::{main_session, Gateway, AGENT};

fn askgate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("askgate runs")
}

/// A8: admins.md's `check` of an example scenario works as written (the scenarios name their
/// policy files); with `--policies policies/examples` as well each file loads twice, exit 3.
#[test]
fn a8_every_example_scenario_checks_as_admins_md_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(root.join("tests/scenarios/examples"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 19, "{files:?}");
    for file in &files {
        let shown = file.strip_prefix(root).unwrap().display().to_string();
        let checked = askgate(&["check", &shown]);
        assert_eq!(checked.status.code(), Some(0), "{shown}: {checked:?}");
    }
    let twice = askgate(&[
        "check",
        "tests/scenarios/examples/001-secrets-under-grant-asks.json",
        "--policies",
        "policies/examples",
    ]);
    assert_eq!(twice.status.code(), Some(3), "{twice:?}");
    let admins = std::fs::read_to_string(root.join("docs/admins.md")).unwrap();
    assert!(
        admins.contains("exits 3 (`duplicate @id`)"),
        "admins.md says so"
    );
}

/// A11: a page that fits in the pipe is written whole before a slow reader closes it, so
/// `askgate approvals list | head -5` exits 0 under `pipefail` (141 only when the reader closes
/// first, `tests/cli.rs`), as approvers.md now says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a11_a_page_that_fits_in_the_pipe_exits_0_before_head_closes_it() {
    let gateway = Gateway::start().await;
    for n in 0..7 {
        let asked = gateway
            .design(
                &main_session(&format!("pipe-{n}")),
                "list_projects",
                json!({}),
            )
            .await;
        assert_eq!(asked.status, 202, "{}", asked.body);
    }
    let script = format!(
        "set -o pipefail; '{}' approvals list --server {} --token askgate-demo-approver-token \
         | {{ sleep 1; head -5; }}",
        env!("CARGO_BIN_EXE_askgate"),
        gateway.url
    );
    let output = tokio::process::Command::new("bash")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 5);
}

/// A13: a configuration file is read only when `--config` names it (fleet.md's example now
/// does): `serve` beside an `askgate.json` it was not given starts on its defaults; given it,
/// its keys apply (here a `store` it refuses, named).
#[test]
fn a13_serve_reads_a_config_file_only_when_named_with_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("askgate.json"),
        r#"{"store": "postgres://askgate@127.0.0.1:1/askgate"}"#,
    )
    .unwrap();
    let named = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--config",
            "askgate.json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!named.status.success(), "{named:?}");
    let said = String::from_utf8_lossy(&named.stderr);
    assert!(
        said.contains("127.0.0.1:1"),
        "the store it was given: {said}"
    );
    let mut unnamed = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    let stdout = unnamed.stdout.take().unwrap();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut first).unwrap();
    unnamed.kill().unwrap();
    unnamed.wait().unwrap();
    assert!(
        first.starts_with("askgate listening on http://127.0.0.1:"),
        "{first}"
    );
}

/// A14: a number of scenarios the docs state is the corpus's.
#[test]
fn a14_the_docs_state_no_scenario_count_the_corpus_does_not_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let count = crate::support::corpus_files().len();
    for file in super::markdown_files(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        let words: Vec<&str> = text.split_whitespace().collect();
        for pair in words.windows(2) {
            let number = pair[0].replace(',', "");
            if pair[1].starts_with("scenarios") && number.parse::<usize>().is_ok() {
                assert_eq!(
                    number.parse::<usize>().unwrap(),
                    count,
                    "{}: `{} {}`",
                    file.display(),
                    pair[0],
                    pair[1]
                );
            }
        }
    }
}

/// §3: `askgate token new` makes tokens `serve` accepts as configured `callers`; once they are
/// configured the demo tokens answer 401 (operators.md says so where it matters).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_new_makes_a_caller_serve_accepts_and_the_demo_tokens_stop() {
    let entry = |role: &str, principal: &str| -> Value {
        let made = askgate(&[
            "token",
            "new",
            "--role",
            role,
            "--principal",
            principal,
            "--json",
        ]);
        assert!(made.status.success(), "{made:?}");
        serde_json::from_slice(&made.stdout).unwrap()
    };
    let agent = entry("agent", "ci-agent");
    let approver = entry("approver", "alice");
    assert_eq!(agent["role"], "agent");
    assert_eq!(agent["token"].as_str().unwrap().len(), 64);
    assert_ne!(agent["token"], approver["token"]);
    let callers = json!([agent.clone(), approver.clone()]);
    let gateway = Gateway::start_with(move |raw| {
        raw.callers = Some(serde_json::from_value(callers).unwrap())
    })
    .await;
    let token = approver["token"].as_str().unwrap();
    assert_eq!(gateway.get("/v1/approvals", Some(token)).await.status, 200);
    let demo = gateway
        .get("/v1/approvals", Some("askgate-demo-approver-token"))
        .await;
    assert_eq!(demo.status, 401, "{}", demo.body);
    let asked = gateway
        .post(
            "/v1/design/call",
            Some(AGENT),
            Some(json!({"session": main_session("s"), "input": {"operation": "list_projects"}})),
        )
        .await;
    assert_eq!(asked.status, 401, "{}", asked.body);
    let human = askgate(&["token", "new", "--role", "agent", "--principal", "ci-agent"]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("the demo tokens stop working"), "{text}");
    assert!(text.contains("export ASKGATE_AGENT_TOKEN="), "{text}");
    let refused = askgate(&["token", "new", "--role", "agent", "--principal", "a b"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
}
