//! analysis::wellformed: the fixed guard policies that confine the solver to requests askgate
//! can build. Added to both sides alike (so they hide no difference between them), they rule
//! out contexts no call gathers — an agent that is neither `main` nor `subagent`, a Design
//! operation whose hints contradict the static table, a Projects method that is not the
//! action, a content size whose token estimate is not `ceil(bytes / 4)` — so that the
//! counterexamples can be written as scenario files. What they cannot say (a target's
//! `segments` are its path's, lowercased) is left to the scenario check in `render`.

use crate::call::operations::static_operation;
use crate::call::schema::{ArgumentKind, ArgumentSchema};

/// Largest content a counterexample may carry (rendered scenario files stay readable).
pub const MAX_CONTENT_BYTES: i64 = 1 << 20;
/// The last millisecond a scenario's RFC 3339 `now` can name (year 9999).
const MAX_NOW: i64 = 253_402_300_799_999;

const CALLS: &str = r#"action in [Action::"ClaudeDesign", Action::"Projects"]"#;

/// The guards of one request environment, as `(id, text)`.
pub fn guards(action: &str, resource: &str) -> Vec<(String, String)> {
    let mut guards = vec![(
        "analysis.well-formed-call".to_string(),
        format!(
            "forbid (principal, {CALLS}, resource) unless {{ {} }};",
            call_condition()
        ),
    )];
    let surface = if resource == "AttachedProject" {
        format!("{} && {}", method_condition(action), projects_condition())
    } else {
        format!("{} && {}", operation_condition(action), design_condition())
    };
    guards.push((
        format!("analysis.well-formed-{action}"),
        format!(
            "forbid (principal, action == Action::\"{action}\", resource) unless {{ {surface} }};"
        ),
    ));
    guards
}

fn call_condition() -> String {
    [
        r#"["main", "subagent"].contains(context.session.agent)"#,
        r#"["default", "acceptEdits", "plan", "auto", "dontAsk", "bypassPermissions"].contains(context.session.mode)"#,
        r#"["allowed", "denied", "unlisted"].contains(context.environment.design_sync)"#,
        r#"["allowed", "denied", "unlisted"].contains(context.environment.projects_tool)"#,
        "context.now >= 0",
    ]
    .join(" && ")
        + &format!(" && context.now <= {MAX_NOW}")
}

/// The static table's row for a Design action: its name, and hints a catalog can only tighten.
fn operation_condition(action: &str) -> String {
    let known = static_operation(action);
    match known {
        Some(known) => {
            let mut parts = vec![
                format!("context.design.operation == \"{action}\""),
                r#"context.design.provenance == "static""#.to_string(),
            ];
            if !known.read_only {
                parts.push("!context.design.read_only".to_string());
            }
            if known.destructive {
                parts.push("context.design.destructive".to_string());
            }
            parts.extend(argument_conditions(&known.schema));
            parts.push(plan_registrable_condition(action));
            parts.join(" && ")
        }
        // `other_operation`: a name outside the table, known to the catalog or to no one.
        None => r#"(context.design.provenance == "server_only" ||
            (context.design.provenance == "unknown" && !context.design.read_only && context.design.destructive))"#
            .to_string(),
    }
}

/// `design.plan_registrable` holds only for a finalize_plan whose scope is not `project`.
fn plan_registrable_condition(action: &str) -> String {
    if action == "finalize_plan" {
        r#"(!context.design.plan_registrable || context.design.arguments.scope != "project")"#
            .to_string()
    } else {
        "!context.design.plan_registrable".to_string()
    }
}

