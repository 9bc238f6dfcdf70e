//! The policy-change fixtures of `tests/fixtures/diff/` (issue 21): each is a realistic pull
//! request to the policies — the shipped baseline edited (`baseline`: `edit` replacements and
//! `remove`d policy ids, compared `--raw`) or a managed directory over it (`managed` files, or
//! `managed_from` a repository directory) — with the exit code `askgate diff` must give, the
//! findings it must report and the categories it must not. Every counted finding's scenario is
//! checked with `askgate check` on both sides and must show the finding's change. A fixture
//! with `replay` also decides that committed log on both sides, and `expect.replay` gives how
//! many of its decisions change, by kind. `flags` are added to `diff`'s command line (the
//! search's bounds).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use super::{askgate, ensure_cvc5, repo};
use crate::support::remove_policy;

/// One side of a fixture on disk, and the flags `diff` and `check` take for it.
struct Side {
    dir: PathBuf,
    raw: bool,
}

fn materialize(spec: &Value, root: &Path, name: &str) -> Side {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(baseline) = spec.get("baseline") {
        for entry in std::fs::read_dir(repo("policies")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "cedar") {
                std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
            }
        }
        for edit in baseline["edit"].as_array().into_iter().flatten() {
            let file = dir.join(edit["file"].as_str().unwrap());
            let text = std::fs::read_to_string(&file).unwrap();
            let replace = edit["replace"].as_str().unwrap();
            assert!(
                text.contains(replace),
                "`{replace}` is not in {}",
                file.display()
            );
            std::fs::write(
                &file,
                text.replacen(replace, edit["with"].as_str().unwrap(), 1),
            )
            .unwrap();
        }
        for id in baseline["remove"].as_array().into_iter().flatten() {
            let id = id.as_str().unwrap();
            let mut removed = false;
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap();
                let without = remove_policy(&text, id);
                removed |= without != text;
                std::fs::write(&path, without).unwrap();
            }
            assert!(removed, "no policy `{id}` in the baseline");
        }
        return Side { dir, raw: true };
    }
    if let Some(from) = spec.get("managed_from") {
        return Side {
            dir: PathBuf::from(repo(from.as_str().unwrap())),
            raw: false,
        };
    }
    for (file, text) in spec["managed"].as_object().unwrap() {
        std::fs::write(dir.join(file), text.as_str().unwrap()).unwrap();
    }
    Side { dir, raw: false }
}

fn check_flags(side: &Side) -> Vec<String> {
    let dir = side.dir.display().to_string();
    if side.raw {
        vec!["--baseline".into(), dir]
    } else {
        vec!["--policies".into(), dir]
    }
}

/// `check`'s answer as the report labels answers (`ask (batch)`), or its error.
fn check(file: &str, side: &Side) -> String {
    let mut args = vec!["check", file];
    let flags = check_flags(side);
    args.extend(flags.iter().map(String::as_str));
    let run = askgate(&args);
    let decided: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    match (
        decided["decision"].as_str(),
        decided["approval"]["kind"].as_str(),
    ) {
        (Some("ask"), Some(kind)) => format!("ask ({kind})"),
        (Some(decision), _) => decision.to_string(),
        _ => format!("exit {}: {}", run.code, run.stdout),
    }
}

