//! The answer cache, proved against Cedar itself: every call is decided through one
//! snapshot's warm answer cache (`authz::decide`: slices, guard parts, projected keys) and by
//! the reference (`authz::decide::by_reference`: one `is_authorized` per question on the whole
//! policy set with the whole schema-shaped context), and the two must agree on the outcome,
//! the approval card, the determining policies and the target classes. The calls are the
//! scenario corpus and generated ones: raw paths mix `\`, `./`, `..`, rejected, invisible,
//! reserved and look-alike characters; every mode, main agents and subagents, consent, grants
//! verified or not, plans expiring around `now`; the policies are the baseline, the hardening
//! pack and the examples, so every target fact and both entity reads are in play.

use askgate::authz::CallFacts;
use askgate::authz::{baseline, decide, Decision, PolicySnapshot, Source};
use askgate::facts::{AgentKind, Environment, Mode, ServerGrants, Session};
use askgate::scenario::run::gather;
use askgate::scenario::suite::Suite;
use askgate::scenario::{Scenario, ScenarioCall, ScenarioPlan, ScenarioState};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};

use crate::support::{corpus_files, load_scenario};

const NOW: &str = "2026-11-30T10:00:00Z";
const FRAGMENTS: &[&str] = &[
    "a",
    "B",
    "index.html",
    "CLAUDE.md",
    ".claude",
    "claude~1.md",
    "secrets",
    ".",
    "..",
    "",
    " ",
    "x#y",
    "q?",
    "zero\u{200b}width",
    "CLAUDE.md\u{2060}",
    "ＣＬＡＵＤＥ.md",
    "СLAUDE.md",
];
const SEPARATORS: &[&str] = &["/", "\\", "/./", "//"];

const PROBING_RULES: &str = r#"
@id("test.secrets-segment")
@reason("a secrets segment outside a")
forbid (principal, action == Action::"write_target", resource)
when { context.segments.containsAny(["secrets", "b"]) && !context.segments.contains("a") };

@id("test.index-page")
@reason("the index page, or B under a folder")
forbid (principal, action == Action::"delete_target", resource)
when { context.lowercase == "index.html" || context.path like "*/B" || context.path == "a" };
"#;

fn snapshot() -> PolicySnapshot {
    let mut sources = baseline::policy_sources();
    sources.extend(baseline::example_sources());
    for name in ["invisible-characters", "reserved-look-alikes"] {
        let path = format!("policies/hardening/{name}.cedar");
        let text = std::fs::read_to_string(&path).expect("the hardening pack is readable");
        sources.push(Source::new(path, text));
    }
    // Rules that tell apart what the shipped ones treat alike: which probed segment a path
    // has, which constant it equals, which pattern it matches.
    sources.push(Source::new("tests/probes.cedar", PROBING_RULES.to_string()));
    PolicySnapshot::load(&baseline::schema_source(), &sources).expect("the policies load")
}

fn raw_path() -> impl Strategy<Value = String> {
    let fragment = proptest::sample::select(FRAGMENTS);
    let separator = proptest::sample::select(SEPARATORS);
    (
        fragment.clone(),
        proptest::collection::vec((separator, fragment), 0..3),
    )
        .prop_map(|(first, rest)| {
            let mut path = first.to_string();
            for (separator, fragment) in rest {
                path.push_str(separator);
                path.push_str(fragment);
            }
            path
        })
}

fn session() -> impl Strategy<Value = Session> {
    let modes = &[
        Mode::Default,
        Mode::AcceptEdits,
        Mode::Plan,
        Mode::Auto,
        Mode::DontAsk,
        Mode::BypassPermissions,
    ][..];
    (
        0u8..3,
        proptest::sample::select(modes),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(agent, mode, interactive, permission_hook, bypass_available)| Session {
                agent: if agent == 0 {
                    AgentKind::Main
                } else {
                    AgentKind::Subagent
                },
                // A subagent named or not.
                agent_id: (agent == 2).then(|| "agent-7".to_string()),
                mode,
                interactive,
                permission_hook,
                bypass_available,
                ..Session::default()
            },
        )
}

/// Plan expiries around `NOW`: long gone, a millisecond either side, exactly then, later.
const EXPIRIES: &[&str] = &[
    "2026-11-30T09:00:00Z",
    "2026-11-30T09:59:59.999Z",
    "2026-11-30T10:00:00Z",
    "2026-11-30T10:00:00.001Z",
    "2026-11-30T11:00:00Z",
];

