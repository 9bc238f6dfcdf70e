//! The answer cache, proved: random calls decided through one snapshot's cache (warm across
//! every case) are the decisions of the same calls decided fresh (the cache emptied before
//! each). Raw paths mix `\`, `./`, `..`, rejected, invisible and look-alike characters;
//! sessions, consent, grants and plans vary; the policies are the baseline, the hardening
//! pack and the examples, so every target fact and both entity reads are in play.

use askgate::authz::{baseline, decide, PolicySnapshot, Source};
use askgate::facts::{AgentKind, Environment, Mode, ServerGrants, Session};
use askgate::scenario::run::gather;
use askgate::scenario::{Scenario, ScenarioCall, ScenarioPlan, ScenarioState};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};

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
    let mode = proptest::sample::select(&[Mode::Default, Mode::Plan, Mode::AcceptEdits][..]);
    (
        any::<bool>(),
        mode,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(main, mode, interactive, permission_hook, bypass_available)| Session {
                agent: if main {
                    AgentKind::Main
                } else {
                    AgentKind::Subagent
                },
                agent_id: None,
                mode,
                interactive,
                permission_hook,
                bypass_available,
                ..Session::default()
            },
        )
}

#[derive(Debug, Clone)]
struct Call {
    session: Session,
    /// Gates in play: essential traffic only, a third-party provider.
    essential_only: bool,
    third_party: bool,
    consent: Option<bool>,
    granted: bool,
    operation: &'static str,
    project: &'static str,
    tokened: bool,
    plan_covers: usize,
    plan_expired: bool,
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
    ][..];
    (
        (
            session(),
            proptest::bool::weighted(0.1),
            proptest::bool::weighted(0.1),
        ),
        proptest::option::of(any::<bool>()),
        any::<bool>(),
        proptest::sample::select(operations),
        proptest::sample::select(&["p1", "p2"][..]),
        any::<bool>(),
        0usize..4,
        any::<bool>(),
        proptest::collection::vec(raw_path(), 1..4),
    )
        .prop_map(
            |(
                (session, essential_only, third_party),
                consent,
                granted,
                operation,
                project,
                tokened,
                plan_covers,
                plan_expired,
                paths,
            )| Call {
                session,
                essential_only,
                third_party,
                consent,
                granted,
                operation,
                project,
                tokened,
                plan_covers,
                plan_expired,
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
    if call.granted {
        state.verified_grants.push(call.project.to_string());
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
        expires_at: if call.plan_expired {
            "2026-11-30T09:00:00Z".to_string()
        } else {
            "2026-11-30T11:00:00Z".to_string()
        },
    });
    let mut arguments = json!({"project_id": call.project});
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
        _ => {}
    }
    if call.tokened && call.operation != "finalize_plan" {
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
        let expired = Call {
            plan_expired: !call.plan_expired,
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
        [call, expired, elsewhere, covering]
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

#[test]
fn decisions_through_the_cache_equal_fresh_decisions() {
    let cached = snapshot();
    let fresh = snapshot();
    let mut runner = TestRunner::new(Config {
        cases: 1_000,
        ..Config::default()
    });
    let asked = std::cell::Cell::new(0usize);
    let outcome = runner.run(&call(), |call| {
        // The call and its neighbours through the same warm cache: a key that lost a
        // comparison's outcome would hand one the other's answer.
        for call in neighbours(call) {
            let Ok(facts) = gather(&scenario(&call)).expect("the scenario is well formed") else {
                continue; // refused before any decision
            };
            let through_cache = decide(&facts, &cached);
            // The gates-first check asks only what it needs, and agrees with the full decision.
            prop_assert_eq!(
                askgate::authz::decide::denied_by_gate(&facts, &cached),
                cached.denied_by_gate(&through_cache),
                "{:?}",
                call
            );
            fresh.cache().clear();
            let decided_fresh = decide(&facts, &fresh);
            asked.set(asked.get() + decided_fresh.requests.len());
            prop_assert_eq!(through_cache, decided_fresh, "{:?}", call);
        }
        Ok(())
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
    // The cache did answer: every miss holds one more answer (the bound is far away), so
    // `asked - held` requests were answered from it; at least a tenth.
    let (held, asked) = (cached.cache().len(), asked.get());
    assert!(asked > 3_000, "only {asked} requests asked");
    assert!(
        (asked - held) * 10 >= asked,
        "{held} answers held for {asked} requests"
    );
}
