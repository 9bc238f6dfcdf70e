//! authz::context: the typed Cedar request contexts, field for field as in
//! `schema/askgate.cedarschema`. One source of truth: serialized to JSON for decision records
//! and replay, converted to Cedar values for evaluation (never through Cedar's slow JSON path).

use std::collections::BTreeSet;

use cedar_policy::Context;
use serde::{Deserialize, Serialize};

use super::cache::project::{cedar_context, impl_fact, Attributes, Fact};
use super::cache::reads::Tree;
use super::EvaluationError;
use crate::paths::{PathSet, TargetFacts};
use crate::state::usage::UsageFacts;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionContext {
    pub agent: String,
    pub agent_id: String,
    pub mode: String,
    pub interactive: bool,
    pub permission_hook: bool,
    pub bypass_available: bool,
    /// Derived once from the facts above (`facts::session`).
    #[serde(default)]
    pub bypass: bool,
    #[serde(default)]
    pub may_record: bool,
    /// `none` | `attested` | `unattested` (`facts::session::Attestation`).
    #[serde(default = "no_attestation")]
    pub attestation: String,
    #[serde(default)]
    pub attestation_required: bool,
}

/// Who the call comes from, as askgate verified it, and what it may claim
/// (`facts::caller::CallerFacts`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerContext {
    pub principal: String,
    pub modes: BTreeSet<String>,
    pub agents: BTreeSet<String>,
    /// The person's groups (`callers[].groups`, or the IdP token's groups claim).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub groups: BTreeSet<String>,
    /// The person's email (`callers[].email`, or the IdP token's email claim), or "".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub email: String,
    /// What the principal did lately (`state::usage`).
    #[serde(default, skip_serializing_if = "UsageFacts::is_zero")]
    pub usage: UsageFacts,
    /// The OAuth client the caller's token was issued to (`azp`, `client_id`), or "".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client: String,
    /// The party acting for the principal now (the RFC 8693 `act` claim's `iss|sub`), or ""
    /// when the principal acts itself.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actor: String,
    /// Every party of the `act` chain, the one acting now first (a set to the policies; the
    /// log keeps the order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actors: Vec<String>,
    /// The OAuth scopes the caller's token was granted (`scope`/`scp`), or a static caller's
    /// configured `scopes`; what a `@step_up` policy asks for.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub scopes: BTreeSet<String>,
}

