//! facts: everything known about one call, gathered from the validated call, the session
//! facts, the environment, the session stores and upstream observations. Pure analysis and
//! lookups: it decides nothing (the policies do) and reads no clock (time is passed in).
//!
//! Map: `session` and `environment` (the caller-supplied facts), `observations` (what the
//! upstream said: server grants, project identities, catalog, project data), `design` and
//! `projects` (per-surface gathering), `targets` (a Design call's target facts, remembered by
//! path list), `entity` (Cedar entity references).

pub mod design;
pub mod entity;
pub mod environment;
pub mod observations;
pub mod projects;
pub mod session;
pub mod targets;

use serde::{Deserialize, Serialize};

pub use entity::EntityRef;
pub use environment::Environment;
pub use observations::{DesignObservations, Observations, ProjectsObservations, ServerGrants};
pub use session::{AgentKind, Attestation, Mode, Session};

use crate::authz::context::CallContext;
use crate::identity::ProjectIdentity;
use crate::paths::TargetFacts;

/// Everything `decide` needs, and everything a decision log must keep to replay it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFacts {
    pub principal: EntityRef,
    /// The Cedar action id (an operation or method name, or `other_operation`).
    pub action: String,
    pub resource: EntityRef,
    /// The request context with no approvals; target verdict before target policies.
    pub context: std::sync::Arc<CallContext>,
    /// The Design target paths in argument order (empty when not enumerable or over 256).
    pub targets: std::sync::Arc<Vec<TargetFacts>>,
    /// The project's sanitized, server-verified identity, when it could be built.
    pub identity: Option<ProjectIdentity>,
    pub summary: CallSummary,
}

/// What the call is, for cards and logs: never file bodies or tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSummary {
    pub tool: String,
    pub operation: String,
    pub project_id: Option<String>,
    /// Normalized target paths in argument order (Design), or the path (Projects).
    pub targets: std::sync::Arc<[String]>,
    /// finalize_plan's requested writes and deletes, normalized.
    pub plan_writes: Vec<String>,
    pub plan_deletes: Vec<String>,
    /// The call writes (not read-only).
    pub writes: bool,
}
