//! The `askgate` binary end to end: exit codes, stdout and stderr of `check`, `validate` and
//! `test` on real files.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

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
