//! The `askgate` binary end to end: exit codes, stdout and stderr of `check`, `validate` and
//! `test` on real files; the approvals CLI's token variable; a closed standard output.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::gateway::harness::{main_session, Gateway, AGENT, APPROVER};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn askgate(args: &[&str], stdin: Option<&str>) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_askgate"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("askgate runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    let output = child.wait_with_output().expect("askgate finishes");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

const GRANTED_WRITE: &str = r#"{
  "now": "2026-11-30T10:00:00Z",
  "state": {"consent": true, "verified_grants": ["p1"]},
  "call": {"tool": "ClaudeDesign", "input": {"operation": "write_files",
           "arguments": {"project_id": "p1", "files": [{"path": "index.html", "data": "x"}]}}}
}"#;

#[test]
fn check_prints_the_decision_as_one_json_object() {
    let run = askgate(&["check", "-"], Some(GRANTED_WRITE));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let decision: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(decision["decision"], "allow");
    assert_eq!(decision["policies"], serde_json::json!(["grants.held"]));
    assert_eq!(decision["approval"], Value::Null);
    assert_eq!(decision["errors"], serde_json::json!([]));
    let questions: Vec<&str> = decision["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["question"].as_str().unwrap())
        .collect();
    assert_eq!(questions, ["target", "unapproved"]);
    assert_eq!(decision["requests"][1]["resource"], "DesignProject::\"p1\"");
}

#[test]
fn check_reports_bad_call_input_with_its_field_and_exit_code_2() {
    let bad = GRANTED_WRITE.replace("\"files\"", "\"Files\"");
    let run = askgate(&["check"], Some(&bad));
    assert_eq!(run.code, 2);
    let error: Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(error["error"]["field"], "call.input.arguments.Files");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("files"), "{message}");
}

#[test]
fn check_reports_malformed_scenarios_and_unreadable_files() {
    let run = askgate(&["check", "-"], Some("{not json"));
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.contains("\"field\":\"scenario\""),
        "{}",
        run.stdout
    );
    let run = askgate(&["check", "/nonexistent/scenario.json"], None);
    assert_eq!(run.code, 4);
    let bad_time = GRANTED_WRITE.replace("2026-11-30T10:00:00Z", "yesterday");
    let run = askgate(&["check", "-"], Some(&bad_time));
    assert_eq!(run.code, 2);
    assert!(run.stdout.contains("\"field\":\"now\""), "{}", run.stdout);
}