#[derive(Debug, Clone)]
struct Call {
    session: Session,
    /// Gates in play: essential traffic only, a third-party provider.
    essential_only: bool,
    third_party: bool,
    consent: Option<bool>,
    /// A grant the service verified, and one the server lists (either may be missing).
    verified: bool,
    server_grant: bool,
    operation: &'static str,
    project: &'static str,
    tokened: bool,
    plan_covers: usize,
    expiry: usize,
    /// The plan's project when not the call's.
    plan_project: Option<&'static str>,
    paths: Vec<String>,
}

fn call() -> impl Strategy<Value = Call> {
    let operations = &[
        "write_files",
        "delete_files",
        "get_project",
        "finalize_plan",
        "list_projects",
        "update_sharing",
    ][..];
    (
        (
            session(),
            proptest::bool::weighted(0.1),
            proptest::bool::weighted(0.1),
        ),
        proptest::option::of(any::<bool>()),
        (any::<bool>(), any::<bool>()),
        proptest::sample::select(operations),
        proptest::sample::select(&["p1", "p2"][..]),
        any::<bool>(),
        0usize..4,
        0..EXPIRIES.len(),
        proptest::collection::vec(raw_path(), 1..4),
    )
        .prop_map(
            |(
                (session, essential_only, third_party),
                consent,
                (verified, server_grant),
                operation,
                project,
                tokened,
                plan_covers,
                expiry,
                paths,
            )| Call {
                session,
                essential_only,
                third_party,
                consent,
                verified,
                server_grant,
                operation,
                project,
                tokened,
                plan_covers,
                expiry,
                plan_project: None,
                paths,
            },
        )
}

fn scenario(call: &Call) -> Scenario {
    let mut state = ScenarioState {
        consent: call.consent,
        ..ScenarioState::default()
    };
    if call.verified {
        state.verified_grants.push(call.project.to_string());
    }
    if call.server_grant {
        state.server_grants = ServerGrants {
            available: true,
            projects: [call.project.to_string()].into(),
        };
    }
    let normalized: Vec<String> = call
        .paths
        .iter()
        .map(|path| askgate::paths::normalize(path))
        .collect();
    state.plans.push(ScenarioPlan {
        token: "tok-1".to_string(),
        project_id: call.plan_project.unwrap_or(call.project).to_string(),
        writes: normalized.iter().take(call.plan_covers).cloned().collect(),
        deletes: normalized.iter().take(call.plan_covers).cloned().collect(),
        expires_at: EXPIRIES.get(call.expiry).unwrap_or(&NOW).to_string(),
    });
    let mut arguments = match call.operation {
        "list_projects" => json!({}),
        _ => json!({"project_id": call.project}),
    };
    match call.operation {
        "write_files" => {
            let files: Vec<Value> = call
                .paths
                .iter()
                .map(|path| json!({"path": path, "data": "x"}))
                .collect();
            arguments["files"] = json!(files);
        }
        "delete_files" => arguments["paths"] = json!(call.paths),
        "finalize_plan" => {
            arguments["writes"] = json!(call.paths);
            arguments["scope"] = json!("paths");
        }
        "update_sharing" => arguments["scope"] = json!("org"),
        _ => {}
    }
    if call.tokened && ["write_files", "delete_files"].contains(&call.operation) {
        arguments["plan_token"] = json!("tok-1");
    }
    Scenario {
        name: None,
        description: None,
        now: NOW.to_string(),
        session: call.session.clone(),
        environment: Environment {
            essential_traffic_only: call.essential_only,
            provider: if call.third_party {
                "bedrock".to_string()
            } else {
                "firstParty".to_string()
            },
            ..Environment::default()
        },
        state,
        call: ScenarioCall {
            tool: "ClaudeDesign".to_string(),
            input: json!({"operation": call.operation, "arguments": arguments}),
        },
        policy_files: Vec::new(),
        expect: None,
    }
}

/// The call and its neighbours: each differs in one fact that policies read only through a
/// comparison (the plan's expiry against the clock, its project against the call's, its
/// paths against the targets). The same again for the call made one a plan could cover (a
/// main agent in default mode, consent given, ordinary paths), where those facts decide.
fn neighbours(call: Call) -> Vec<Call> {
    let flips = |call: Call| {
        let expiring = Call {
            expiry: (call.expiry + 1) % EXPIRIES.len(),
            ..call.clone()
        };
        let elsewhere = Call {
            plan_project: Some(if call.project == "p1" { "p2" } else { "p1" }),
            ..call.clone()
        };
        let covering = Call {
            plan_covers: (call.plan_covers + 1) % 4,
            ..call.clone()
        };
        [call, expiring, elsewhere, covering]
    };
    let coverable = Call {
        session: Session::default(),
        essential_only: false,
        third_party: false,
        consent: Some(true),
        paths: (0..call.paths.len())
            .map(|n| format!("site/{}/{n}.html", call.paths.len()))
            .collect(),
        ..call.clone()
    };
    flips(call).into_iter().chain(flips(coverable)).collect()
}

