#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
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
