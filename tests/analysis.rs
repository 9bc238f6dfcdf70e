//! `askgate diff` and `validate --analyze` end to end (issue 13): the real binary, real
//! policy directories, the real `cvc5`; every counterexample scenario is re-checked with
//! `askgate check` against both sides.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

use serde_json::Value;

use crate::support::remove_policy;

mod approving;
mod fixtures;

/// Installs `cvc5` on first use when running as root (as CI does); otherwise says what to
/// install. Never skips: these tests need the solver.
fn ensure_cvc5() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        if solver_runs() {
            return;
        }
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|output| output.stdout.starts_with(b"0"));
        assert!(
            root,
            "these tests need the SMT solver `cvc5`: install it (`apt-get install cvc5`)"
        );
        let installed = Command::new("sh")
            .args(["-c", "apt-get update -qq && apt-get install -y -qq cvc5"])
            .status()
            .is_ok_and(|status| status.success());
        assert!(
            installed && solver_runs(),
            "`apt-get install cvc5` failed: install `cvc5`"
        );
    });
}

fn solver_runs() -> bool {
    Command::new("cvc5")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn askgate(args: &[&str]) -> Run {
    askgate_with(args, &[])
}

fn askgate_with(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_askgate"));
    command.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("askgate runs");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .display()
        .to_string()
}

/// A directory holding `files` (name, text).
fn policy_dir(root: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

/// The shipped baseline without one policy, as a complete directory (for `--raw`).
fn baseline_without(root: &Path, name: &str, policy_id: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(repo("policies")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "cedar") {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(
                dir.join(path.file_name().unwrap()),
                remove_policy(&text, policy_id),
            )
            .unwrap();
        }
    }
    dir
}

fn diff_json(args: &[&str]) -> (i32, Value) {
    ensure_cvc5();
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let run = askgate(&all);
    let report = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("json report ({error}): {}\n{}", run.stdout, run.stderr));
    (run.code, report)
}

fn findings<'a>(report: &'a Value, category: &str, action: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|finding| finding["category"] == category && finding["action"] == action)
        .collect()
}

/// `askgate check` of a finding's scenario file against one side's flags: the decision.
fn check(scenario: &Value, root: &Path, side: &[&str]) -> String {
    let file = root.join(format!("check-{}.json", rand_suffix()));
    std::fs::write(&file, serde_json::to_string_pretty(scenario).unwrap()).unwrap();
    let mut args = vec!["check", file.to_str().unwrap()];
    args.extend_from_slice(side);
    let run = askgate(&args);
    assert_eq!(run.code, 0, "check: {}\n{}", run.stdout, run.stderr);
    let decision: Value = serde_json::from_str(&run.stdout).unwrap();
    decision["decision"].as_str().unwrap().to_string()
}

