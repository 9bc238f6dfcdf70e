//! analysis::render::call: the scenario blocks of one synthesized request — a Design call
//! (operation, arguments, consent, plan, grants, identity), a Projects call (method, input,
//! attached project, credential, observations) or a target path written under a held grant
//! (a write) or an approved plan (a delete), the calls whose decision a target's class changes.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{environment, paths, rfc3339, session, set, set_in};
use crate::analysis::concrete::RawRequest;
use crate::authz::context::{DesignContext, ProjectsContext, SurfaceContext};
use crate::call::operations::static_operation;
use crate::call::ProjectsMethod;
use crate::facts::projects::{PROJECT_READ_SCOPE, PROJECT_WRITE_SCOPE};

/// The project of rendered Design calls whose synthesized request names none.
const PROJECT: &str = "p1";
/// The attached project of rendered Projects calls whose resource id is empty.
const ATTACHED: &str = "0f6c2a1e-1111-4222-8333-444455556666";
/// Larger synthesized contents are not rendered inline (a scenario file is meant to be read).
const MAX_CONTENT_BYTES: i64 = 16 << 20;
/// More targets than this are not rendered.
const MAX_RENDERED_TARGETS: usize = 4096;
const PLAN_TOKEN: &str = "tok-analysis";
/// The name of a rendered operation outside the static table whose synthesized name is not one.
const OTHER_OPERATION: &str = "analysis_operation";

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

pub fn call_scenario(request: &RawRequest) -> Result<Value, String> {
    let context = request.call_context()?;
    let mut scenario = json!({
        "name": format!("diff counterexample: {}", request.action),
        "now": rfc3339(context.now),
        "session": session(&context.session, &context.caller),
        "environment": environment(&context.environment),
    });
    match &context.surface {
        SurfaceContext::Design(design) => design_call(&mut scenario, request, design)?,
        SurfaceContext::Projects(projects) => projects_call(&mut scenario, request, projects)?,
    }
    Ok(scenario)
}

fn identity(project: &str, scope: &str) -> Value {
    let scope = if scope.is_empty() { "invited" } else { scope };
    json!({ project: {
        "name": "diff counterexample",
        "sharing": { "scope": scope },
        "url": format!("https://claude.ai/design/p/{project}"),
    }})
}

fn design_call(
    scenario: &mut Value,
    request: &RawRequest,
    design: &DesignContext,
) -> Result<(), String> {
    let project = if design.project_id.is_empty() {
        PROJECT
    } else {
        design.project_id.as_str()
    };
    let operation = if request.action != "other_operation" {
        request.action.clone()
    } else if valid_name(&design.operation) {
        design.operation.clone()
    } else {
        // Validation takes 1–64 letters, digits, `_`, `.`, `-`: a name the solver chose
        // outside that is written as one inside it.
        OTHER_OPERATION.to_string()
    };
    let mut arguments = serde_json::Map::new();
    if design.has_project_id {
        arguments.insert("project_id".into(), json!(project));
    }
    let scalars = &design.arguments;
    for (key, value) in [
        ("scope", &scalars.scope),
        ("role", &scalars.role),
        ("link_permission", &scalars.link_permission),
        ("path", &scalars.path),
    ] {
        if !value.is_empty() {
            arguments.insert(key.into(), json!(value));
        }
    }
    if !design.tokenless {
        arguments.insert("plan_token".into(), json!(PLAN_TOKEN));
    }
    let names = paths::renamed(design);
    targets(&mut arguments, request, design, &names)?;
    let mut state = json!({
        "consent": match design.consent.as_str() {
            "granted" => json!(true),
            "refused" => json!(false),
            _ => Value::Null,
        },
    });
    let grant = &design.grant;
    if grant.verified {
        set(&mut state, "verified_grants", json!([project]));
    }
    set(
        &mut state,
        "server_grants",
        json!({
            "available": grant.server != "unavailable",
            "projects": if grant.server == "granted" { json!([project]) } else { json!([]) },
        }),
    );
    if grant.ineligible {
        set(&mut state, "grant_ineligible", json!([project]));
    }
    if grant.recard {
        set(&mut state, "recard", json!([project]));
    }
    if design.identity_verified {
        set(
            &mut state,
            "project_identity",
            identity(project, &design.sharing_scope),
        );
    }
    if design.plan.found {
        set(
            &mut state,
            "plans",
            json!([{
                "token": PLAN_TOKEN,
                "project_id": design.plan.project_id,
                "writes": design.plan.writes.iter().filter_map(|path| names.get(path)).collect::<Vec<_>>(),
                "deletes": design.plan.deletes.iter().filter_map(|path| names.get(path)).collect::<Vec<_>>(),
                "expires_at": rfc3339(design.plan.expires_at),
            }]),
        );
    }
    if let Some(catalog) = catalog(design, &operation) {
        set(&mut state, "catalog", catalog);
    }
    set(scenario, "state", state);
    set(
        scenario,
        "call",
        json!({
            "tool": "ClaudeDesign",
            "input": { "operation": operation, "arguments": arguments },
        }),
    );
    Ok(())
}

