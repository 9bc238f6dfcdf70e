use std::path::{Path, PathBuf};

use cedar_policy::{
    Authorizer, Context, Decision, Entities, EntityUid, PolicySet, Request, Schema,
};

use super::session::truth_table;
use super::{condition, Approvals, Literals};
use crate::analysis::environments::{environments, Environment};
use crate::analysis::expr::{self, Expr};
use crate::authz::cache::project::cedar_context;
use crate::authz::cache::reads::Tree;
use crate::authz::context::{SurfaceContext, TargetContext};
use crate::authz::{baseline, PolicySnapshot};
use crate::authz::{CallFacts, EntityRef};
use crate::facts::Session;
use crate::scenario::run::gather;
use crate::scenario::Scenario;

#[test]
fn truth_tables_leave_out_what_a_fact_does_not_depend_on() {
    let bypass = truth_table(Session::bypass);
    assert!(!bypass.contains("interactive"), "{bypass}");
    assert!(
        bypass.contains(r#"context.session.mode == "bypassPermissions""#),
        "{bypass}"
    );
    let may_record = truth_table(Session::may_record);
    assert!(
        may_record.contains("context.session.interactive == true"),
        "{may_record}"
    );
}

fn scenario_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            scenario_files(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            found.push(path);
        }
    }
}

fn uid(entity: &EntityRef) -> EntityUid {
    entity.uid().unwrap()
}

/// Whether the real request satisfies `condition` (true, without an error).
fn holds(
    condition: &Expr,
    request: (&EntityUid, &EntityUid, &EntityUid),
    context: Context,
    actions: &Entities,
) -> Result<(), String> {
    let policy = expr::question("wellformed", condition.clone()).unwrap();
    let set = PolicySet::from_policies([policy]).unwrap();
    let request = Request::new(
        request.0.clone(),
        request.1.clone(),
        request.2.clone(),
        context,
        None,
    )
    .unwrap();
    let response = Authorizer::new().is_authorized(&request, &set, actions);
    let errors: Vec<String> = response
        .diagnostics()
        .errors()
        .map(ToString::to_string)
        .collect();
    if response.decision() == Decision::Allow && errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{errors:?}"))
    }
}

fn environment<'a>(
    all: &'a [Environment],
    principal: &str,
    action: &str,
    resource: &str,
) -> &'a Environment {
    all.iter()
        .find(|env| env.principal == principal && env.action == action && env.resource == resource)
        .unwrap_or_else(|| panic!("no environment {principal} {action} {resource}"))
}

/// Every call of the scenario corpus (real facts, gathered as a front door gathers them) and
/// each of its targets satisfies its environment's well-formedness condition: the condition
/// and the code that derives the facts cannot drift apart unnoticed.
#[test]
fn i21_every_real_call_of_the_corpus_is_well_formed() {
    let snapshot =
        PolicySnapshot::load(&baseline::schema_source(), &baseline::policy_sources()).unwrap();
    let schema: Schema = baseline::schema_source().text.parse().unwrap();
    let all = environments(&schema);
    let literals = Literals::of(&[&snapshot]);
    let mut files = Vec::new();
    scenario_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios"),
        &mut files,
    );
    files.sort();
    let (mut calls, mut targets) = (0, 0);
    let mut conditions = std::collections::HashMap::new();
    let mut condition_of = |env: &Environment| -> Expr {
        conditions
            .entry(env.label())
            .or_insert_with(|| condition(env, &literals, Approvals::None).unwrap())
            .clone()
    };
    for file in &files {
        let scenario: Scenario =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let Ok(Ok(facts)) = gather(&scenario) else {
            continue;
        };
        let facts: CallFacts = facts;
        let (principal, resource) = (uid(&facts.principal), uid(&facts.resource));
        let action = uid(&EntityRef::action(&facts.action));
        let env = environment(
            &all,
            &facts.principal.kind,
            &facts.action,
            &facts.resource.kind,
        );
        let context = cedar_context(&*facts.context, &Tree::Whole).unwrap();
        holds(
            &condition_of(env),
            (&principal, &action, &resource),
            context,
            snapshot.action_entities(),
        )
        .unwrap_or_else(|error| {
            panic!(
                "{}: the call is not well formed in {}: {error}",
                file.display(),
                env.label()
            )
        });
        calls += 1;
        let SurfaceContext::Design(design) = &facts.context.surface else {
            continue;
        };
        let name = if design.targets.set == "deletes" {
            "delete_target"
        } else {
            "write_target"
        };
        let target_env = environment(&all, &facts.principal.kind, name, &facts.resource.kind);
        let target_action = uid(&EntityRef::action(name));
        for target in facts.targets.iter() {
            let context = TargetContext::of(target, &design.project_id, &design.operation)
                .to_cedar_context()
                .unwrap();
            holds(
                &condition_of(target_env),
                (&principal, &target_action, &resource),
                context,
                snapshot.action_entities(),
            )
            .unwrap_or_else(|error| {
                panic!(
                    "{}: target `{}` is not well formed: {error}",
                    file.display(),
                    target.normalized
                )
            });
            targets += 1;
        }
    }
    assert!(
        calls > 400 && targets > 100,
        "{calls} calls, {targets} targets"
    );
}