fn rand_suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The finding's scenario reproduces through `check` on both sides, as `before → after`.
fn assert_reproduces(
    finding: &Value,
    root: &Path,
    before: &[&str],
    after: &[&str],
) -> (String, String) {
    assert_eq!(finding["reproduces"], true, "{finding:#}");
    let scenario = &finding["scenario"];
    let shown = (check(scenario, root, before), check(scenario, root, after));
    // The report labels an ask with its kind (`ask (batch)`); `check` gives the decision.
    let outcome = |key: &str| {
        finding[key]
            .as_str()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(shown.0, outcome("check_before"));
    assert_eq!(shown.1, outcome("check_after"));
    shown
}

const ASK_DELETE: &str = r#"@id("admin.ask-project-delete")
@ask("batch")
@reason("approval required for project_delete")
forbid (principal, action == Action::"project_delete", resource)
unless { context.approvals.contains("batch") };
"#;

#[test]
fn i13_baseline_against_itself_finds_nothing() {
    let root = tempfile::tempdir().unwrap();
    let empty = policy_dir(root.path(), "empty", &[]);
    let (code, report) = diff_json(&[empty.to_str().unwrap(), empty.to_str().unwrap()]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["environments"], 53);
    assert_eq!(report["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn i13_examples_added_exit_0_and_only_stricter() {
    let root = tempfile::tempdir().unwrap();
    let empty = policy_dir(root.path(), "empty", &[]);
    let (code, report) = diff_json(&[empty.to_str().unwrap(), &repo("policies/examples")]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["counts"]["newly_allowed"], 0);
    assert_eq!(report["counts"]["newly_askable"], 0);
    let stricter = findings(&report, "newly_stricter", "write_target");
    assert!(!stricter.is_empty(), "{report:#}");
    let (before, after) = assert_reproduces(
        stricter[0],
        root.path(),
        &[],
        &["--policies", "policies/examples"],
    );
    assert_eq!((before.as_str(), after.as_str()), ("allow", "ask"));
}

/// Issue 21 §2: a difference no call can show does not set exit 5. Removing
/// `targets.reserved-path` differs only on Cedar requests whose `lowercase` starts `.claude/`
/// without the `.claude` segment; every real such path has it, and `targets.reserved-segment`
/// still blocks it.
#[test]
fn i13_reserved_path_removed_is_no_widening_of_real_calls() {
    let root = tempfile::tempdir().unwrap();
    let after = baseline_without(root.path(), "after", "targets.reserved-path");
    let (code, report) = diff_json(&[&repo("policies"), after.to_str().unwrap(), "--raw"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["counts"]["newly_allowed"], 0, "{report:#}");
    for only in report["cedar_only"].as_array().unwrap() {
        assert_eq!(only["reproduces"], false, "{only:#}");
    }
}

#[test]
fn i13_reserved_segment_removed_counterexample_checks_allow_after_not_before() {
    let root = tempfile::tempdir().unwrap();
    let after = baseline_without(root.path(), "after", "targets.reserved-segment");
    let (code, report) = diff_json(&[&repo("policies"), after.to_str().unwrap(), "--raw"]);
    assert_eq!(code, 5, "{report:#}");
    let widened = findings(&report, "newly_allowed", "write_target");
    let after_flags = ["--baseline", after.to_str().unwrap()];
    let (before, after) = assert_reproduces(widened[0], root.path(), &[], &after_flags);
    assert_ne!(before, "allow");
    assert_eq!(after, "allow");
}

#[test]
fn i13_rule_widening_only_under_bypass_is_newly_allowed() {
    let root = tempfile::tempdir().unwrap();
    let before = policy_dir(root.path(), "before", &[("ask.cedar", ASK_DELETE)]);
    let lifted = ASK_DELETE.replace(
        r#"context.approvals.contains("batch")"#,
        r#"context.approvals.contains("batch") || context.session.mode == "bypassPermissions""#,
    );
    let after = policy_dir(root.path(), "after", &[("ask.cedar", &lifted)]);
    let (code, report) = diff_json(&[before.to_str().unwrap(), after.to_str().unwrap()]);
    assert_eq!(code, 5, "{report:#}");
    // One finding per transition class (ask → allow, and deny → allow where a mode or a
    // session without a prompt denied the ask): each lifted by the new alternative.
    let widened = findings(&report, "newly_allowed", "project_delete");
    assert!(!widened.is_empty(), "{report:#}");
    for finding in &widened {
        assert_eq!(
            finding["request"]["context"]["session"]["mode"],
            "bypassPermissions"
        );
    }
    let widened: Vec<&Value> = widened
        .into_iter()
        .filter(|finding| finding["before"].as_str().unwrap().starts_with("ask"))
        .collect();
    assert_eq!(widened.len(), 1, "{report:#}");
    let (b, a) = assert_reproduces(
        widened[0],
        root.path(),
        &["--policies", before.to_str().unwrap()],
        &["--policies", after.to_str().unwrap()],
    );
    assert_eq!((b.as_str(), a.as_str()), ("ask", "allow"));
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|finding| finding["action"] == "project_delete"),
        "only project_delete widens"
    );
}

#[test]
fn i13_rule_widening_only_for_subagents_is_newly_allowed() {
    let root = tempfile::tempdir().unwrap();
    let before = policy_dir(root.path(), "before", &[("ask.cedar", ASK_DELETE)]);
    let lifted = ASK_DELETE.replace(
        r#"context.approvals.contains("batch")"#,
        r#"context.approvals.contains("batch") || context.session.agent == "subagent""#,
    );
    let after = policy_dir(root.path(), "after", &[("ask.cedar", &lifted)]);
    let (code, report) = diff_json(&[before.to_str().unwrap(), after.to_str().unwrap()]);
    assert_eq!(code, 5, "{report:#}");
    // One finding per transition class (ask → allow, and deny → allow where a mode or a
    // session without a prompt denied the ask): each lifted by the new alternative.
    let widened = findings(&report, "newly_allowed", "project_delete");
    assert!(!widened.is_empty(), "{report:#}");
    for finding in &widened {
        assert_eq!(
            finding["request"]["context"]["session"]["agent"],
            "subagent"
        );
    }
    let widened: Vec<&Value> = widened
        .into_iter()
        .filter(|finding| finding["before"].as_str().unwrap().starts_with("ask"))
        .collect();
    assert_eq!(widened.len(), 1, "{report:#}");
    let (b, a) = assert_reproduces(
        widened[0],
        root.path(),
        &["--policies", before.to_str().unwrap()],
        &["--policies", after.to_str().unwrap()],
    );
    assert_eq!(a, "allow");
    assert_ne!(b, "allow");
}

#[test]
fn i13_deny_turned_into_ask_is_newly_askable() {
    let root = tempfile::tempdir().unwrap();
    let deny = r#"@id("admin.no-project-delete")
@reason("project_delete is not allowed")
forbid (principal, action == Action::"project_delete", resource);
"#;
    let before = policy_dir(root.path(), "before", &[("rule.cedar", deny)]);
    let after = policy_dir(root.path(), "after", &[("rule.cedar", ASK_DELETE)]);
    let (code, report) = diff_json(&[before.to_str().unwrap(), after.to_str().unwrap()]);
    assert_eq!(code, 5, "{report:#}");
    assert_eq!(report["counts"]["newly_allowed"], 0, "{report:#}");
    let askable = findings(&report, "newly_askable", "project_delete");
    assert_eq!(askable.len(), 1, "{report:#}");
    let (b, a) = assert_reproduces(
        askable[0],
        root.path(),
        &["--policies", before.to_str().unwrap()],
        &["--policies", after.to_str().unwrap()],
    );
    assert_eq!((b.as_str(), a.as_str()), ("deny", "ask"));
}

#[test]
fn i13_diff_writes_scenario_files_and_adds_the_replay() {
    let root = tempfile::tempdir().unwrap();
    let empty = policy_dir(root.path(), "empty", &[]);
    let scenarios = root.path().join("scenarios");
    let log = root.path().join("log");
    std::fs::create_dir_all(&log).unwrap();
    ensure_cvc5();
    let run = askgate(&[
        "diff",
        empty.to_str().unwrap(),
        &repo("policies/examples"),
        "--scenarios",
        scenarios.to_str().unwrap(),
        "--replay",
        log.to_str().unwrap(),
    ]);
    // Issue 21 §3: a log with nothing to replay is an error, not "nothing changed".
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("holds no log file"), "{}", run.stderr);
    std::fs::copy(
        repo("tests/fixtures/log-v1/serve/decisions-000001.jsonl"),
        log.join("decisions-000001.jsonl"),
    )
    .unwrap();
    let run = askgate(&[
        "diff",
        empty.to_str().unwrap(),
        &repo("policies/examples"),
        "--scenarios",
        scenarios.to_str().unwrap(),
        "--replay",
        log.to_str().unwrap(),
    ]);
    assert!(run.stdout.contains("newly stricter: "), "{}", run.stdout);
    assert!(
        run.stdout.contains("replay on BEFORE and on AFTER: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("transitions (rows: BEFORE, columns: AFTER)"),
        "{}",
        run.stdout
    );
    let written = std::fs::read_dir(&scenarios).unwrap().count();
    assert!(written > 0);
    assert!(run.stdout.contains("askgate check "), "{}", run.stdout);
}

#[test]
fn i13_side_that_does_not_load_exits_3() {
    let root = tempfile::tempdir().unwrap();
    let empty = policy_dir(root.path(), "empty", &[]);
    let broken = policy_dir(
        root.path(),
        "broken",
        &[(
            "bad.cedar",
            "permit (principal, action, resource) when { context.nope };",
        )],
    );
    let run = askgate(&["diff", empty.to_str().unwrap(), broken.to_str().unwrap()]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("AFTER"), "{}", run.stderr);
}

#[test]
fn i13_missing_solver_exits_4_naming_cvc5() {
    let root = tempfile::tempdir().unwrap();
    let empty = policy_dir(root.path(), "empty", &[]);
    let missing = [("CVC5", "/nonexistent/cvc5")];
    let run = askgate_with(
        &["diff", empty.to_str().unwrap(), &repo("policies/examples")],
        &missing,
    );
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("`cvc5`"), "{}", run.stderr);
    assert!(
        run.stdout.is_empty(),
        "no report when the solver did not run: {}",
        run.stdout
    );
    let run = askgate_with(&["validate", "--analyze"], &missing);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("`cvc5`"), "{}", run.stderr);
}

