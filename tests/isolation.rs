//! Policy is data: deleting one baseline rule changes the decisions it owns and no others.
//! For every baseline policy, the corpus is decided again without it; any scenario whose
//! outcome, approval or determining policies change must have named that policy.

use std::collections::BTreeMap;

use askgate::authz::CallFacts;
use askgate::authz::{decide, Decision, PolicySnapshot};
use askgate::scenario::run::gather;

use crate::support::{baseline_snapshot, corpus_files, load_scenario, snapshot_without};

fn corpus_facts() -> Vec<(String, CallFacts)> {
    corpus_files()
        .iter()
        .filter_map(|file| {
            let scenario = load_scenario(file);
            if !scenario.policy_files.is_empty() {
                return None;
            }
            let facts = gather(&scenario).expect("valid scenario").ok()?;
            Some((file.display().to_string(), facts))
        })
        .collect()
}

fn summary(decision: &Decision) -> (String, Option<String>, Vec<String>) {
    (
        decision.decision.as_str().to_string(),
        decision
            .approval
            .as_ref()
            .map(|approval| approval.kind().as_str().to_string()),
        decision.policies.clone(),
    )
}

fn owned(decision: &Decision, policy: &str) -> bool {
    decision
        .policies
        .iter()
        .chain(&decision.target_policies)
        .any(|id| id == policy)
}

fn baseline_ids(snapshot: &PolicySnapshot) -> Vec<String> {
    let mut ids: Vec<String> = snapshot
        .policies()
        .policies()
        .filter_map(|policy| snapshot.meta(policy.id()).map(|meta| meta.id.clone()))
        .collect();
    ids.sort();
    ids
}

#[test]
fn deleting_a_rule_changes_only_the_decisions_it_owns() {
    let baseline = baseline_snapshot();
    let facts = corpus_facts();
    let decisions: Vec<Decision> = facts
        .iter()
        .map(|(_, facts)| decide(facts, &baseline))
        .collect();
    let mut changed_by: BTreeMap<String, usize> = BTreeMap::new();
    let mut violations = Vec::new();
    for policy in baseline_ids(&baseline) {
        let reduced = snapshot_without(&policy);
        assert_eq!(
            reduced.len() + 1,
            baseline.len(),
            "`{policy}` was removed exactly"
        );
        for ((file, facts), before) in facts.iter().zip(&decisions) {
            let after = decide(facts, &reduced);
            if summary(&after) == summary(before) {
                continue;
            }
            *changed_by.entry(policy.clone()).or_default() += 1;
            if !owned(before, &policy) {
                violations.push(format!(
                    "{file}: removing `{policy}` changed {:?} → {:?}",
                    summary(before),
                    summary(&after)
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
    // Every rule the corpus exercises must matter somewhere (no dead rules in the corpus).
    assert!(
        changed_by.len() > 30,
        "only {} rules changed any decision: {changed_by:?}",
        changed_by.len()
    );
}

#[test]
fn deleting_the_grant_allow_rule_turns_exactly_grant_allows_into_denies() {
    let baseline = baseline_snapshot();
    let reduced = snapshot_without("grants.held");
    for (file, facts) in corpus_facts() {
        let before = decide(&facts, &baseline);
        let after = decide(&facts, &reduced);
        if before.policies == ["grants.held"] {
            assert_eq!(after.decision.as_str(), "deny", "{file}");
            assert_eq!(after.reason, "no policy permits this call", "{file}");
        } else if before.policies.iter().any(|id| id == "grants.held") {
            // Another permit (e.g. bypass) also allowed it: still allowed, one id fewer.
            assert_eq!(after.decision, before.decision, "{file}");
            assert!(
                !after.policies.iter().any(|id| id == "grants.held"),
                "{file}"
            );
        } else {
            assert_eq!(summary(&after), summary(&before), "{file}");
        }
    }
}

/// A `@gate` stops a call before any observation, so its condition may read only what is known
/// without one: the environment, the verified caller, the session, the attachment, the
/// configured credential and where a `local_path` lies on askgate's own file system (N1).
#[test]
fn gates_read_only_facts_known_before_any_observation() {
    let local = [
        "context.environment.",
        "context.caller.",
        "context.session.",
        "context.projects.attached",
        "context.projects.credential",
        "context.projects.local_path_place",
    ];
    let mut gates = 0;
    for source in askgate::authz::baseline::policy_sources() {
        for policy in source.text.split("\n@gate\n").skip(1) {
            gates += 1;
            let body = policy.split(';').next().unwrap_or_default();
            for (index, _) in body.match_indices("context.") {
                let rest = &body[index..];
                assert!(
                    local.iter().any(|prefix| rest.starts_with(prefix)),
                    "{}: a @gate reads `{}`",
                    source.name,
                    rest.split_whitespace().next().unwrap_or_default()
                );
            }
        }
    }
    assert_eq!(
        gates, 21,
        "the nine availability gates, the five local_path gates, the three MCP attestation gates, the three caller-claim gates and the rate limit are gates"
    );
}
