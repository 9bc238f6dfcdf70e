//! authz::input: the decision input — one call's facts as `decide` asks about them and as a
//! decision record keeps them for replay. `facts` gathers it; `authz` decides on it; `audit`
//! logs it. It is a plain value: no lookups, no clock.

use serde::{Deserialize, Serialize};

use super::context::CallContext;
use super::entity::EntityRef;
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
