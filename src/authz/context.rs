//! authz::context: the typed Cedar request contexts, field for field as in
//! `schema/askgate.cedarschema`. One source of truth: serialized to JSON for decision records
//! and replay, converted to Cedar values for evaluation (never through Cedar's slow JSON path).

use std::collections::BTreeSet;

use cedar_policy::{Context, RestrictedExpression};
use serde::{Deserialize, Serialize};

use super::EvaluationError;
use crate::paths::PathSet;

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

/// Conversion of a typed value into a Cedar restricted expression.
pub(crate) trait ToCedar {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError>;
}

impl ToCedar for String {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        Ok(RestrictedExpression::new_string(self.clone()))
    }
}

impl ToCedar for bool {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        Ok(RestrictedExpression::new_bool(*self))
    }
}

impl ToCedar for i64 {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        Ok(RestrictedExpression::new_long(*self))
    }
}

impl ToCedar for BTreeSet<String> {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        Ok(RestrictedExpression::new_set(self.iter().map(|value| {
            RestrictedExpression::new_string(value.clone())
        })))
    }
}

impl ToCedar for PathSet {
    fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
        BTreeSet::to_cedar(self)
    }
}

/// `record!(self; field, field, ...)` builds a Cedar record from the named fields.
macro_rules! record {
    ($value:expr; $($field:ident),+ $(,)?) => {{
        let pairs = vec![$((stringify!($field).to_string(), $value.$field.to_cedar()?)),+];
        RestrictedExpression::new_record(pairs)
            .map_err(|error| EvaluationError::Context(error.to_string()))
    }};
}

macro_rules! impl_record {
    ($type:ty; $($field:ident),+ $(,)?) => {
        impl ToCedar for $type {
            fn to_cedar(&self) -> Result<RestrictedExpression, EvaluationError> {
                record!(self; $($field),+)
            }
        }
    };
}

impl_record!(SessionContext; agent, agent_id, mode, interactive, permission_hook, bypass_available,
    bypass, may_record);
impl_record!(EnvironmentContext; provider, essential_traffic_only, design_sync, projects_tool,
    compliance_taints, feature_flags);
impl_record!(TargetsContext; verdict, set, paths, count, fits_batch_display);
impl_record!(PlanContext; found, project_id, writes, deletes, expires_at);
impl_record!(GrantContext; verified, server, recard, ineligible);
impl_record!(DesignArgumentsContext; scope, role, link_permission, path);
impl_record!(DesignContext; operation, provenance, read_only, destructive, project_id,
    has_project_id, tokenless, arguments, consent, targets, plan, grant, identity_verified,
    sharing_scope);
impl_record!(ProjectsContext; method, attached, credential, path, resolved_path, target_kind,
    source, detail_known, size_known, content_bytes, estimated_tokens, knowledge_known, knowledge_size,
    max_knowledge_size, query, n);

impl CallContext {
    /// The Cedar context; `approvals` replaces the record's own set (the second question).
    pub(crate) fn to_cedar_context(
        &self,
        approvals: &BTreeSet<String>,
    ) -> Result<Context, EvaluationError> {
        let surface = match &self.surface {
            SurfaceContext::Design(design) => ("design".to_string(), design.to_cedar()?),
            SurfaceContext::Projects(projects) => ("projects".to_string(), projects.to_cedar()?),
        };
        let pairs = vec![
            ("approvals".to_string(), approvals.to_cedar()?),
            ("now".to_string(), self.now.to_cedar()?),
            ("session".to_string(), self.session.to_cedar()?),
            ("environment".to_string(), self.environment.to_cedar()?),
            surface,
        ];
        Context::from_pairs(pairs).map_err(|error| EvaluationError::Context(error.to_string()))
    }
}

impl TargetContext {
    /// The context of one target of a call.
    pub fn of(target: &crate::paths::TargetFacts, project_id: &str, operation: &str) -> Self {
        Self {
            path: target.normalized.clone(),
            lowercase: target.lowercase.clone(),
            segments: target.folded_segments.iter().cloned().collect(),
            rejected_character: target.rejected_character.is_some(),
            normalizes: target.normalizes,
            default_ignorable: target.default_ignorable,
            skeleton: target.skeleton.clone(),
            skeleton_segments: target.skeleton_segments.iter().cloned().collect(),
            project_id: project_id.to_string(),
            operation: operation.to_string(),
        }
    }

    /// The Cedar context, taking the strings rather than copying them (one per target).
    pub(crate) fn into_cedar_context(self) -> Result<Context, EvaluationError> {
        let string = RestrictedExpression::new_string;
        let segments = RestrictedExpression::new_set(self.segments.into_iter().map(string));
        let skeleton_segments =
            RestrictedExpression::new_set(self.skeleton_segments.into_iter().map(string));
        let pairs = [
            ("path", string(self.path)),
            ("lowercase", string(self.lowercase)),
            ("segments", segments),
            (
                "rejected_character",
                RestrictedExpression::new_bool(self.rejected_character),
            ),
            (
                "normalizes",
                RestrictedExpression::new_bool(self.normalizes),
            ),
            (
                "default_ignorable",
                RestrictedExpression::new_bool(self.default_ignorable),
            ),
            ("skeleton", string(self.skeleton)),
            ("skeleton_segments", skeleton_segments),
            ("project_id", string(self.project_id)),
            ("operation", string(self.operation)),
        ];
        Context::from_pairs(pairs.map(|(name, value)| (name.to_string(), value)))
            .map_err(|error| EvaluationError::Context(error.to_string()))
    }
}