#[test]
fn validate_accepts_the_shipped_policies_and_examples() {
    let run = askgate(&["validate"], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("ok: "), "{}", run.stdout);
    let run = askgate(&["validate", "--policies", "policies/examples"], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// Issue 38 §5: a `@gate` that reads a fact known only after the upstream is asked loads (exit
/// 0) with a warning naming the policy, its line and the fact; the shipped set has none.
#[test]
fn i38_validate_warns_of_a_gate_that_reads_upstream_facts() {
    let run = askgate(&["validate"], None);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let dir = managed_dir(&[(
        "budget.cedar",
        "@id(\"managed.budget-gate\")\n@reason(\"the project is full\")\n@gate\nforbid (principal, action == Action::\"project_write\", resource)\nwhen { context.projects.knowledge_size > 1000 };\n",
    )]);
    let path = dir.path().to_string_lossy().to_string();
    let run = askgate(&["validate", "--policies", &path], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected = format!(
        "{}:1: policy `managed.budget-gate`: warning: @gate reads context.projects.knowledge_size",
        dir.path().join("budget.cedar").display()
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(run.stderr.contains("never act as a gate"), "{}", run.stderr);
}

fn managed_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write policy");
    }
    dir
}

#[test]
fn validate_rejects_an_unknown_attribute_with_file_and_line() {
    let dir = managed_dir(&[(
        "bad.cedar",
        "// a managed rule\n@id(\"managed.typo\")\n@reason(\"typo\")\nforbid (principal, action == Action::\"write_files\", resource)\nwhen { context.design.projectid == \"p1\" };\n",
    )]);
    let path = dir.path().to_string_lossy().to_string();
    let run = askgate(&["validate", "--policies", &path], None);
    assert_eq!(run.code, 1);
    let expected = format!(
        "{}:5: policy `managed.typo`:",
        dir.path().join("bad.cedar").display()
    );
    assert!(run.stderr.contains(&expected), "{}", run.stderr);
    assert!(run.stderr.contains("projectid"), "{}", run.stderr);
}

#[test]
fn validate_reports_every_problem_of_every_file() {
    let dir = managed_dir(&[
        ("a-syntax.cedar", "@id(\"x\")\n@reason(\"r\")\npermit (principal, action, resource)\nwhen { context. };\n"),
        ("b-no-id.cedar", "@reason(\"r\")\npermit (principal, action in Action::\"Projects\", resource);\n"),
        ("c-duplicate.cedar", "@id(\"projects.allowed\")\n@reason(\"r\")\npermit (principal, action in Action::\"Projects\", resource);\n"),
        ("d-bad-ask.cedar", "@id(\"managed.ask\")\n@reason(\"r\")\n@ask(\"forever\")\nforbid (principal, action in Action::\"Projects\", resource);\n"),
    ]);
    let path = dir.path().to_string_lossy().to_string();
    let run = askgate(&["validate", "--policies", &path], None);
    assert_eq!(run.code, 1);
    for needle in [
        "a-syntax.cedar:4:",
        "b-no-id.cedar:1: policy has no @id",
        "duplicate @id `projects.allowed`",
        "@ask(`forever`) is not an approval kind",
    ] {
        assert!(
            run.stderr.contains(needle),
            "missing `{needle}` in:\n{}",
            run.stderr
        );
    }
    assert!(run.stderr.contains("4 problem(s)"), "{}", run.stderr);
}

#[test]
fn test_runs_the_corpus_and_prints_the_totals() {
    let run = askgate(&["test", "tests/scenarios"], None);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let last = run.stdout.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "{last}");
}

#[test]
fn test_prints_a_readable_diff_per_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wrong = GRANTED_WRITE.replacen('{', "{\"name\": \"wrong expectation\", \"expect\": {\"decision\": \"deny\", \"approval\": \"grant\"},", 1);
    std::fs::write(dir.path().join("wrong.json"), wrong).unwrap();
    std::fs::write(dir.path().join("broken.json"), "{").unwrap();
    let run = askgate(&["test", &dir.path().to_string_lossy()], None);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("FAIL wrong expectation"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("decision\n    - expected: deny\n    + actual:   allow"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("approval\n    - expected: grant\n    + actual:   null"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("invalid scenario"), "{}", run.stdout);
    assert!(
        run.stdout.ends_with("0 passed, 2 failed\n"),
        "{}",
        run.stdout
    );
}

/// The writing end of a pipe whose only reader has exited, as `askgate … | head` once `head`
/// is done: every write to it fails with `EPIPE`.
pub fn closed_pipe() -> Stdio {
    let mut reader = Command::new("true")
        .stdin(Stdio::piped())
        .spawn()
        .expect("true runs");
    let writer = reader.stdin.take().expect("its stdin");
    reader.wait().expect("true exits");
    Stdio::from(writer)
}

fn with_stdout_closed(command: &mut Command) -> Output {
    command
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .expect("askgate runs")
}

fn assert_quiet_on_a_closed_pipe(output: &Output) {
    assert_eq!(output.status.code(), Some(141), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "no panic, nothing said"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_list_into_a_closed_pipe_exits_quietly() {
    let gateway = Gateway::start().await;
    gateway.record_consent().await;
    let asked = gateway
        .design(
            &main_session("pipe"),
            "finalize_plan",
            json!({"project_id": "p1", "scope": "paths", "writes": ["a.html"]}),
        )
        .await;
    assert_eq!(asked.decision(), "ask");
    for extra in [None, Some("--json")] {
        let output = with_stdout_closed(
            Command::new(env!("CARGO_BIN_EXE_askgate"))
                .args(["approvals", "list", "--server", &gateway.url])
                .args(["--token", APPROVER])
                .args(extra),
        );
        assert_quiet_on_a_closed_pipe(&output);
    }
}

#[test]
fn every_printing_subcommand_exits_quietly_on_a_closed_pipe() {
    let scenario = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(scenario.path(), GRANTED_WRITE).unwrap();
    let scenario = scenario.path().to_string_lossy().into_owned();
    for args in [
        vec!["check", scenario.as_str()],
        vec!["validate"],
        vec!["test", "tests/scenarios"],
        vec!["--help"],
    ] {
        let output = with_stdout_closed(Command::new(env!("CARGO_BIN_EXE_askgate")).args(&args));
        if args == ["--help"] {
            // clap prints help itself and ignores the closed pipe: no panic either.
            assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));
            continue;
        }
        assert_quiet_on_a_closed_pipe(&output);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_approvals_cli_reads_its_token_from_askgate_approver_token_only() {
    let gateway = Gateway::start().await;
    let list = |variable: &'static str, token: &'static str| {
        let server = gateway.url.clone();
        async move {
            tokio::process::Command::new(env!("CARGO_BIN_EXE_askgate"))
                .args(["approvals", "list", "--server", &server])
                .env_remove("ASKGATE_TOKEN")
                .env_remove("ASKGATE_AGENT_TOKEN")
                .env_remove("ASKGATE_APPROVER_TOKEN")
                .env(variable, token)
                .output()
                .await
                .expect("askgate runs")
        }
    };
    let approver = list("ASKGATE_APPROVER_TOKEN", APPROVER).await;
    assert!(approver.status.success(), "{approver:?}");
    assert!(String::from_utf8_lossy(&approver.stdout).contains("nothing is waiting"));
    for (variable, token) in [("ASKGATE_TOKEN", APPROVER), ("ASKGATE_AGENT_TOKEN", AGENT)] {
        let refused = list(variable, token).await;
        assert_eq!(refused.status.code(), Some(2), "{variable}: {refused:?}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("an approver token is required (--token or ASKGATE_APPROVER_TOKEN)"),
            "{stderr}"
        );
    }
}
