//! analysis::wellformed::design: the facts of a Design call — the operation's provenance and
//! hints (every pair `call::effective_hints` can give, whatever the catalog says), its
//! arguments, the target verdicts and sets `facts::targets` can give the operation (found by
//! asking it of argument shapes), and how plans, grants and the project's identity hang
//! together with the project id and the resource.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{implies, one_of, parse_all, Literals, MAX_NOW};
use crate::analysis::environments::Environment;
use crate::analysis::expr::{self, Expr};
use crate::analysis::AnalysisError;
use crate::call::operations::{effective_hints, static_operation, static_operations};
use crate::call::schema::{ArgumentKind, ArgumentSchema};
use crate::call::{Catalog, DesignCall, Provenance};
use crate::facts::design::WORKSPACE;
use crate::paths::{MAX_DISPLAY_ENTRIES, MAX_TARGETS};

pub(super) fn condition(
    environment: &Environment,
    literals: &Literals,
) -> Result<Expr, AnalysisError> {
    let action = environment.action.as_str();
    let mut parts = vec![operation(action)];
    if let Some(known) = static_operation(action) {
        parts.extend(arguments(&known.schema));
        if needs_project(action) {
            parts.push("context.design.has_project_id".to_string());
        }
    }
    // `facts::design::plan_registrable`: only a finalize_plan's plan can be registered.
    if action != "finalize_plan" {
        parts.push("!context.design.plan_registrable".to_string());
    }
    parts.extend(targets(action));
    parts.extend(state());
    let workspace = environment.resource == "DesignWorkspace";
    parts.push(if workspace {
        format!(r#"!context.design.has_project_id && resource == DesignWorkspace::"{WORKSPACE}""#)
    } else {
        "context.design.has_project_id".to_string()
    });
    let mut condition = parse_all(&parts)?;
    if !workspace {
        for id in &literals.projects {
            condition = expr::and(condition, project_is(id)?);
        }
    }
    Ok(condition)
}

/// `resource == DesignProject::"id"` exactly when the call names that project.
fn project_is(id: &str) -> Result<Expr, AnalysisError> {
    Ok(expr::eq(
        expr::eq(expr::resource(), expr::entity("DesignProject", id)?),
        expr::eq(expr::context(&["design", "project_id"]), expr::string(id)),
    ))
}

/// Provenance and the `(read_only, destructive)` pairs the call's hints can take. An
/// operation outside the static table and the catalog (provenance `unknown`) is refused by
/// validation; only the gates-first check decides it, and only to deny it by a gate on both
/// sides — never a change — so such requests are left out.
fn operation(action: &str) -> String {
    match static_operation(action) {
        Some(_) => format!(
            r#"context.design.operation == "{action}" && context.design.provenance == "static" && ({})"#,
            hint_pairs(action, Provenance::Static)
        ),
        None => {
            let names: Vec<&str> = static_operations().iter().map(|op| op.name).collect();
            format!(
                r#"!{} && context.design.operation != "" && context.design.provenance == "server_only" && ({})"#,
                one_of("context.design.operation", &names),
                hint_pairs(OTHER, Provenance::ServerOnly),
            )
        }
    }
}

/// An operation name outside the static table.
const OTHER: &str = "askgate-analysis-other-operation";

/// Every pair `effective_hints` gives `operation` with `provenance`, over every catalog: none,
/// and one listing the operation with each combination of hints (absent, true, false). An
/// operation outside the static table passes validation only when the catalog calls it
/// read-only (`call::design`), so other server-only pairs are left out.
fn hint_pairs(operation: &str, provenance: Provenance) -> String {
    let mut catalogs: Vec<Option<Catalog>> = vec![None];
    let hint = [None, Some(true), Some(false)];
    for read_only in hint {
        for destructive in hint {
            let mut annotations = serde_json::Map::new();
            if let Some(value) = read_only {
                annotations.insert("readOnlyHint".into(), json!(value));
            }
            if let Some(value) = destructive {
                annotations.insert("destructiveHint".into(), json!(value));
            }
            let tool = json!({"tools": [{"name": operation, "annotations": annotations}]});
            catalogs.push(Some(Catalog::parse(&tool)));
        }
    }
    let callable = |catalog: Option<&Catalog>| {
        let input = json!({"operation": operation, "arguments": {}});
        provenance != Provenance::ServerOnly || DesignCall::parse(input, catalog).is_ok()
    };
    let pairs: BTreeSet<(bool, bool)> = catalogs
        .iter()
        .map(Option::as_ref)
        .map(|catalog| (effective_hints(operation, catalog), catalog))
        .filter(|(hints, catalog)| hints.provenance == provenance && callable(*catalog))
        .map(|(hints, _)| (hints.read_only, hints.destructive))
        .collect();
    let rows: Vec<String> = pairs
        .iter()
        .map(|(read_only, destructive)| {
            format!("(context.design.read_only == {read_only} && context.design.destructive == {destructive})")
        })
        .collect();
    if rows.is_empty() {
        return "false".to_string();
    }
    rows.join(" || ")
}

/// The arguments the facts carry: no token and no project unless the operation takes them,
/// scalars empty unless it takes the key, and one of its choices (folded) when it is a choice.
fn arguments(schema: &ArgumentSchema) -> Vec<String> {
    let mut absent = Vec::new();
    if schema.key("plan_token").is_none() {
        absent.push("context.design.tokenless".to_string());
    }
    if schema.key("project_id").is_none() {
        absent.push("!context.design.has_project_id".to_string());
    }
    absent.into_iter().chain(scalars(schema)).collect()
}

/// Whether validation refuses the operation without a `project_id` (and only for that).
fn needs_project(operation: &str) -> bool {
    let without = DesignCall::parse(json!({"operation": operation, "arguments": {}}), None);
    without.is_err_and(|error| error.field.ends_with("project_id"))
}

fn scalars(schema: &ArgumentSchema) -> Vec<String> {
    ["scope", "role", "link_permission", "path"]
        .iter()
        .filter_map(|name| {
            let attribute = format!("context.design.arguments.{name}");
            match schema.key(name).map(|key| key.kind) {
                None => Some(format!("{attribute} == \"\"")),
                Some(ArgumentKind::Choice { values, .. }) => {
                    let choices: Vec<String> = std::iter::once(String::new())
                        .chain(values.iter().map(|value| value.to_lowercase()))
                        .collect();
                    Some(one_of(&attribute, &choices))
                }
                Some(_) => None,
            }
        })
        .collect()
}

/// Argument shapes the target enumeration is asked about, to find every verdict and target
/// set an operation can have (`blocked` comes from a `pass` whose targets a policy blocks).
fn probes() -> Vec<Value> {
    let many: Vec<Value> = (0..=MAX_TARGETS)
        .map(|i| json!({"path": format!("f{i}")}))
        .collect();
    let names: Vec<Value> = (0..=MAX_TARGETS).map(|i| json!(format!("f{i}"))).collect();
    vec![
        json!({}),
        json!({"files": []}),
        json!({"files": [{"path": "a"}]}),
        json!({"files": many}),
        json!({"files": 1}),
        json!({"files": [{"name": "a"}]}),
        json!({"paths": []}),
        json!({"paths": ["a"]}),
        json!({"paths": names}),
        json!({"paths": [1]}),
        json!({"paths": ["a"], "files": []}),
        json!({"path": "a"}),
        json!({"path": ""}),
        json!({"path": null}),
        json!({"path": 1}),
    ]
}

/// The verdicts and sets `facts::targets` gives `operation` for the argument shapes that pass
/// the call's validation, and the count each verdict has.
fn targets(operation: &str) -> Vec<String> {
    let name = if operation == "other_operation" {
        OTHER
    } else {
        operation
    };
    let catalog = Catalog::parse(&json!({"tools": [{"name": OTHER}]}));
    let mut pairs = BTreeSet::new();
    for mut probe in probes() {
        for project in [None, Some("p1")] {
            if let (Some(project), Some(arguments)) = (project, probe.as_object_mut()) {
                arguments.insert("project_id".into(), json!(project));
            }
            let input = json!({"operation": name, "arguments": probe});
            let found = match DesignCall::parse(input, Some(&catalog)) {
                Ok(call) => crate::facts::targets::targets(&call.operation, &call.arguments),
                // Decided before validation (the gates-first check), as given.
                Err(_) if static_operation(name).is_none() => match probe.as_object() {
                    Some(arguments) => crate::facts::targets::targets(name, arguments),
                    None => continue,
                },
                Err(_) => continue,
            }
            .context;
            if found.verdict == "pass" {
                pairs.insert(("blocked".to_string(), found.set.clone()));
            }
            pairs.insert((found.verdict, found.set));
        }
    }
    let rows: Vec<String> = pairs
        .iter()
        .map(|(verdict, set)| {
            format!(r#"(context.design.targets.verdict == "{verdict}" && context.design.targets.set == "{set}")"#)
        })
        .collect();
    let listed = r#"["pass", "blocked"].contains(context.design.targets.verdict)"#;
    // No probe validated: say nothing about the verdict rather than rule every call out.
    let verdicts = if rows.is_empty() {
        "true".to_string()
    } else {
        rows.join(" || ")
    };
    vec![
        format!("({verdicts})"),
        implies(
            r#"["not_plan_gated", "unenumerable", "no_targets"].contains(context.design.targets.verdict)"#,
            "context.design.targets.count == 0",
        ),
        implies(
            r#"context.design.targets.verdict == "too_many""#,
            &format!("context.design.targets.count > {MAX_TARGETS}"),
        ),
        implies(
            listed,
            &format!("context.design.targets.count >= 1 && context.design.targets.count <= {MAX_TARGETS} && !context.design.targets.paths.isEmpty()"),
        ),
        implies(&format!("!{listed}"), "context.design.targets.paths.isEmpty()"),
        // `create_support_js` names one path, its `path` (or `support.js`).
        implies(
            &format!(r#"context.design.operation == "create_support_js" && {listed}"#),
            "context.design.targets.count == 1",
        ),
        implies(
            "context.design.targets.fits_batch_display",
            &format!("{listed} && context.design.targets.count <= {MAX_DISPLAY_ENTRIES}"),
        ),
    ]
}

/// Consent, plans, grants and identity as the stores and observations give them.
fn state() -> Vec<String> {
    vec![
        one_of("context.design.consent", &["unknown", "granted", "refused"]),
        one_of("context.design.grant.server", &["granted", "not_granted", "unavailable"]),
        "context.design.has_project_id == (context.design.project_id != \"\")".to_string(),
        // A plan is found only under a token, and an unknown token finds nothing.
        implies("context.design.plan.found", "!context.design.tokenless && context.design.plan.project_id != \"\""),
        // An approved plan expires within a scenario's clock (year 9999).
        format!("context.design.plan.expires_at >= 0 && context.design.plan.expires_at <= {MAX_NOW}"),
        implies(
            "!context.design.plan.found",
            r#"context.design.plan.project_id == "" && context.design.plan.writes.isEmpty() && context.design.plan.deletes.isEmpty() && context.design.plan.expires_at == 0"#,
        ),
        implies(
            "context.design.grant.verified || context.design.grant.recard || context.design.grant.ineligible",
            "context.design.has_project_id",
        ),
        // `identity::sanitize_identity` keeps only these scopes, and needs a project id.
        format!(
            "context.design.identity_verified == {}",
            one_of("context.design.sharing_scope", &["invited", "org", "public"])
        ),
        implies("!context.design.identity_verified", "context.design.sharing_scope == \"\""),
        implies("context.design.identity_verified", "context.design.has_project_id"),
    ]
}
