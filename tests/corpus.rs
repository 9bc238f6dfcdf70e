//! The scenario corpus: every file meets its `expect` block, and its full decision matches the
//! insta snapshot in the top-level `snapshots/` directory.

use askgate::authz::baseline;
use askgate::scenario::suite::Suite;
use askgate::scenario::ScenarioOutcome;

use crate::support::{corpus_files, snapshot_name};

#[test]
fn every_scenario_meets_its_expectation() {
    let files = corpus_files();
    assert!(
        files.len() >= 150,
        "the corpus has only {} scenarios",
        files.len()
    );
    let mut suite = Suite::new(baseline::schema_source(), baseline::policy_sources());
    let mut failures = Vec::new();
    for file in &files {
        let result = suite.run_file(file);
        if !result.passed() {
            let error = result.outcome.as_ref().err().cloned().unwrap_or_default();
            failures.push(format!(
                "{}: {error}\n  {}",
                file.display(),
                result.mismatches.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_decision_matches_its_snapshot() {
    let mut suite = Suite::new(baseline::schema_source(), baseline::policy_sources());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for file in corpus_files() {
            let scenario = crate::support::load_scenario(&file);
            let name = snapshot_name(&file);
            match suite.decide(&scenario) {
                Ok(ScenarioOutcome::Decided(decision)) => {
                    insta::assert_json_snapshot!(name, decision)
                }
                Ok(ScenarioOutcome::Refused(error)) => insta::assert_json_snapshot!(name, error),
                Err(error) => panic!("{}: {error}", file.display()),
            }
        }
    });
}
