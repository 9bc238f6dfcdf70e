//! The `agent_design_projects` consent routes (client-facts §4). It must not cache the bit; the
//! caller owns the consent cache.

use super::{DesignClient, DesignError};
use reqwest::Method;
use serde_json::{json, Value};

const CONSENT_PATH: &str = "/v1/design/consent";
/// The only consent bit the reference knows (`a8a`).
pub const CONSENT_BIT: &str = "agent_design_projects";

impl DesignClient {
    /// The recorded bit; `None` on any failure, any status but 200, or a body without a boolean.
    pub async fn consent(&self) -> Option<bool> {
        let reply = self.control(Method::GET, CONSENT_PATH, None).await.ok()?;
        if reply.status != 200 {
            return None;
        }
        let body: Value = serde_json::from_str(&reply.text).ok()?;
        body.get(CONSENT_BIT).and_then(Value::as_bool)
    }

    /// Records the bit; any non-2xx is an error.
    pub async fn record_consent(&self) -> Result<(), DesignError> {
        let body = json!({"consent": CONSENT_BIT});
        let reply = self
            .control(Method::POST, CONSENT_PATH, Some(&body))
            .await?;
        if (200..300).contains(&reply.status) {
            return Ok(());
        }
        Err(DesignError::http(
            "consent",
            reply.status,
            &reply.text,
            &[&reply.token],
        ))
    }

    /// Revokes the bit; a 404 (nothing recorded) counts as done.
    pub async fn revoke_consent(&self) -> Result<(), DesignError> {
        let body = json!({"consent": CONSENT_BIT});
        let reply = self
            .control(Method::DELETE, CONSENT_PATH, Some(&body))
            .await?;
        if (200..300).contains(&reply.status) || reply.status == 404 {
            return Ok(());
        }
        Err(DesignError::http(
            "consent revoke",
            reply.status,
            &reply.text,
            &[&reply.token],
        ))
    }
}