fn no_attestation() -> String {
    "none".to_string()
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentContext {
    pub provider: String,
    pub essential_traffic_only: bool,
    pub design_sync: String,
    pub projects_tool: String,
    pub compliance_taints: BTreeSet<String>,
    pub feature_flags: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetsContext {
    pub verdict: String,
    pub set: String,
    pub paths: PathSet,
    pub count: i64,
    pub fits_batch_display: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanContext {
    pub found: bool,
    pub project_id: String,
    pub writes: PathSet,
    pub deletes: PathSet,
    pub expires_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantContext {
    pub verified: bool,
    pub server: String,
    pub recard: bool,
    pub ineligible: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DesignArgumentsContext {
    pub scope: String,
    pub role: String,
    pub link_permission: String,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DesignContext {
    pub operation: String,
    pub provenance: String,
    pub read_only: bool,
    pub destructive: bool,
    pub project_id: String,
    pub has_project_id: bool,
    pub tokenless: bool,
    pub arguments: DesignArgumentsContext,
    pub consent: String,
    pub targets: TargetsContext,
    pub plan: PlanContext,
    pub grant: GrantContext,
    pub identity_verified: bool,
    pub sharing_scope: String,
    /// finalize_plan's plan can be registered (§3 `jnS`, `znS`); false for other operations.
    #[serde(default)]
    pub plan_registrable: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectsContext {
    pub method: String,
    pub attached: bool,
    pub credential: String,
    pub path: String,
    pub resolved_path: String,
    pub target_kind: String,
    pub source: String,
    /// Where a `local_path` lies on askgate's machine (N1): `none` without one, else
    /// `unknown`, `root_unset`, `outside_root`, `unresolved`, `service_file` or `under_root`.
    pub local_path_place: String,
    /// The attached Project's detail was read for this decision (C11).
    #[serde(default)]
    pub detail_known: bool,
    pub size_known: bool,
    pub content_bytes: i64,
    pub estimated_tokens: i64,
    pub knowledge_known: bool,
    pub knowledge_size: i64,
    pub max_knowledge_size: i64,
    pub query: String,
    pub n: i64,
}

/// The surface-specific part of a call context.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SurfaceContext {
    Design(Box<DesignContext>),
    Projects(Box<ProjectsContext>),
}

/// The context of a Design or Projects call request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CallContext {
    pub approvals: BTreeSet<String>,
    pub now: i64,
    pub caller: CallerContext,
    pub session: SessionContext,
    pub environment: EnvironmentContext,
    #[serde(flatten)]
    pub surface: SurfaceContext,
}

/// The context of one target-path classification request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetContext {
    pub path: String,
    pub lowercase: String,
    pub segments: BTreeSet<String>,
    pub rejected_character: bool,
    pub normalizes: bool,
    pub default_ignorable: bool,
    pub skeleton: String,
    pub skeleton_segments: BTreeSet<String>,
    pub project_id: String,
    pub operation: String,
}

impl_fact!(CallerContext; principal, modes, agents, groups, email, usage, client, actor, actors,
    scopes);
impl_fact!(UsageFacts; calls_minute, calls_hour, calls_day, writes_hour, writes_day, deletes_day,
    asks_hour, identical_minute, operation_calls_hour, operation_calls_day,
    person_calls_hour, person_calls_day, session_calls_hour, denies_hour, denies_day, uploaded_bytes_hour,
    uploaded_bytes_day, rate_limited, retry_after_seconds, known);
impl_fact!(SessionContext; agent, agent_id, mode, interactive, permission_hook, bypass_available,
    bypass, may_record, attestation, attestation_required);
impl_fact!(EnvironmentContext; provider, essential_traffic_only, design_sync, projects_tool,
    compliance_taints, feature_flags);
impl_fact!(TargetsContext; verdict, set, paths, count, fits_batch_display);
impl_fact!(PlanContext; found, project_id, writes, deletes, expires_at);
impl_fact!(GrantContext; verified, server, recard, ineligible);
impl_fact!(DesignArgumentsContext; scope, role, link_permission, path);
impl_fact!(DesignContext; operation, provenance, read_only, destructive, project_id,
    has_project_id, tokenless, arguments, consent, targets, plan, grant, identity_verified,
    sharing_scope, plan_registrable);
impl_fact!(ProjectsContext; method, attached, credential, path, resolved_path, target_kind,
    source, local_path_place, detail_known, size_known, content_bytes, estimated_tokens, knowledge_known, knowledge_size,
    max_knowledge_size, query, n);
impl_fact!(TargetContext; path, lowercase, segments, rejected_character, normalizes,
    default_ignorable, skeleton, skeleton_segments, project_id, operation);

/// A call context's attributes: its surface is `design` or `projects`.
impl Attributes for CallContext {
    const NAMES: &'static [&'static str] = &[
        "approvals",
        "now",
        "caller",
        "session",
        "environment",
        "design",
        "projects",
    ];

    fn attribute(&self, name: &str) -> Option<&dyn Fact> {
        let context = self;
        match (name, &context.surface) {
            ("approvals", _) => Some(&context.approvals),
            ("now", _) => Some(&context.now),
            ("caller", _) => Some(&context.caller),
            ("session", _) => Some(&context.session),
            ("environment", _) => Some(&context.environment),
            ("design", SurfaceContext::Design(design)) => Some(&**design),
            ("projects", SurfaceContext::Projects(projects)) => Some(&**projects),
            _ => None,
        }
    }
}

/// One target of a call as its request reads it, borrowing the call's target facts (the
/// look-alike facts are derived only when a policy reads them).
pub(crate) struct TargetRequestView<'a> {
    pub target: &'a TargetFacts,
    pub project_id: &'a String,
    pub operation: &'a String,
}

impl Attributes for TargetRequestView<'_> {
    // The order of `TargetContext`'s fields: a whole record encodes alike either way.
    const NAMES: &'static [&'static str] = <TargetContext as Attributes>::NAMES;

    fn attribute(&self, name: &str) -> Option<&dyn Fact> {
        let target = self.target;
        Some(match name {
            "path" => &target.normalized,
            "lowercase" => &target.lowercase,
            "segments" => &target.folded_segments,
            "rejected_character" => flag(target.rejected_character.is_some()),
            "normalizes" => &target.normalizes,
            "default_ignorable" => flag(target.look_alike().default_ignorable),
            "skeleton" => &target.look_alike().skeleton,
            "skeleton_segments" => &target.look_alike().skeleton_segments,
            "project_id" => self.project_id,
            "operation" => self.operation,
            _ => return None,
        })
    }
}

fn flag(value: bool) -> &'static bool {
    if value {
        &true
    } else {
        &false
    }
}

impl TargetContext {
    /// The context of one target of a call.
    pub fn of(target: &TargetFacts, project_id: &str, operation: &str) -> Self {
        let look_alike = target.look_alike();
        Self {
            path: target.normalized.clone(),
            lowercase: target.lowercase.clone(),
            segments: target.folded_segments.iter().cloned().collect(),
            rejected_character: target.rejected_character.is_some(),
            normalizes: target.normalizes,
            default_ignorable: look_alike.default_ignorable,
            skeleton: look_alike.skeleton.clone(),
            skeleton_segments: look_alike.skeleton_segments.iter().cloned().collect(),
            project_id: project_id.to_string(),
            operation: operation.to_string(),
        }
    }

    /// The whole Cedar context (for requests built from a context rather than a call).
    pub(crate) fn to_cedar_context(&self) -> Result<Context, EvaluationError> {
        cedar_context(self, &Tree::Whole)
    }
}