/// What the reference must reproduce: the outcome, the approval card (its kind first), the
/// determining policies, the target classes, and whether evaluation failed.
fn verdict(decision: &Decision) -> impl PartialEq + std::fmt::Debug + '_ {
    (
        decision.decision,
        decision.approval.as_ref().map(|approval| approval.kind()),
        &decision.policies,
        &decision.approval,
        &decision.target_policies,
        &decision.blocked_targets,
        decision.errors.is_empty(),
    )
}

/// `facts` decided both ways on `snapshot`, and the gates-first check against the
/// reference's decision: how many requests the cached decision asked, or the call's
/// description and both verdicts on a difference.
fn agrees(
    facts: &CallFacts,
    snapshot: &PolicySnapshot,
    call: &dyn std::fmt::Debug,
) -> Result<usize, String> {
    let cached = decide(facts, snapshot);
    let plain = decide::by_reference(facts, snapshot);
    if verdict(&cached) != verdict(&plain) {
        return Err(format!(
            "{call:?}\n through the cache: {:?}\n plain Cedar:       {:?}",
            verdict(&cached),
            verdict(&plain)
        ));
    }
    let gated = askgate::authz::decide::denied_by_gate(facts, snapshot);
    if gated != snapshot.denied_by_gate(&plain) {
        return Err(format!("{call:?}\n gates-first check said {gated}"));
    }
    Ok(cached.requests.len())
}

#[test]
fn decide_through_one_warm_cache_answers_as_plain_cedar_on_the_whole_set() {
    let shared = snapshot();
    let mut decided = 0usize;
    // The corpus, on its own policies (the baseline and each scenario's files) and again
    // with the packs on the shared snapshot, warming its cache.
    let mut suite = Suite::new(baseline::schema_source(), baseline::policy_sources());
    for file in corpus_files() {
        let scenario = load_scenario(&file);
        let Ok(facts) = gather(&scenario).expect("the scenario is well formed") else {
            continue; // refused before any decision
        };
        let own = suite
            .snapshot(&scenario.policy_files)
            .unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        for snapshot in [own, &shared] {
            if let Err(difference) = agrees(&facts, snapshot, &file.display()) {
                panic!("{difference}");
            }
            decided += 1;
        }
    }
    assert!(decided >= 300, "only {decided} corpus decisions");
    // Then the generated calls and their neighbours through the same warm cache, from two
    // threads at once: a key that lost a comparison's outcome would hand one the other's
    // answer.
    let runs: Vec<(usize, usize)> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| generated_calls_agree(&shared, 660)))
            .collect();
        runs.into_iter()
            .map(|run| {
                run.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let generated: usize = runs.iter().map(|(calls, _)| calls).sum();
    let asked: usize = runs.iter().map(|(_, asked)| asked).sum();
    assert!(generated >= 10_000, "only {generated} generated calls");
    // The cache was warm: every miss holds one more answer (the bound is far away), so
    // `asked - held` requests were answered from it, with answers given to other calls.
    let held = shared.cache().len();
    assert!(
        asked.saturating_sub(held) * 2 >= asked,
        "{held} answers held for {asked} requests"
    );
}

/// `cases` generated calls, each with its neighbours, decided both ways on `shared`: how many
/// were decided, and how many requests the cached decisions asked.
fn generated_calls_agree(shared: &PolicySnapshot, cases: u32) -> (usize, usize) {
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let (generated, asked) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let outcome = runner.run(&call(), |call| {
        for call in neighbours(call) {
            let Ok(facts) = gather(&scenario(&call)).expect("the scenario is well formed") else {
                continue; // refused before any decision
            };
            match agrees(&facts, shared, &call) {
                Ok(requests) => asked.set(asked.get() + requests),
                Err(difference) => prop_assert!(false, "{}", difference),
            }
            generated.set(generated.get() + 1);
        }
        Ok(())
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
    (generated.get(), asked.get())
}
