//! analysis::concrete: a synthesized Cedar request decided exactly as askgate would decide
//! it — call requests through `authz::decide` (both questions, errors deny, the approval card
//! built from the facts), target requests through the target classification's one evaluation
//! (ordinary = allow, blocked = deny). The solver only proposes requests; this is what
//! reports call a request's answer.

use cedar_policy::{EntityUid, Request};
use serde::Serialize;

use super::answer::Answer;
use crate::authz::context::{CallContext, SurfaceContext, TargetContext};
use crate::authz::evaluate::evaluate;
use crate::authz::{decide, PolicySnapshot};
use crate::authz::{CallFacts, CallSummary, EntityRef};
use crate::identity::ProjectIdentity;

/// A synthesized request in askgate's terms: entities by type and id, the context as JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RawRequest {
    pub principal: EntityRef,
    pub action: String,
    pub resource: EntityRef,
    pub context: serde_json::Value,
}

impl RawRequest {
    /// The request as the solver's model gave it; `None` when a part is missing.
    pub fn of(request: &Request) -> Option<Self> {
        Some(Self {
            principal: entity(request.principal()?),
            action: request.action()?.id().unescaped().to_string(),
            resource: entity(request.resource()?),
            context: request.context()?.to_json_value().ok()?,
        })
    }

    /// The call context with its approvals emptied (the first question's request).
    pub fn call_context(&self) -> Result<CallContext, String> {
        let mut context: CallContext =
            serde_json::from_value(self.context.clone()).map_err(|error| error.to_string())?;
        context.approvals.clear();
        Ok(context)
    }

    pub fn target_context(&self) -> Result<TargetContext, String> {
        serde_json::from_value(self.context.clone()).map_err(|error| error.to_string())
    }
}

fn entity(uid: &EntityUid) -> EntityRef {
    EntityRef::new(&uid.type_name().to_string(), uid.id().unescaped())
}

/// askgate's answer to `request` on `snapshot`.
pub fn decide_raw(request: &RawRequest, snapshot: &PolicySnapshot, target: bool) -> Answer {
    let decided = if target {
        decide_target(request, snapshot)
    } else {
        decide_call(request, snapshot)
    };
    // A request that cannot even be built is denied, as `decide` denies it.
    decided.unwrap_or(Answer::Deny)
}

fn decide_call(request: &RawRequest, snapshot: &PolicySnapshot) -> Result<Answer, String> {
    let context = request.call_context()?;
    let (tool, identity, targets) = match &context.surface {
        SurfaceContext::Design(design) => {
            // A verified identity is what the grant card shows; the facts hold its scope.
            let identity = design.identity_verified.then(|| ProjectIdentity {
                project_id: design.project_id.clone(),
                name: "diff counterexample".to_string(),
                sharing_scope: design.sharing_scope.clone(),
                sharing_label: design.sharing_scope.clone(),
                url: format!("https://claude.ai/design/p/{}", design.project_id),
            });
            let targets: Vec<String> = design.targets.paths.iter().cloned().collect();
            ("ClaudeDesign", identity, targets)
        }
        SurfaceContext::Projects(_) => ("Projects", None, Vec::new()),
    };
    let facts = CallFacts {
        principal: request.principal.clone(),
        action: request.action.clone(),
        resource: request.resource.clone(),
        context: std::sync::Arc::new(context),
        targets: std::sync::Arc::default(),
        identity,
        summary: CallSummary {
            tool: tool.to_string(),
            operation: request.action.clone(),
            project_id: None,
            targets: targets.into(),
            plan_writes: Vec::new(),
            plan_deletes: Vec::new(),
            writes: false,
        },
    };
    Ok(Answer::of(&decide(&facts, snapshot)))
}

fn decide_target(request: &RawRequest, snapshot: &PolicySnapshot) -> Result<Answer, String> {
    let context = request
        .target_context()?
        .to_cedar_context()
        .map_err(|error| error.to_string())?;
    let principal = request.principal.uid().map_err(|error| error.to_string())?;
    let action = EntityRef::action(&request.action)
        .uid()
        .map_err(|error| error.to_string())?;
    let resource = request.resource.uid().map_err(|error| error.to_string())?;
    let answer = evaluate(snapshot, &principal, &action, &resource, context)
        .map_err(|error| error.to_string())?;
    Ok(if answer.is_clean_allow() {
        Answer::Allow
    } else {
        Answer::Deny
    })
}
