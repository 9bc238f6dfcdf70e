//! facts::environment: managed settings and the deployment a call runs in (provider,
//! essential-traffic mode, org policy limits, compliance taints, feature flags, the attached
//! project) and their Cedar form. Restrictions are reported as facts; policies decide.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::authz::context::EnvironmentContext;

pub const DESIGN_FLAG: &str = "tengu_omelette_fouet";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Environment {
    pub provider: String,
    pub essential_traffic_only: bool,
    /// The org policy's `restrictions` as key → allowed; `None` when no policy is loaded.
    pub policy_limits: Option<BTreeMap<String, bool>>,
    pub compliance_taints: Vec<String>,
    pub feature_flags: BTreeMap<String, bool>,
    /// `CLAUDE_PROJECT_UUID`: the Projects project attached to the session.
    pub attached_project: Option<String>,
    /// A session access token is present (the CCR route; no scope check).
    pub session_token: bool,
}

impl Default for Environment {
    fn default() -> Self {
        Self {
            provider: "firstParty".to_string(),
            essential_traffic_only: false,
            policy_limits: None,
            compliance_taints: Vec::new(),
            feature_flags: BTreeMap::from([(DESIGN_FLAG.to_string(), true)]),
            attached_project: None,
            session_token: false,
        }
    }
}

impl Environment {
    /// `allowed`, `denied`, or `unlisted` (no policy loaded, or the key not in it).
    pub fn restriction(&self, key: &str) -> &'static str {
        match self
            .policy_limits
            .as_ref()
            .and_then(|limits| limits.get(key))
        {
            Some(true) => "allowed",
            Some(false) => "denied",
            None => "unlisted",
        }
    }

    pub fn attached_project(&self) -> Option<&str> {
        self.attached_project.as_deref().filter(|id| !id.is_empty())
    }

    pub fn to_context(&self) -> EnvironmentContext {
        EnvironmentContext {
            provider: self.provider.clone(),
            essential_traffic_only: self.essential_traffic_only,
            design_sync: self.restriction("allow_design_sync").to_string(),
            projects_tool: self.restriction("allow_projects_tool").to_string(),
            compliance_taints: self.compliance_taints.iter().cloned().collect(),
            feature_flags: self
                .feature_flags
                .iter()
                .filter(|(_, on)| **on)
                .map(|(name, _)| name.clone())
                .collect(),
        }
    }
}
