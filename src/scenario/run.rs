//! scenario::run: turns a scenario into session stores and observations, validates its call,
//! gathers facts and decides. A call that fails local validation is an input error, never a
//! decision.

use std::sync::Arc;

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::{Scenario, ScenarioState};
use crate::authz::CallFacts;
use crate::authz::{decide, Decision, PolicySnapshot};
use crate::call::{CallError, Catalog, DesignCall, ProjectsCall};
use crate::facts::{self, DesignObservations};
use crate::paths::PathSet;
use crate::state::{ApprovedPlan, DesignState, SessionKey};

/// The session a scenario's call and plans belong to (a scenario describes one session of one
/// principal).
pub fn scenario_session() -> SessionKey {
    SessionKey::new("scenario", "scenario")
}

/// What a scenario came to: a decision, or the call's input error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Decided(Box<Decision>),
    Refused(CallError),
}

/// The scenario itself is malformed (not its call).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    #[error("`{field}` is not an RFC 3339 time: `{value}`")]
    InvalidTime { field: String, value: String },
    #[error("unknown tool `{0}`: use `ClaudeDesign` or `Projects`")]
    UnknownTool(String),
}

impl ScenarioError {
    pub fn field(&self) -> &str {
        match self {
            Self::InvalidTime { field, .. } => field,
            Self::UnknownTool(_) => "call.tool",
        }
    }
}

/// Decides the scenario's call on `snapshot`.
pub fn run(scenario: &Scenario, snapshot: &PolicySnapshot) -> Result<Outcome, ScenarioError> {
    match gather(scenario)? {
        Ok(facts) => Ok(Outcome::Decided(Box::new(decide(&facts, snapshot)))),
        Err(error) => Ok(Outcome::Refused(error)),
    }
}

/// The facts of the scenario's call, or its input error.
pub fn gather(scenario: &Scenario) -> Result<Result<CallFacts, CallError>, ScenarioError> {
    let now = parse_time("now", &scenario.now)?;
    let state = design_state(&scenario.state)?;
    let session = scenario_session();
    let catalog = scenario
        .state
        .catalog
        .as_ref()
        .map(|tools| Arc::new(Catalog::parse(tools)));
    match scenario.call.tool.as_str() {
        "ClaudeDesign" => {
            let call = match DesignCall::parse(scenario.call.input.clone(), catalog.as_deref()) {
                Ok(call) => call,
                Err(error) => return Ok(Err(error)),
            };
            let observed = DesignObservations {
                server_grants: scenario.state.server_grants.clone(),
                project_identity: scenario.state.project_identity.clone(),
                catalog,
            };
            Ok(Ok(facts::design::gather(
                &call,
                &scenario.session,
                &scenario.environment,
                state.stores(&session),
                &observed,
                now,
            )))
        }
        "Projects" => {
            let call = match ProjectsCall::parse(&scenario.call.input) {
                Ok(call) => call,
                Err(error) => return Ok(Err(error)),
            };
            let observed = scenario.state.projects.as_ref();
            Ok(Ok(facts::projects::gather(
                &call,
                &scenario.session,
                &scenario.environment,
                observed,
                now,
            )))
        }
        other => Err(ScenarioError::UnknownTool(other.to_string())),
    }
}

fn parse_time(field: &str, value: &str) -> Result<OffsetDateTime, ScenarioError> {
    OffsetDateTime::parse(value, &Rfc3339).map_err(|_| ScenarioError::InvalidTime {
        field: field.to_string(),
        value: value.to_string(),
    })
}

/// The stores as the scenario describes them, reached through the same events the service uses.
fn design_state(described: &ScenarioState) -> Result<DesignState, ScenarioError> {
    let state = DesignState::default();
    match described.consent {
        Some(true) => state.consent_granted(),
        // Only the cached bit: the scenario describes plans and recard flags itself.
        Some(false) => state.consent.consent_refused(),
        None => {}
    }
    for (index, plan) in described.plans.iter().enumerate() {
        let expires_at = parse_time(
            &format!("state.plans[{index}].expires_at"),
            &plan.expires_at,
        )?;
        state.sessions.restore(
            &scenario_session(),
            ApprovedPlan {
                token: plan.token.clone(),
                project_id: plan.project_id.clone(),
                writes: PathSet::new(plan.writes.iter().cloned().collect()),
                deletes: PathSet::new(plan.deletes.iter().cloned().collect()),
                expires_at,
            },
        );
    }
    // The flags first: they drop verified marks, so a project the scenario lists as verified
    // was verified after them (the human re-approved its card) and keeps both.
    if described.recard_all {
        state.grants.recard_all();
    }
    for project in &described.recard {
        state.grants.recard_flagged(project);
    }
    for project in &described.verified_grants {
        state.grant_verified(project);
    }
    for project in &described.grant_ineligible {
        state.grant_not_eligible(project);
    }
    Ok(state)
}
