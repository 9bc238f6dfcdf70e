//! scenario: the JSON scenario format shared by `askgate check`, `askgate test` and the
//! corpus (`tests/scenarios/`): one call with its session, environment and state, decided on
//! a fixed clock, with an optional `expect` block. Wire types only; the decision is `authz`.

pub mod expect;
pub mod run;
pub mod suite;

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::facts::{Environment, ProjectsObservations, ServerGrants, Session};

pub use expect::{Expectation, Mismatch};
pub use run::{run, Outcome as ScenarioOutcome, ScenarioError};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// The clock of the decision, RFC 3339.
    pub now: String,
    /// Its caller may claim anything unless `session.caller` says otherwise.
    #[serde(default = "scenario_default_session")]
    pub session: Session,
    #[serde(default)]
    pub environment: Environment,
    #[serde(default)]
    pub state: ScenarioState,
    pub call: ScenarioCall,
    /// Managed policy files added to the baseline for this scenario (paths from the working
    /// directory, e.g. `policies/examples/reserve-secrets.cedar`).
    #[serde(default)]
    pub policy_files: Vec<String>,
    #[serde(default)]
    pub expect: Option<Expectation>,
}

/// The session of a scenario that states none: the defaults, stated by a caller that may claim
/// anything.
fn scenario_default_session() -> Session {
    Session {
        caller: crate::facts::CallerFacts::unrestricted(),
        ..Session::default()
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioCall {
    pub tool: String,
    pub input: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioPlan {
    pub token: String,
    pub project_id: String,
    #[serde(default)]
    pub writes: Vec<String>,
    #[serde(default)]
    pub deletes: Vec<String>,
    pub expires_at: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ScenarioState {
    /// `null` = unknown.
    pub consent: Option<bool>,
    pub plans: Vec<ScenarioPlan>,
    pub verified_grants: Vec<String>,
    pub server_grants: ServerGrants,
    pub grant_ineligible: Vec<String>,
    pub recard: Vec<String>,
    pub recard_all: bool,
    pub project_identity: BTreeMap<String, serde_json::Value>,
    #[serde(deserialize_with = "present")]
    pub catalog: Option<serde_json::Value>,
    pub projects: Option<ProjectsObservations>,
}

/// Keeps an explicit `null` distinct from an absent field (`Some(Null)` vs `None`).
pub(crate) fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(deserializer).map(|value| match value {
        serde_json::Value::Null => None,
        other => Some(other),
    })
}