/// The scalar arguments the facts carry: empty unless the operation takes the key, and one
/// of its choices (folded) when the key is a choice.
fn argument_conditions(schema: &ArgumentSchema) -> Vec<String> {
    ["scope", "role", "link_permission", "path"]
        .iter()
        .filter_map(|name| {
            let attribute = format!("context.design.arguments.{name}");
            match schema.key(name).map(|key| key.kind) {
                None => Some(format!("{attribute} == \"\"")),
                Some(ArgumentKind::Choice { values, .. }) => {
                    let choices: Vec<String> = std::iter::once(String::new())
                        .chain(values.iter().map(|value| value.to_lowercase()))
                        .map(|value| format!("{value:?}"))
                        .collect();
                    Some(format!("[{}].contains({attribute})", choices.join(", ")))
                }
                Some(_) => None,
            }
        })
        .collect()
}

/// A Projects method is its action; it names what the method needs, and only a write has a
/// content source.
fn method_condition(action: &str) -> String {
    let mut parts = vec![format!("context.projects.method == \"{action}\"")];
    match action {
        "project_read" | "project_delete" => parts.push(r#"context.projects.path != """#.into()),
        "project_search" => parts.push(r#"context.projects.query != """#.into()),
        _ => {}
    }
    parts.push(match action {
        // Only a read or a delete names an upload; with observations a path is looked up.
        "project_read" | "project_delete" => r#"(context.projects.target_kind != "unknown" || ["unknown", "session_token"].contains(context.projects.credential))"#.into(),
        "project_write" => r#"context.projects.target_kind != "upload" && (context.projects.target_kind != "unknown" || ["unknown", "session_token"].contains(context.projects.credential))"#.into(),
        _ => r#"context.projects.target_kind == "unknown""#.to_string(),
    });
    if action == "project_write" {
        parts.push(r#"context.projects.path != "" && context.projects.source != "none""#.into());
    } else {
        parts.push(r#"context.projects.source == "none""#.into());
    }
    parts.join(" && ")
}

fn design_condition() -> String {
    [
        r#"["unknown", "granted", "refused"].contains(context.design.consent)"#,
        r#"["granted", "not_granted", "unavailable"].contains(context.design.grant.server)"#,
        r#"["pass", "not_plan_gated", "unenumerable", "no_targets", "too_many", "blocked"].contains(context.design.targets.verdict)"#,
        r#"["writes", "deletes", "none"].contains(context.design.targets.set)"#,
        r#"(context.design.has_project_id || context.design.project_id == "")"#,
    ]
    .join(" && ")
}

fn projects_condition() -> String {
    [
        r#"["session_token", "scoped", "unscoped", "unknown"].contains(context.projects.credential)"#,
        r#"["doc", "upload", "missing", "unknown"].contains(context.projects.target_kind)"#,
        r#"["content", "local_path", "none"].contains(context.projects.source)"#,
        r#"["none", "unknown", "root_unset", "outside_root", "unresolved", "service_file", "under_root"].contains(context.projects.local_path_place)"#,
        r#"(context.projects.source == "local_path") == (context.projects.local_path_place != "none")"#,
        r#"(context.projects.source == "content") == context.projects.size_known"#,
        "context.projects.content_bytes >= 0",
        &format!("context.projects.content_bytes <= {MAX_CONTENT_BYTES}"),
        "(context.projects.size_known || context.projects.content_bytes == 0)",
        // Bounded before multiplying: a guard that overflowed would err and be skipped.
        "context.projects.estimated_tokens >= 0",
        &format!("context.projects.estimated_tokens <= {MAX_CONTENT_BYTES}"),
        "context.projects.estimated_tokens * 4 >= context.projects.content_bytes",
        "context.projects.estimated_tokens * 4 < context.projects.content_bytes + 4",
        "context.projects.knowledge_size >= 0",
        "context.projects.max_knowledge_size >= 0",
        "(context.projects.knowledge_known || (context.projects.knowledge_size == 0 && context.projects.max_knowledge_size == 0))",
        // Without observations the credential is unknown and nothing about the project is.
        r#"(context.projects.credential != "unknown" || (context.projects.target_kind == "unknown" && !context.projects.knowledge_known && ["none", "unknown"].contains(context.projects.local_path_place)))"#,
        "context.projects.n >= 1",
        "context.projects.n <= 15",
    ]
    .join(" && ")
}
