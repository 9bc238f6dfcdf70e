//! authz::requests: the exact Cedar requests one decision evaluated — one per distinct
//! target path, then the call's own questions — for `explain`, audits and the benchmarks.
//!
//! The target requests are kept as the call's classification (shared names, the call's target
//! facts, which indices were asked) and rendered one by one only when read: a decision nobody
//! inspects costs nothing per target.

use std::sync::Arc;

use serde::Serialize;

use super::context::{CallContext, TargetContext};
use crate::paths::TargetFacts;

/// Which question a request asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// Is this target path ordinary?
    Target,
    /// Allowed without a human?
    Unapproved,
    /// Allowed if a human approves the kinds asked?
    Approved,
}

/// The context of an evaluated request, as it was given to Cedar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RequestContext {
    Call(Arc<CallContext>),
    /// A target's context, rendered from the call's target facts when serialized (cheap to
    /// keep for hundreds of targets).
    Target(TargetRequest),
}

/// One target of a call: its context is `TargetContext::of(targets[index], ...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRequest {
    pub targets: Arc<Vec<TargetFacts>>,
    pub index: usize,
    pub project_id: Arc<str>,
    pub operation: Arc<str>,
}

impl TargetRequest {
    pub fn context(&self) -> Option<TargetContext> {
        let target = self.targets.get(self.index)?;
        Some(TargetContext::of(target, &self.project_id, &self.operation))
    }
}

impl Serialize for TargetRequest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.context().serialize(serializer)
    }
}

/// One Cedar request as decided. Entities: only the schema's action entities. The context
/// is the whole request context; Cedar was given the part of it that the policies read
/// (`authz::cache::project`), which decides alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvaluatedRequest {
    pub question: Question,
    pub principal: Arc<str>,
    pub action: Arc<str>,
    pub resource: Arc<str>,
    pub context: RequestContext,
}

/// Every request of one decision, in the order asked: targets first, then the call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requests {
    targets: Option<TargetRequests>,
    calls: Vec<EvaluatedRequest>,
}

/// The target requests of one call, rendered on demand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRequests {
    pub principal: Arc<str>,
    pub action: Arc<str>,
    pub resource: Arc<str>,
    pub project_id: Arc<str>,
    pub operation: Arc<str>,
    pub targets: Arc<Vec<TargetFacts>>,
    /// The index in `targets` of each request (the first occurrence of each distinct path).
    pub asked: Arc<[usize]>,
}

impl TargetRequests {
    fn request(&self, index: usize) -> EvaluatedRequest {
        EvaluatedRequest {
            question: Question::Target,
            principal: Arc::clone(&self.principal),
            action: Arc::clone(&self.action),
            resource: Arc::clone(&self.resource),
            context: RequestContext::Target(TargetRequest {
                targets: Arc::clone(&self.targets),
                index,
                project_id: Arc::clone(&self.project_id),
                operation: Arc::clone(&self.operation),
            }),
        }
    }
}

impl Requests {
    pub(crate) fn set_targets(&mut self, targets: TargetRequests) {
        self.targets = Some(targets);
    }

    pub(crate) fn push(&mut self, request: EvaluatedRequest) {
        self.calls.push(request);
    }

    /// Every request in the order asked (target requests are rendered as they are read).
    pub fn iter(&self) -> impl Iterator<Item = EvaluatedRequest> + '_ {
        let targets = self
            .targets
            .iter()
            .flat_map(|targets| targets.asked.iter().map(|&index| targets.request(index)));
        targets.chain(self.calls.iter().cloned())
    }

    pub fn len(&self) -> usize {
        self.targets
            .as_ref()
            .map_or(0, |targets| targets.asked.len())
            + self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Serialize for Requests {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}