#[test]
fn i13_validate_analyze_finds_an_erring_policy_and_a_dead_rule() {
    ensure_cvc5();
    let root = tempfile::tempdir().unwrap();
    let rules = r#"@id("admin.size-overflows")
@reason("content too large")
forbid (principal, action == Action::"project_write", resource)
when { context.projects.content_bytes * 100000000 > 5000000 };

@id("admin.never")
@reason("never applies")
forbid (principal, action in Action::"Projects", resource)
when { context.projects.n > 3 && context.projects.n < 2 };
"#;
    let dir = policy_dir(root.path(), "admin", &[("rules.cedar", rules)]);
    let run = askgate(&["validate", "--analyze", "--policies", dir.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("policy `admin.size-overflows` can fail to evaluate"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("policy `admin.never` never applies"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("policy `admin.never` can fail"),
        "{}",
        run.stdout
    );
}

/// A9 of findings/users-2026-12-04.md: a rule on an attestation value no call has (a typo, or
/// the empty string) is dead for every real call, and `validate --analyze` says so.
#[test]
fn a9_validate_analyze_finds_a_rule_on_an_attestation_no_call_has() {
    ensure_cvc5();
    let root = tempfile::tempdir().unwrap();
    let rules = r#"@id("t.attestation-typo")
@reason("typo")
forbid (principal, action == Action::"list_projects", resource)
when { context.session.attestation == "atested" };

@id("t.attestation-empty")
@reason("empty")
forbid (principal, action == Action::"list_projects", resource)
when { context.session.attestation == "" };

@id("t.attestation-real")
@reason("a real value")
forbid (principal, action == Action::"list_projects", resource)
when { context.session.attestation == "foreign" };
"#;
    let dir = policy_dir(root.path(), "admin", &[("rules.cedar", rules)]);
    let run = askgate(&["validate", "--analyze", "--policies", dir.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    for dead in ["t.attestation-typo", "t.attestation-empty"] {
        assert!(
            run.stdout
                .contains(&format!("policy `{dead}` never applies")),
            "{}",
            run.stdout
        );
    }
    assert!(
        !run.stdout.contains("policy `t.attestation-real`"),
        "{}",
        run.stdout
    );
}

#[test]
fn i13_validate_analyze_on_the_baseline_finds_the_knowledge_budget_overflow_and_one_rule_no_call_reaches(
) {
    ensure_cvc5();
    let run = askgate(&["validate", "--analyze"]);
    // README "validate --analyze": the knowledge-budget sum can overflow for an upstream that
    // reports a size near 2^63; the error denies the write (fail closed), which is intended.
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let findings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.contains(": policy `"))
        .collect();
    assert_eq!(findings.len(), 2, "{}", run.stdout);
    assert!(
        findings[0].contains("policy `projects.knowledge-budget` can fail to evaluate"),
        "{}",
        run.stdout
    );
    // Issue 21 §2: dead for every real call, not only for every Cedar request. The fail-closed
    // rule for operations outside the static table cannot apply to a validated call (such an
    // operation passes validation only when the catalog calls it read-only); it stays as a
    // guard in depth, and the analysis says so.
    assert!(
        findings[1].contains("policy `design.unknown-operation-asks` never applies"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("1 dead"), "{}", run.stdout);
}

/// The well-formedness conditions decide which requests the solver may propose; one that
/// could err would match nothing there, so none may.
#[test]
fn i13_question_and_well_formed_guards_never_error() {
    use askgate::analysis::environments::environments;
    use askgate::analysis::expr;
    use askgate::analysis::solver::{Expect, Question, Worker};
    use askgate::analysis::wellformed::{condition, Approvals, Literals};
    ensure_cvc5();
    let snapshot = askgate::authz::PolicySnapshot::load(
        &askgate::authz::baseline::schema_source(),
        &askgate::authz::baseline::policy_sources(),
    )
    .unwrap();
    let schema: cedar_policy::Schema = askgate::authz::baseline::schema_source()
        .text
        .parse()
        .unwrap();
    let literals = Literals::of(&[&snapshot]);
    let mut worker = Worker::start(askgate::analysis::solver::QUESTION_LIMIT).unwrap();
    let mut checked = 0;
    for environment in environments(&schema).iter() {
        for approvals in [Approvals::None, Approvals::Any] {
            let body = condition(environment, &literals, approvals).unwrap();
            let policy = expr::question("wellformed", body).unwrap();
            let question = Question::compile(&policy, environment, &schema, Expect::Proof).unwrap();
            let label = environment.label();
            let erring = worker.erring(&question, &label).unwrap();
            assert!(erring.is_none(), "the condition can err in {label}");
            checked += 1;
        }
    }
    assert_eq!(checked, 53 * 2);
}

/// A managed rule reserving `secrets/` by `like` patterns, at any depth or only at the top.
fn secrets_rule(any_depth: bool) -> String {
    let deeper = if any_depth {
        r#" || context.lowercase like "*/secrets/*""#
    } else {
        ""
    };
    format!(
        r#"@id("example.reserve-secrets")
@reason("reserved by policy: secrets/")
forbid (principal, action in Action::"DesignTarget", resource)
when {{ context.lowercase like "secrets/*"{deeper} || context.lowercase == "secrets" }};
"#
    )
}

/// A question that reads `like` goes to a solver process with the string options and a short
/// limit; when that process cannot answer (`unknown`), the question is asked again of a plain
/// process, and the change is still found. The stand-in solver answers `unknown` to every
/// question when started with the string options and is the real `cvc5` otherwise.
#[test]
fn i21_a_string_question_the_fast_solver_cannot_answer_is_asked_again() {
    use std::os::unix::fs::PermissionsExt;
    ensure_cvc5();
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("unknown-answers");
    let script = root.path().join("solver.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \" $* \" in\n  *\" --strings-fmf \"*)\n    \
             while IFS= read -r line; do\n      case \"$line\" in\n        \
             *'(check-sat)'*) echo unknown; echo unknown >> '{}';;\n      esac\n    \
             done;;\n  *) exec cvc5 \"$@\";;\nesac\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = policy_dir(
        root.path(),
        "before",
        &[("secrets.cedar", &secrets_rule(true))],
    );
    let after = policy_dir(
        root.path(),
        "after",
        &[("secrets.cedar", &secrets_rule(false))],
    );
    let (before, after) = (before.to_str().unwrap(), after.to_str().unwrap());
    let run = askgate_with(
        &["diff", before, after, "--format", "json"],
        &[("CVC5", script.to_str().unwrap())],
    );
    assert_eq!(run.code, 5, "{}\n{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let widened = findings(&report, "newly_allowed", "write_target");
    assert!(!widened.is_empty(), "{report:#}");
    let (shown_before, shown_after) = assert_reproduces(
        widened[0],
        root.path(),
        &["--policies", before],
        &["--policies", after],
    );
    assert_ne!(shown_before, "allow");
    assert_eq!(shown_after, "allow");
    let unknowns = std::fs::read_to_string(&marker).unwrap_or_default();
    assert!(
        unknowns.lines().count() > 0,
        "the string process was asked and answered unknown"
    );
}

/// A solver that answers `unknown` to every question (as cvc5 does when its limit a question
/// runs out), whatever its options.
fn unknown_solver(root: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = root.join("unknown-solver.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncase \" $* \" in\n  *\" --version \"*) exec cvc5 --version;;\nesac\n\
         while IFS= read -r line; do\n  case \"$line\" in\n    *'(check-sat)'*) echo unknown;;\n  \
         esac\ndone\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Issue 38 §1: an environment the solver cannot settle is never passed. With a solver that
/// answers `unknown`, the widening change of `secrets_rule` is not proven: exit 6, the
/// environment and its open transitions in the JSON report, the table and on stderr; with
/// `--accept-unsettled` the same report exits 0.
#[test]
fn i38_an_environment_the_solver_cannot_settle_exits_6_not_proven_in_every_format() {
    ensure_cvc5();
    let root = tempfile::tempdir().unwrap();
    let solver = unknown_solver(root.path());
    let before = policy_dir(
        root.path(),
        "before",
        &[("secrets.cedar", &secrets_rule(true))],
    );
    let after = policy_dir(
        root.path(),
        "after",
        &[("secrets.cedar", &secrets_rule(false))],
    );
    let (before, after) = (before.to_str().unwrap(), after.to_str().unwrap());
    let env = [("CVC5", solver.to_str().unwrap())];

    let json = askgate_with(&["diff", before, after, "--format", "json"], &env);
    assert_eq!(json.code, 6, "{}\n{}", json.stdout, json.stderr);
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["proven"], false, "{report:#}");
    let unsettled = report["unsettled"].as_array().unwrap();
    let targets: Vec<&Value> = unsettled
        .iter()
        .filter(|entry| {
            entry["environment"]
                .as_str()
                .unwrap()
                .contains("write_target")
        })
        .collect();
    assert!(!targets.is_empty(), "{report:#}");
    for entry in &targets {
        assert_eq!(entry["why"], "unknown", "{entry}");
        assert!(entry["reason"]
            .as_str()
            .unwrap()
            .contains("--question-timeout"));
        let open: Vec<&str> = entry["open"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(open.contains(&"deny → allow"), "{open:?}");
    }
    assert!(json.stderr.contains("not proven"), "{}", json.stderr);

    let table = askgate_with(&["diff", before, after], &env);
    assert_eq!(table.code, 6, "{}", table.stdout);
    assert!(table.stdout.contains("NOT PROVEN"), "{}", table.stdout);
    assert!(table.stdout.contains("write_target"), "{}", table.stdout);
    assert!(
        table.stdout.contains("unsettled environments: "),
        "{}",
        table.stdout
    );

    let accepted = askgate_with(&["diff", before, after, "--accept-unsettled"], &env);
    assert_eq!(accepted.code, 0, "{}", accepted.stdout);
    assert!(
        accepted.stdout.contains("NOT PROVEN"),
        "{}",
        accepted.stdout
    );
    assert!(accepted.stderr.contains("accepted by --accept-unsettled"));
}

/// Issue 38 §4: the whole run is bounded. With `--timeout 1` and a solver slower than that,
/// the environments left when it runs out are reported unsettled (`deadline`), exit 6, and
/// the run ends near the bound instead of going on.
#[test]
fn i38_the_run_bound_reports_what_it_cut_short_as_unsettled() {
    use std::os::unix::fs::PermissionsExt;
    ensure_cvc5();
    let root = tempfile::tempdir().unwrap();
    let slow = root.path().join("slow-solver.sh");
    std::fs::write(
        &slow,
        "#!/bin/sh\ncase \" $* \" in\n  *\" --version \"*) exec cvc5 --version;;\nesac\n\
         { while IFS= read -r line; do\n  case \"$line\" in *'(check-sat)'*) sleep 1;; esac\n  \
         printf '%s\\n' \"$line\"\ndone; } | cvc5 \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    let baseline = baseline_without(root.path(), "after", "modes.dont-ask");
    let before = repo("policies");
    let started = std::time::Instant::now();
    let run = askgate_with(
        &[
            "diff",
            before.as_str(),
            baseline.to_str().unwrap(),
            "--raw",
            "--format",
            "json",
            "--timeout",
            "1",
        ],
        &[("CVC5", slow.to_str().unwrap())],
    );
    let took = started.elapsed();
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|_| panic!("exit {}: {}\n{}", run.code, run.stdout, run.stderr));
    let cut: Vec<&Value> = report["unsettled"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["why"] == "deadline")
        .collect();
    assert!(!cut.is_empty(), "{report:#}");
    assert!(cut[0]["reason"].as_str().unwrap().contains("--timeout"));
    assert!(run.code == 6 || run.code == 5, "exit {}", run.code);
    // Far below the minutes the same change takes a question at a time through this solver.
    assert!(took < std::time::Duration::from_secs(60), "{took:?}");
}
