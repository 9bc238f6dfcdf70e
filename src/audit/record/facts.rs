//! audit::record::facts: the facts of a decision as the log holds them (`FactsV1`: format 1's
//! type, which format 2 writes without what is empty or said elsewhere), converted at
//! the boundary from and to the domain's `CallFacts`. The request context is logged as the JSON
//! object the schema of the day shapes (`context`: written straight from the decided one), so a fact added later is not a format change: an old
//! record that lacks it is completed by `upgrade` before it becomes a `CallContext`. Target
//! facts are recomputed from the logged raw path and then overlaid with the logged values, so a
//! target fact added later is derived for old records too. It converts only; it must not decide.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::context::LoggedContext;
use super::upgrade;
use crate::authz::context::CallContext;
use crate::authz::{CallFacts, CallSummary, EntityRef};
use crate::identity::ProjectIdentity;
use crate::paths::TargetFacts;

/// A logged record's facts cannot be turned back into facts to decide on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactsError {
    #[error("the logged context cannot be read: {0}")]
    Context(String),
    #[error("the context cannot be logged: {0}")]
    Encode(String),
}

/// Everything replay needs to decide the call again (format 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactsV1 {
    pub principal: EntityV1,
    pub action: String,
    pub resource: EntityV1,
    /// The Cedar request context (without approvals granted), shaped as `schema/` declares it.
    pub context: LoggedContext,
    /// Format 2 leaves out no targets, no identity and a summary with nothing of its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetV1>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<IdentityV1>,
    #[serde(default, skip_serializing_if = "SummaryV1::is_empty")]
    pub summary: SummaryV1,
}

impl Eq for FactsV1 {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityV1 {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

/// One Design target path and the facts the target policies read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetV1 {
    pub raw: String,
    pub normalized: String,
    pub lowercase: String,
    pub folded_segments: Vec<String>,
    pub rejected_character: Option<char>,
    pub normalizes: bool,
}

/// The sanitized, server-verified project identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityV1 {
    pub project_id: String,
    pub name: String,
    pub sharing_scope: String,
    pub sharing_label: String,
    pub url: String,
}

/// What the call is: never file bodies or tokens. Its tool, operation, project and targets
/// are the record's own (`DecisionRecord::completed`): format 1 wrote them here too, format 2
/// does not, and leaves out empty plan paths and `writes: false`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryV1 {
    #[serde(default, skip_serializing)]
    pub tool: String,
    #[serde(default, skip_serializing)]
    pub operation: String,
    #[serde(default, skip_serializing)]
    pub project_id: Option<String>,
    #[serde(default, skip_serializing)]
    pub targets: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_writes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan_deletes: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writes: bool,
}

impl FactsV1 {
    /// The facts as logged; a non-empty Projects search query is replaced by [`super::REDACTED`]
    /// (queries are free text the agent wrote).
    /// The context is not copied: the record serializes it straight into its line.
    pub fn of(facts: &CallFacts) -> Result<Self, FactsError> {
        Ok(Self {
            principal: EntityV1::of(&facts.principal),
            action: facts.action.clone(),
            resource: EntityV1::of(&facts.resource),
            context: LoggedContext::Decided(Arc::clone(&facts.context)),
            targets: facts.targets.iter().map(TargetV1::of).collect(),
            identity: facts.identity.as_ref().map(IdentityV1::of),
            summary: SummaryV1::of(&facts.summary),
        })
    }

    /// The domain facts to decide on, with any fact added since the record was written filled
    /// in by `upgrade`.
    pub fn to_facts(&self) -> Result<CallFacts, FactsError> {
        let mut context = self.context.to_map();
        upgrade::complete_context(&mut context);
        let context: CallContext = serde_json::from_value(Value::Object(context))
            .map_err(|error| FactsError::Context(error.to_string()))?;
        Ok(CallFacts {
            principal: self.principal.to_entity(),
            action: self.action.clone(),
            resource: self.resource.to_entity(),
            context: Arc::new(context),
            targets: Arc::new(self.targets.iter().map(TargetV1::to_target).collect()),
            identity: self.identity.as_ref().map(IdentityV1::to_identity),
            summary: self.summary.to_summary(),
        })
    }
}

impl EntityV1 {
    fn of(entity: &EntityRef) -> Self {
        Self {
            kind: entity.kind.clone(),
            id: entity.id.clone(),
        }
    }

    fn to_entity(&self) -> EntityRef {
        EntityRef::new(&self.kind, self.id.clone())
    }
}

impl TargetV1 {
    fn of(target: &TargetFacts) -> Self {
        Self {
            raw: target.raw.clone(),
            normalized: target.normalized.clone(),
            lowercase: target.lowercase.clone(),
            folded_segments: target.folded_segments.clone(),
            rejected_character: target.rejected_character,
            normalizes: target.normalizes,
        }
    }

    /// Exactly what was decided on; facts added later (the look-alike facts) are derived
    /// from the recorded normalized path when read.
    fn to_target(&self) -> TargetFacts {
        TargetFacts::given(
            self.raw.clone(),
            self.normalized.clone(),
            self.lowercase.clone(),
            self.folded_segments.clone(),
            self.rejected_character,
            self.normalizes,
        )
    }
}

impl IdentityV1 {
    fn of(identity: &ProjectIdentity) -> Self {
        Self {
            project_id: identity.project_id.clone(),
            name: identity.name.clone(),
            sharing_scope: identity.sharing_scope.clone(),
            sharing_label: identity.sharing_label.clone(),
            url: identity.url.clone(),
        }
    }

    fn to_identity(&self) -> ProjectIdentity {
        ProjectIdentity {
            project_id: self.project_id.clone(),
            name: self.name.clone(),
            sharing_scope: self.sharing_scope.clone(),
            sharing_label: self.sharing_label.clone(),
            url: self.url.clone(),
        }
    }
}

impl SummaryV1 {
    /// Nothing of its own to write (format 2).
    fn is_empty(&self) -> bool {
        self.plan_writes.is_empty() && self.plan_deletes.is_empty() && !self.writes
    }

    fn of(summary: &CallSummary) -> Self {
        Self {
            tool: summary.tool.clone(),
            operation: summary.operation.clone(),
            project_id: summary.project_id.clone(),
            targets: summary.targets.to_vec(),
            plan_writes: summary.plan_writes.clone(),
            plan_deletes: summary.plan_deletes.clone(),
            writes: summary.writes,
        }
    }

    fn to_summary(&self) -> CallSummary {
        CallSummary {
            tool: self.tool.clone(),
            operation: self.operation.clone(),
            project_id: self.project_id.clone(),
            targets: self.targets.clone().into(),
            plan_writes: self.plan_writes.clone(),
            plan_deletes: self.plan_deletes.clone(),
            writes: self.writes,
        }
    }
}
