//! analysis::wellformed::projects: the facts of a Projects call as `facts::projects::gather`
//! derives them — the method is the action and names what it needs, where a write lands, what
//! the project's detail says (nothing without it), the content's size and its token estimate.

use super::{implies, one_of, parse_all, patterns, Literals};
use crate::analysis::expr::{self, Expr};
use crate::analysis::AnalysisError;
use crate::call::ProjectsMethod;

/// The largest inline `content` a call carries here (well past every front door's body limit).
pub const MAX_CONTENT_BYTES: i64 = 16 << 20;
/// The largest `local_path` file considered (a stat'ed size; far past the 25 MiB read limit).
pub const MAX_FILE_BYTES: i64 = 1 << 40;

/// Every place `facts::observations::LocalPathPlace` names, and `none`.
const PLACES: [&str; 7] = [
    "none",
    "unknown",
    "root_unset",
    "outside_root",
    "unresolved",
    "service_file",
    "under_root",
];

pub(super) fn condition(action: &str, literals: &Literals) -> Result<Expr, AnalysisError> {
    let method = ProjectsMethod::from_name(action).ok_or_else(|| AnalysisError::Compile {
        action: action.to_string(),
        message: "not a Projects method".to_string(),
    })?;
    let mut parts = method_facts(method);
    parts.extend(sizes());
    parts.extend(project());
    let condition = parse_all(&parts)?;
    Ok(if method == ProjectsMethod::ProjectWrite {
        expr::and(
            condition,
            patterns::resolved_ties(&literals.resolved_patterns),
        )
    } else {
        condition
    })
}

/// A Projects method is its action; it names what the method needs, and only a write has a
/// content source and a landing path.
fn method_facts(method: ProjectsMethod) -> Vec<String> {
    let mut parts = vec![format!(
        r#"context.projects.method == "{}""#,
        method.as_str()
    )];
    match method {
        ProjectsMethod::ProjectRead | ProjectsMethod::ProjectDelete => {
            parts.push(r#"context.projects.path != """#.into());
        }
        ProjectsMethod::ProjectSearch => parts.push(r#"context.projects.query != """#.into()),
        ProjectsMethod::ProjectInfo | ProjectsMethod::ProjectWrite => {}
    }
    // Only a read or a delete names an upload; with the detail a path is looked up.
    let looked_up =
        r#"(context.projects.target_kind != "unknown" || !context.projects.detail_known)"#;
    parts.push(match method {
        ProjectsMethod::ProjectRead | ProjectsMethod::ProjectDelete => looked_up.to_string(),
        ProjectsMethod::ProjectWrite => {
            format!(r#"context.projects.target_kind != "upload" && {looked_up}"#)
        }
        ProjectsMethod::ProjectInfo | ProjectsMethod::ProjectSearch => {
            r#"context.projects.target_kind == "unknown""#.to_string()
        }
    });
    if method == ProjectsMethod::ProjectWrite {
        parts.push(r#"context.projects.path != "" && context.projects.source != "none" && context.projects.resolved_path != """#.into());
        // `resolve_write`: one leading `./` is stripped; else the path is kept or put under `claude/`.
        parts.push(implies(
            r#"!(context.projects.path like "./*")"#,
            r#"context.projects.resolved_path == context.projects.path || context.projects.resolved_path like "claude/*""#,
        ));
    } else {
        parts.push(
            r#"context.projects.source == "none" && context.projects.resolved_path == """#.into(),
        );
    }
    parts
}

fn sizes() -> Vec<String> {
    vec![
        one_of("context.projects.source", &["content", "local_path", "none"]),
        // `facts::projects::local_path_place`: `none` exactly without a `local_path`, and
        // `unknown` whenever nothing was observed.
        one_of("context.projects.local_path_place", &PLACES),
        r#"(context.projects.source == "local_path") == (context.projects.local_path_place != "none")"#.to_string(),
        implies(
            r#"context.projects.credential == "unknown""#,
            r#"["none", "unknown"].contains(context.projects.local_path_place)"#,
        ),
        implies(r#"context.projects.source == "content""#, "context.projects.size_known"),
        implies(r#"context.projects.source == "none""#, "!context.projects.size_known"),
        "context.projects.content_bytes >= 0".to_string(),
        implies(
            r#"context.projects.source == "content""#,
            &format!("context.projects.content_bytes <= {MAX_CONTENT_BYTES}"),
        ),
        format!("context.projects.content_bytes <= {MAX_FILE_BYTES}"),
        "(context.projects.size_known || context.projects.content_bytes == 0)".to_string(),
        // A `local_path` file's size is its stat, which comes with the project's observations.
        implies(
            r#"context.projects.source == "local_path" && context.projects.size_known"#,
            r#"context.projects.credential != "unknown""#,
        ),
        // ceil(bytes / 4); bounded before multiplying, so the condition cannot overflow.
        "context.projects.estimated_tokens >= 0".to_string(),
        format!("context.projects.estimated_tokens <= {MAX_FILE_BYTES}"),
        "context.projects.estimated_tokens * 4 >= context.projects.content_bytes".to_string(),
        "context.projects.estimated_tokens * 4 < context.projects.content_bytes + 4".to_string(),
        "context.projects.n >= 1".to_string(),
        "context.projects.n <= 15".to_string(),
    ]
}

/// The credential, the project's detail and what the attached project is called.
fn project() -> Vec<String> {
    vec![
        one_of(
            "context.projects.credential",
            &["session_token", "scoped", "unscoped", "unknown"],
        ),
        one_of(
            "context.projects.target_kind",
            &["doc", "upload", "missing", "unknown"],
        ),
        "context.projects.knowledge_size >= 0".to_string(),
        "context.projects.max_knowledge_size >= 0".to_string(),
        implies(
            "!context.projects.knowledge_known",
            "context.projects.knowledge_size == 0 && context.projects.max_knowledge_size == 0",
        ),
        // Without observations nothing about the project is known.
        implies(
            r#"context.projects.credential == "unknown""#,
            "!context.projects.detail_known",
        ),
        implies(
            "!context.projects.detail_known",
            r#"context.projects.target_kind == "unknown" && !context.projects.knowledge_known"#,
        ),
        // `facts::projects`: the resource is the attached project, or `none`.
        implies(
            "!context.projects.attached",
            r#"resource == AttachedProject::"none""#,
        ),
    ]
}
