//! facts::projects: gathers the facts of one validated Projects call — the attached project,
//! the credential, where a write lands (client-facts §10.3 lTf), what a read or delete names,
//! where a `local_path` lies, and the knowledge-budget estimate — into the Cedar context.
//! Decides nothing.

use std::collections::BTreeSet;

use time::OffsetDateTime;

use super::design::unix_millis;
use super::observations::LocalPathPlace;
use super::{Environment, ProjectsObservations, Session};
use crate::authz::context::{CallContext, ProjectsContext, SurfaceContext};
use crate::authz::{CallFacts, CallSummary, EntityRef};
use crate::call::{ProjectsCall, ProjectsMethod, WriteSource};

pub const PROJECT_READ_SCOPE: &str = "user:projects:read";
pub const PROJECT_WRITE_SCOPE: &str = "user:projects:write";

pub fn gather(
    call: &ProjectsCall,
    session: &Session,
    environment: &Environment,
    observed: Option<&ProjectsObservations>,
    now: OffsetDateTime,
) -> CallFacts {
    let path = call.path.clone().unwrap_or_default();
    let (source, size_known, content_bytes) = source(call, observed);
    // Project data counts only when the detail was read; scopes are known either way.
    let detail = observed.filter(|data| !data.detail_unavailable);
    let estimated_tokens = content_bytes.div_ceil(4);
    let (resolved_path, target_kind) = target(call.method, &path, detail);
    let projects = ProjectsContext {
        method: call.method.as_str().to_string(),
        attached: environment.attached_project().is_some(),
        credential: credential(environment, observed).to_string(),
        path: path.clone(),
        resolved_path,
        target_kind: target_kind.to_string(),
        source: source.to_string(),
        local_path_place: local_path_place(call, observed).to_string(),
        size_known,
        content_bytes: i64::try_from(content_bytes).unwrap_or(i64::MAX),
        estimated_tokens: i64::try_from(estimated_tokens).unwrap_or(i64::MAX),
        detail_known: detail.is_some(),
        knowledge_known: detail
            .is_some_and(|data| data.knowledge_size.is_some() && data.max_knowledge_size.is_some()),
        knowledge_size: detail.and_then(|data| data.knowledge_size).unwrap_or(0),
        max_knowledge_size: detail.and_then(|data| data.max_knowledge_size).unwrap_or(0),
        query: call.query.clone().unwrap_or_default(),
        n: i64::from(call.n),
    };
    let attached = environment.attached_project().unwrap_or("none").to_string();
    CallFacts {
        principal: EntityRef::new("Agent", session.principal_id()),
        action: call.method.as_str().to_string(),
        resource: EntityRef::new("AttachedProject", attached.clone()),
        context: std::sync::Arc::new(CallContext {
            approvals: BTreeSet::new(),
            now: unix_millis(now),
            caller: session.caller.to_context(),
            session: session.to_context(),
            environment: environment.to_context(),
            surface: SurfaceContext::Projects(Box::new(projects)),
        }),
        targets: std::sync::Arc::default(),
        identity: None,
        summary: CallSummary {
            tool: "Projects".to_string(),
            operation: call.method.as_str().to_string(),
            project_id: environment.attached_project().map(str::to_string),
            targets: call.path.iter().cloned().collect(),
            plan_writes: Vec::new(),
            plan_deletes: Vec::new(),
            writes: call.method.is_destructive(),
        },
    }
}

/// Where the content comes from and its size when known before the request. A `local_path`'s
/// size is the one stat'ed for this decision (the executor reads only that same file).
fn source(
    call: &ProjectsCall,
    observed: Option<&ProjectsObservations>,
) -> (&'static str, bool, u64) {
    let stat = observed.and_then(|data| data.local_file);
    match &call.source {
        Some(WriteSource::Content(content)) => (
            "content",
            true,
            u64::try_from(content.len()).unwrap_or(u64::MAX),
        ),
        Some(WriteSource::LocalPath(_)) => match stat {
            Some(stat) => ("local_path", true, stat.bytes),
            None => ("local_path", false, 0),
        },
        None => ("none", false, 0),
    }
}

/// Where a `local_path` lies, as observed for this decision: `none` without one, `unknown` when
/// nothing was observed (the policies refuse every place but `under_root`).
fn local_path_place(call: &ProjectsCall, observed: Option<&ProjectsObservations>) -> &'static str {
    match &call.source {
        Some(WriteSource::LocalPath(_)) => observed
            .map_or(LocalPathPlace::Unknown, |data| data.local_path_place)
            .as_str(),
        _ => "none",
    }
}

fn credential(environment: &Environment, observed: Option<&ProjectsObservations>) -> &'static str {
    if environment.session_token {
        return "session_token";
    }
    match observed {
        None => "unknown",
        Some(data) => {
            let has = |scope: &str| data.scopes.iter().any(|held| held == scope);
            if has(PROJECT_READ_SCOPE) && has(PROJECT_WRITE_SCOPE) {
                "scoped"
            } else {
                "unscoped"
            }
        }
    }
}

/// The resolved write path and what the path names: `doc`, `upload`, `missing`, `unknown`.
fn target(
    method: ProjectsMethod,
    path: &str,
    observed: Option<&ProjectsObservations>,
) -> (String, &'static str) {
    let Some(data) = observed else {
        let resolved = if method == ProjectsMethod::ProjectWrite {
            resolve_write(path, None)
        } else {
            String::new()
        };
        return (resolved, "unknown");
    };
    let is_doc = |name: &str| data.docs.iter().any(|doc| doc.path == name);
    match method {
        ProjectsMethod::ProjectWrite => {
            let resolved = resolve_write(path, Some(data));
            let kind = if is_doc(&resolved) { "doc" } else { "missing" };
            (resolved, kind)
        }
        ProjectsMethod::ProjectRead | ProjectsMethod::ProjectDelete => {
            let kind = if is_doc(path) {
                "doc"
            } else if data.files.iter().any(|file| file.path == path) {
                "upload"
            } else {
                "missing"
            };
            (String::new(), kind)
        }
        _ => (String::new(), "unknown"),
    }
}

/// client-facts §10.3 lTf: strip one leading `./`; an exact match of an existing text doc is
/// replaced in place; else a path with `/` is used as-is; else it goes under `claude/`.
pub fn resolve_write(path: &str, observed: Option<&ProjectsObservations>) -> String {
    let stripped = path.strip_prefix("./").unwrap_or(path);
    let existing = observed.is_some_and(|data| data.docs.iter().any(|doc| doc.path == stripped));
    if existing || stripped.contains('/') {
        stripped.to_string()
    } else {
        format!("claude/{stripped}")
    }
}
