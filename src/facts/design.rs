//! facts::design: gathers the facts of one validated Design call — operation hints, target
//! enumeration and limits, the plan registered under its token, grant bookkeeping, the
//! sanitized project identity and consent — into the Cedar context. Decides nothing.

use std::collections::BTreeSet;
use std::sync::Arc;

use time::OffsetDateTime;

use super::{DesignObservations, Environment, Session};
use crate::authz::context::{
    CallContext, DesignArgumentsContext, DesignContext, GrantContext, PlanContext, SurfaceContext,
};
use crate::authz::{CallFacts, CallSummary, EntityRef};
use crate::call::{static_operation, DesignCall, Provenance};
use crate::identity::{sanitize_identity, ProjectIdentity};
use crate::paths::{normalize, PathSet};
use crate::state::{ConsentState, DesignStores};

pub const WORKSPACE: &str = "claude.ai/design";

pub fn gather(
    call: &DesignCall,
    session: &Session,
    environment: &Environment,
    state: DesignStores<'_>,
    observed: &DesignObservations,
    now: OffsetDateTime,
) -> CallFacts {
    let project_id = call.project_id().unwrap_or("").to_string();
    let targets = super::targets::targets(&call.operation, &call.arguments);
    let identity = identity(&project_id, observed);
    let design = DesignContext {
        operation: call.operation.clone(),
        provenance: provenance(call.hints.provenance).to_string(),
        read_only: call.hints.read_only,
        destructive: call.hints.destructive,
        has_project_id: !project_id.is_empty(),
        tokenless: call.is_tokenless(),
        arguments: arguments(call),
        consent: consent(state.consent.state()).to_string(),
        plan: plan(call, state),
        grant: grant(&project_id, state, observed),
        identity_verified: identity.is_some(),
        sharing_scope: identity
            .as_ref()
            .map(|id| id.sharing_scope.clone())
            .unwrap_or_default(),
        targets: targets.context,
        plan_registrable: plan_registrable(call, &project_id),
        project_id: project_id.clone(),
    };
    let summary = summary(call, &project_id, targets.normalized);
    CallFacts {
        principal: EntityRef::new("Agent", session.principal_id()),
        action: action(call),
        resource: if project_id.is_empty() {
            EntityRef::new("DesignWorkspace", WORKSPACE)
        } else {
            EntityRef::new("DesignProject", project_id)
        },
        context: Arc::new(CallContext {
            approvals: BTreeSet::new(),
            now: unix_millis(now),
            caller: session.caller.to_context(),
            session: session.to_context(),
            environment: environment.to_context(),
            surface: SurfaceContext::Design(Box::new(design)),
        }),
        targets: targets.facts,
        identity,
        summary,
    }
}

pub fn unix_millis(time: OffsetDateTime) -> i64 {
    i64::try_from(time.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// Operations of the static table are their own Cedar action; any other is `other_operation`.
fn action(call: &DesignCall) -> String {
    match static_operation(&call.operation) {
        Some(operation) => operation.name.to_string(),
        None => "other_operation".to_string(),
    }
}

fn provenance(provenance: Provenance) -> &'static str {
    match provenance {
        Provenance::Static => "static",
        Provenance::ServerOnly => "server_only",
        Provenance::Unknown => "unknown",
    }
}

fn consent(state: ConsentState) -> &'static str {
    match state {
        ConsentState::Unknown => "unknown",
        ConsentState::Granted => "granted",
        ConsentState::Refused => "refused",
    }
}

/// Enum-valued arguments are matched case-insensitively, so they are given folded.
fn arguments(call: &DesignCall) -> DesignArgumentsContext {
    // Trimmed as validation trims a choice (JavaScript `trim()`, which also removes U+FEFF),
    // so a padded value that validation accepts is the choice it names.
    let folded = |key: &str| {
        call.string_argument(key)
            .unwrap_or("")
            .trim_matches(crate::paths::is_js_whitespace)
            .to_lowercase()
    };
    DesignArgumentsContext {
        scope: folded("scope"),
        role: folded("role"),
        link_permission: folded("link_permission"),
        path: call.string_argument("path").unwrap_or("").to_string(),
    }
}

fn plan(call: &DesignCall, state: DesignStores<'_>) -> PlanContext {
    let found = call.plan_token().and_then(|token| state.plan(token));
    match found {
        Some(plan) => PlanContext {
            found: true,
            project_id: plan.project_id,
            writes: plan.writes,
            deletes: plan.deletes,
            expires_at: unix_millis(plan.expires_at),
        },
        None => PlanContext {
            found: false,
            project_id: String::new(),
            writes: PathSet::default(),
            deletes: PathSet::default(),
            expires_at: 0,
        },
    }
}

/// Whether a finalize_plan's plan could be registered once approved (§3 `g0f`: not scope
/// `project`, `znS` on the project, `jnS` on the raw writes and deletes); false for any other
/// operation. The session
/// half of registration is `session.may_record`.
fn plan_registrable(call: &DesignCall, project_id: &str) -> bool {
    let raw = |key: &str| -> Vec<String> { string_items(call, key).map(str::to_string).collect() };
    call.operation == "finalize_plan"
        && call.string_argument("scope") != Some("project")
        && crate::paths::plan_registrable(project_id, &raw("writes"), &raw("deletes"))
}

fn grant(project_id: &str, state: DesignStores<'_>, observed: &DesignObservations) -> GrantContext {
    GrantContext {
        verified: !project_id.is_empty() && state.grants.is_verified(project_id),
        server: observed.server_grants.status(project_id).to_string(),
        recard: !project_id.is_empty() && state.grants.needs_recard(project_id),
        ineligible: !project_id.is_empty() && state.grants.is_ineligible(project_id),
    }
}

fn identity(project_id: &str, observed: &DesignObservations) -> Option<ProjectIdentity> {
    if project_id.is_empty() {
        return None;
    }
    let raw = observed.project_identity.get(project_id)?;
    sanitize_identity(project_id, raw).ok()
}

fn summary(call: &DesignCall, project_id: &str, targets: Arc<[String]>) -> CallSummary {
    let listed = |key: &str| -> Vec<String> { string_items(call, key).map(normalize).collect() };
    let is_finalize = call.operation == "finalize_plan";
    CallSummary {
        tool: "ClaudeDesign".to_string(),
        operation: call.operation.clone(),
        project_id: (!project_id.is_empty()).then(|| project_id.to_string()),
        targets,
        plan_writes: if is_finalize {
            listed("writes")
        } else {
            Vec::new()
        },
        plan_deletes: if is_finalize {
            listed("deletes")
        } else {
            Vec::new()
        },
        writes: !call.hints.read_only,
    }
}

/// The string elements of the array argument `key` (none when it is absent or not an array).
fn string_items<'a>(call: &'a DesignCall, key: &str) -> impl Iterator<Item = &'a str> {
    call.arguments
        .get(key)
        .and_then(|value| value.as_array())
        .into_iter()
        .flatten()
        .filter_map(|item| item.as_str())
}
