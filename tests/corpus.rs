//! The scenario corpus: every file meets its `expect` block, its full decision matches the
//! insta snapshot in the top-level `snapshots/` directory, and a decision answered from the
//! snapshot's answer cache is the decision Cedar gives. The snapshots hold a placeholder for
//! the policy set's hash (a comment edit in a `.cedar` file rewrites none of them);
//! `a_decision_names_the_hash_of_its_policy_set` checks the hash itself.

use askgate::authz::{baseline, Decision};
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

/// What the snapshots hold in place of the policy set's hash.
const POLICY_HASH: &str = "[policy set hash]";

/// A decision names the hash of the set that decided it: `sha256:` and 16 hex digits, the
/// loaded snapshot's own, and a different one once any source's text changes (even a comment).
#[test]
fn a_decision_names_the_hash_of_its_policy_set() {
    let file = corpus_files().into_iter().next().expect("a corpus file");
    let scenario = crate::support::load_scenario(&file);
    let sources = baseline::policy_sources();
    let snapshot = askgate::authz::PolicySnapshot::load(&baseline::schema_source(), &sources)
        .expect("the baseline loads");
    let decided =
        |sources: Vec<askgate::authz::Source>| match Suite::new(baseline::schema_source(), sources)
            .decide(&scenario)
        {
            Ok(ScenarioOutcome::Decided(decision)) => decision.snapshot,
            other => panic!("{}: not decided: {other:?}", file.display()),
        };
    let hash = decided(sources.clone());
    assert_eq!(hash, snapshot.hash());
    let digits = hash.strip_prefix("sha256:").expect("a sha256 hash");
    assert_eq!(digits.len(), 16, "{hash}");
    assert!(digits.chars().all(|c| c.is_ascii_hexdigit()), "{hash}");
    let mut commented = sources;
    commented[0].text.push_str("\n// a comment\n");
    assert_ne!(decided(commented), hash, "a comment edit is another set");
}

#[test]
fn every_decision_matches_its_snapshot() {
    let mut suite = Suite::new(baseline::schema_source(), baseline::policy_sources());
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_redaction(".snapshot", POLICY_HASH);
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

/// The corpus twice on the same snapshots: the second pass is answered from the cache (it
/// adds no answer), and every decision equals the first pass's.
#[test]
fn every_decision_from_the_cache_is_the_decision_cedar_gives() {
    let mut suite = Suite::new(baseline::schema_source(), baseline::policy_sources());
    let files = corpus_files();
    let decide = |suite: &mut Suite| -> Vec<Option<Decision>> {
        files
            .iter()
            .map(
                |file| match suite.decide(&crate::support::load_scenario(file)) {
                    Ok(ScenarioOutcome::Decided(decision)) => Some(*decision),
                    _ => None,
                },
            )
            .collect()
    };
    let first = decide(&mut suite);
    let cached = suite.cached_answers();
    let second = decide(&mut suite);
    // Not empty: an unused cache would pass the equality below trivially.
    assert!(cached > 300, "only {cached} answers cached");
    assert_eq!(
        suite.cached_answers(),
        cached,
        "the second pass asked Cedar"
    );
    let mut decided = 0;
    for ((file, first), second) in files.iter().zip(first).zip(second) {
        let (Some(first), Some(second)) = (first, second) else {
            continue;
        };
        decided += 1;
        assert_eq!(first, second, "{}", file.display());
    }
    assert!(decided > 600, "only {decided} decisions");
}