/// Issue 38 §2: the facts derived from a path are tied to it by their definitions for the
/// patterns the policies use: real calls (an upper-case `.PEM`, a Kelvin sign, a `./secrets/`
/// write) are well formed, and a `lowercase` or `resolved_path` no call derives is not.
#[test]
fn i38_derived_path_facts_are_tied_to_the_path_by_their_definitions() {
    use crate::authz::Source;
    let extra = r#"
@id("t.pem") @reason("pem")
forbid (principal, action == Action::"write_target", resource)
when { context.lowercase like "*.pem" || context.lowercase like "*.key" || context.path like "*.Crt" };
@id("t.secrets") @reason("secrets")
forbid (principal, action == Action::"project_write", resource)
when { context.projects.resolved_path like "secrets/*" };
"#;
    let mut sources = baseline::policy_sources();
    sources.push(Source::new("extra.cedar", extra.to_string()));
    let snapshot = PolicySnapshot::load(&baseline::schema_source(), &sources).unwrap();
    let schema: Schema = baseline::schema_source().text.parse().unwrap();
    let all = environments(&schema);
    let literals = Literals::of(&[&snapshot]);
    let pattern = |text: &str| -> Vec<Option<char>> {
        text.chars().map(|c| (c != '*').then_some(c)).collect()
    };
    for lowercase in ["*.pem", "*.key"] {
        assert!(literals.lowercase_patterns.contains(&pattern(lowercase)));
    }
    assert!(literals.resolved_patterns.contains(&pattern("secrets/*")));

    let target_env = environment(&all, "Agent", "write_target", "DesignProject");
    let targets = condition(target_env, &literals, Approvals::None).unwrap();
    let principal = uid(&EntityRef::new("Agent", "main"));
    let project = uid(&EntityRef::new("DesignProject", "p1"));
    let write_target = uid(&EntityRef::action("write_target"));
    let target =
        |path: &str| TargetContext::of(&crate::paths::target_facts(path), "p1", "write_files");
    let decide = |context: &TargetContext| {
        holds(
            &targets,
            (&principal, &write_target, &project),
            context.to_cedar_context().unwrap(),
            snapshot.action_entities(),
        )
    };
    for path in ["keys/a.PEM", "a.\u{212A}EY", "a.pem", "b.CRT", "notes.md"] {
        decide(&target(path)).unwrap_or_else(|error| panic!("{path}: {error}"));
    }
    let mut unreal = target("a.pxm");
    unreal.lowercase = "a.pem".to_string();
    assert!(
        decide(&unreal).is_err(),
        "lowercase `a.pem` of path `a.pxm`"
    );
    let mut unreal = target("a.Crt");
    unreal.lowercase = "a.txt".to_string();
    assert!(
        decide(&unreal).is_err(),
        "lowercase `a.txt` of path `a.Crt`"
    );

    let write_env = environment(&all, "Agent", "project_write", "AttachedProject");
    let writes = condition(write_env, &literals, Approvals::None).unwrap();
    let scenario: Scenario = serde_json::from_value(serde_json::json!({
        "now": "2026-11-30T10:00:00Z",
        "environment": {"attached_project": "p1", "session_token": true},
        "state": {"projects": {"scopes": [], "knowledge_size": 0, "max_knowledge_size": 100000,
                               "docs": [], "files": []}},
        "call": {"tool": "Projects", "input": {"method": "project_write",
                 "path": "./secrets/a.md", "content": "x"}}
    }))
    .unwrap();
    let facts: CallFacts = gather(&scenario).unwrap().unwrap();
    let write = |context: &crate::authz::context::CallContext| {
        holds(
            &writes,
            (
                &uid(&facts.principal),
                &uid(&EntityRef::action("project_write")),
                &uid(&facts.resource),
            ),
            cedar_context(context, &Tree::Whole).unwrap(),
            snapshot.action_entities(),
        )
    };
    write(&facts.context).unwrap();
    let mut unreal = (*facts.context).clone();
    let SurfaceContext::Projects(projects) = &mut unreal.surface else {
        panic!("a Projects call");
    };
    projects.path = "./other/a.md".to_string();
    assert!(
        write(&unreal).is_err(),
        "`./other/a.md` resolved to `secrets/a.md`"
    );
}