/// The catalog that gives the synthesized hints: none when they are the static table's,
/// else one listing the operation with them (a catalog only tightens a static operation).
fn catalog(design: &DesignContext, operation: &str) -> Option<Value> {
    let hints = (design.read_only, design.destructive);
    let listed = match static_operation(&design.operation) {
        Some(known) => (known.read_only, known.destructive) != hints,
        None => design.provenance == "server_only",
    };
    listed.then(|| {
        json!({"tools": [{
            "name": operation,
            "annotations": {"readOnlyHint": design.read_only, "destructiveHint": design.destructive},
        }]})
    })
}

/// The arguments that name the synthesized targets: `count` entries (the paths, repeated
/// when the count is larger: paths that repeat are still one target each), none, or a shape
/// the enumeration cannot read, as the verdict says.
fn targets(
    arguments: &mut serde_json::Map<String, Value>,
    request: &RawRequest,
    design: &DesignContext,
    names: &BTreeMap<String, String>,
) -> Result<(), String> {
    let targets = &design.targets;
    let mut paths: Vec<String> = targets
        .paths
        .iter()
        .filter_map(|path| names.get(path).cloned())
        .collect();
    let count = usize::try_from(targets.count).unwrap_or(0);
    match targets.verdict.as_str() {
        "too_many" => {
            if count > MAX_RENDERED_TARGETS {
                return Err(format!("a call with {count} targets is not rendered"));
            }
            paths = (0..count).map(|index| format!("f{index}.html")).collect();
        }
        "no_targets" => paths.clear(),
        "pass" | "blocked" if count > paths.len() && !paths.is_empty() => {
            let all = paths.clone();
            paths = all.iter().cycle().take(count).cloned().collect();
        }
        _ => {}
    }
    let unenumerable = targets.verdict == "unenumerable";
    match request.action.as_str() {
        "write_files" if unenumerable => {}
        "write_files" => {
            let files: Vec<Value> = paths
                .iter()
                .map(|path| json!({"path": path, "data": "x"}))
                .collect();
            arguments.insert("files".into(), json!(files));
        }
        // Both `paths` and `files` cannot be enumerated.
        "delete_files" if unenumerable => {
            arguments.insert("paths".into(), json!(["a.html"]));
            arguments.insert("files".into(), json!([{"path": "b.html"}]));
        }
        "delete_files" => {
            arguments.insert("paths".into(), json!(paths));
        }
        "create_support_js" if unenumerable => {
            arguments.insert("path".into(), json!(1));
        }
        // Its one target is its `path`.
        "create_support_js" => {
            if let Some(path) = paths.first() {
                arguments.insert("path".into(), json!(path));
            }
        }
        // A plan that cannot be registered: one write more than a plan holds (§3 jnS).
        "finalize_plan" if !design.plan_registrable && design.arguments.scope != "project" => {
            let writes: Vec<String> = (0..21).map(|index| format!("page-{index}.html")).collect();
            arguments.insert("writes".into(), json!(writes));
        }
        _ => {}
    }
    Ok(())
}