/// What is wrong with one fixture's run (empty: right), and how long `diff` took.
fn run_fixture(path: &Path) -> (Vec<String>, f64) {
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let root = tempfile::tempdir().unwrap();
    let before = materialize(&fixture["before"], root.path(), "before");
    let after = materialize(&fixture["after"], root.path(), "after");
    let scenarios = root.path().join("scenarios");
    let (b, a, s) = (
        before.dir.display().to_string(),
        after.dir.display().to_string(),
        scenarios.display().to_string(),
    );
    let mut args = vec![
        "diff",
        b.as_str(),
        a.as_str(),
        "--format",
        "json",
        "--scenarios",
        s.as_str(),
    ];
    if before.raw {
        args.push("--raw");
    }
    // A fixture may replay a committed log on both sides (`replay`: a path in the repository).
    let replay = fixture["replay"].as_str().map(repo);
    if let Some(log) = &replay {
        args.extend(["--replay", log.as_str()]);
    }
    // A fixture may set the search's bounds (`flags`: e.g. `--question-timeout`).
    let flags: Vec<&str> = fixture["flags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    args.extend(flags);
    let started = Instant::now();
    let run = askgate(&args);
    let seconds = started.elapsed().as_secs_f64();
    let mut wrong = Vec::new();
    let Ok(report) = serde_json::from_str::<Value>(&run.stdout) else {
        return (
            vec![format!(
                "no JSON report (exit {}): {}",
                run.code, run.stderr
            )],
            seconds,
        );
    };
    let expect = &fixture["expect"];
    if i64::from(run.code) != expect["exit"].as_i64().unwrap() {
        wrong.push(format!("exit {} (expected {})", run.code, expect["exit"]));
    }
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    for wanted in expect["findings"].as_array().into_iter().flatten() {
        let matches = |finding: &&Value| {
            let label = |key: &str| finding[key].as_str().unwrap_or_default().to_string();
            finding["category"] == wanted["category"]
                && finding["action"] == wanted["action"]
                && ["before", "after"].iter().all(|key| {
                    wanted[*key]
                        .as_str()
                        .is_none_or(|want| label(key).split(' ').next() == Some(want))
                })
        };
        if !findings.iter().any(|finding| matches(&finding)) {
            wrong.push(format!("missing finding {wanted}"));
        }
    }
    // The environments diff must say it could not settle (issue 38: never passed silently).
    let unsettled = report["unsettled"].as_array().cloned().unwrap_or_default();
    for action in expect["unsettled"].as_array().into_iter().flatten() {
        let action = action.as_str().unwrap();
        let named = unsettled.iter().any(|entry| {
            entry["environment"]
                .as_str()
                .is_some_and(|label| label.contains(action))
                && entry["open"]
                    .as_array()
                    .is_some_and(|open| !open.is_empty())
                && entry["reason"]
                    .as_str()
                    .is_some_and(|reason| !reason.is_empty())
        });
        if !named {
            wrong.push(format!("{action} not reported unsettled: {unsettled:?}"));
        }
    }
    if report["proven"] != Value::Bool(unsettled.is_empty()) {
        wrong.push(format!(
            "proven is {} with {} unsettled",
            report["proven"],
            unsettled.len()
        ));
    }
    // How many replayed decisions changed, by kind (issue 38 §3: a rename is shown, not counted).
    for (kind, count) in expect["replay"].as_object().into_iter().flatten() {
        let shown = &report["replay"]["kinds"][kind];
        if shown != count {
            wrong.push(format!("replay: {shown} {kind} (expected {count})"));
        }
    }
    for category in expect["none"].as_array().into_iter().flatten() {
        let category = category.as_str().unwrap();
        let count = report["counts"][category].as_u64().unwrap_or(0);
        if count > 0 {
            let shown: Vec<String> = findings
                .iter()
                .filter(|finding| finding["category"] == category)
                .map(|finding| {
                    format!(
                        "{} {} → {}",
                        finding["action"], finding["before"], finding["after"]
                    )
                })
                .collect();
            wrong.push(format!("{count} {category}: {}", shown.join("; ")));
        }
    }
    // Every counted finding reproduces with `askgate check` (files `NNN-…`, findings first).
    let files: Vec<PathBuf> = std::fs::read_dir(&scenarios)
        .map(|dir| dir.map(|entry| entry.unwrap().path()).collect())
        .unwrap_or_default();
    for (index, finding) in findings.iter().enumerate() {
        let prefix = format!("{:03}-", index + 1);
        let Some(file) = files.iter().find(|file| {
            file.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(&prefix))
        }) else {
            wrong.push(format!("{} has no scenario file", finding["action"]));
            continue;
        };
        let file = file.display().to_string();
        let shown = (check(&file, &before), check(&file, &after));
        let reported = (
            finding["check_before"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            finding["check_after"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        if shown != reported || shown.0 == shown.1 || finding["reproduces"] != true {
            wrong.push(format!(
                "{} does not reproduce: check shows {shown:?}, reported {reported:?}",
                finding["action"]
            ));
        }
    }
    (wrong, seconds)
}

#[test]
fn i21_policy_change_fixtures_exit_as_expected_and_every_finding_reproduces() {
    ensure_cvc5();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(repo("tests/fixtures/diff"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    let mut right = 0;
    let mut failures = Vec::new();
    for path in &paths {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let (wrong, seconds) = run_fixture(path);
        eprintln!(
            "{name:<36} {seconds:>6.2}s  {}",
            if wrong.is_empty() { "right" } else { "WRONG" }
        );
        if wrong.is_empty() {
            right += 1;
        } else {
            failures.push(format!("{name}:\n  {}", wrong.join("\n  ")));
        }
    }
    eprintln!("{right} of {} right", paths.len());
    assert!(
        failures.is_empty(),
        "{right} of {} right\n{}",
        paths.len(),
        failures.join("\n")
    );
}