fn projects_call(
    scenario: &mut Value,
    request: &RawRequest,
    projects: &ProjectsContext,
) -> Result<(), String> {
    if projects.attached {
        let id = if request.resource.id.is_empty() {
            ATTACHED
        } else {
            request.resource.id.as_str()
        };
        set_in(scenario, "environment", "attached_project", json!(id));
    }
    let mut observed = None;
    let mut scopes: Vec<&str> = Vec::new();
    match projects.credential.as_str() {
        "session_token" => set_in(scenario, "environment", "session_token", json!(true)),
        "scoped" => {
            scopes = vec![PROJECT_READ_SCOPE, PROJECT_WRITE_SCOPE];
            observed = Some(json!({}));
        }
        "unscoped" => observed = Some(json!({})),
        _ => {}
    }
    let path = if projects.path.is_empty() {
        "notes.md"
    } else {
        projects.path.as_str()
    };
    let (docs, files) = match projects.target_kind.as_str() {
        "doc" => (vec![json!({"path": doc_path(projects, path)})], vec![]),
        "upload" => (vec![], vec![json!({"path": path})]),
        _ => (vec![], vec![]),
    };
    let stat = projects.source == "local_path" && projects.size_known;
    if projects.detail_known || stat {
        observed.get_or_insert_with(|| json!({}));
    }
    let place = projects.local_path_place.as_str();
    if !["none", "unknown"].contains(&place) {
        set(
            observed.get_or_insert_with(|| json!({})),
            "local_path_place",
            json!(place),
        );
    }
    if let Some(observed) = &mut observed {
        set(observed, "scopes", json!(scopes));
        set(observed, "docs", json!(docs));
        set(observed, "files", json!(files));
        if !projects.detail_known {
            set(observed, "detail_unavailable", json!(true));
        }
        if stat {
            let file = json!({"device": 1, "inode": 1, "bytes": projects.content_bytes});
            set(observed, "local_file", file);
        }
        if projects.knowledge_known {
            set(observed, "knowledge_size", json!(projects.knowledge_size));
            set(
                observed,
                "max_knowledge_size",
                json!(projects.max_knowledge_size),
            );
        }
        set(scenario, "state", json!({ "projects": observed }));
    }
    let method = ProjectsMethod::from_name(&request.action)
        .ok_or_else(|| format!("`{}` is not a Projects method", request.action))?;
    let mut input = json!({ "method": method.as_str() });
    if !projects.path.is_empty() || method.names_path() {
        set(&mut input, "path", json!(path));
    }
    match projects.source.as_str() {
        "content" => {
            if !(0..=MAX_CONTENT_BYTES).contains(&projects.content_bytes) {
                return Err(format!(
                    "a content of {} bytes is not rendered",
                    projects.content_bytes
                ));
            }
            let bytes = usize::try_from(projects.content_bytes).unwrap_or(0);
            set(&mut input, "content", json!("x".repeat(bytes)));
        }
        "local_path" => set(
            &mut input,
            "local_path",
            json!("/tmp/askgate-diff-counterexample.md"),
        ),
        _ => {}
    }
    if !projects.query.is_empty() {
        set(&mut input, "query", json!(projects.query));
    }
    if projects.n != 0 {
        set(&mut input, "n", json!(projects.n));
    }
    set(
        scenario,
        "call",
        json!({ "tool": "Projects", "input": input }),
    );
    Ok(())
}

/// The doc a write replaces in place, or the doc a read or delete names.
fn doc_path(projects: &ProjectsContext, path: &str) -> String {
    let write = ProjectsMethod::from_name(&projects.method) == Some(ProjectsMethod::ProjectWrite);
    if write && !projects.resolved_path.is_empty() {
        projects.resolved_path.clone()
    } else {
        path.to_string()
    }
}

/// A target path as the calls it decides: a tokenless write under a held grant
/// (`write_target`) or a delete covered by an approved plan (`delete_target`); one scenario
/// per way the synthesized facts name the path (lowercased, as given, from its segments at
/// the top and one level down).
pub fn target_scenarios(request: &RawRequest) -> Result<Vec<Value>, String> {
    let context = request.target_context()?;
    let project = if context.project_id.is_empty() {
        PROJECT
    } else {
        context.project_id.as_str()
    };
    let joined = context
        .segments
        .iter()
        .cloned()
        .collect::<Vec<_>>()
        .join("/");
    let nested = if joined.is_empty() {
        String::new()
    } else {
        format!("a/{joined}")
    };
    let mut paths = vec![
        context.lowercase.clone(),
        context.path.clone(),
        joined,
        nested,
    ];
    paths.retain(|path| !path.is_empty());
    let mut seen = std::collections::BTreeSet::new();
    paths.retain(|path| seen.insert(path.clone()));
    if paths.is_empty() {
        return Err("the synthesized target names no path".to_string());
    }
    Ok(paths
        .iter()
        .map(|path| target_scenario(request, project, path))
        .collect())
}

fn target_scenario(request: &RawRequest, project: &str, path: &str) -> Value {
    let now = "2026-11-30T10:00:00Z";
    let (state, operation, arguments) = if request.action == "delete_target" {
        (
            json!({"plans": [{"token": PLAN_TOKEN, "project_id": project, "deletes": [path],
                              "expires_at": "2026-11-30T10:10:00Z"}]}),
            "delete_files",
            json!({"project_id": project, "paths": [path], "plan_token": PLAN_TOKEN}),
        )
    } else {
        (
            json!({"verified_grants": [project], "project_identity": identity(project, "invited")}),
            "write_files",
            json!({"project_id": project, "files": [{"path": path, "data": "x"}]}),
        )
    };
    json!({
        "name": format!("diff counterexample: {} `{path}`", request.action),
        "now": now,
        "state": state,
        "call": { "tool": "ClaudeDesign", "input": { "operation": operation, "arguments": arguments } },
    })
}
