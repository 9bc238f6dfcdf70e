//! Fetching a project's server-side identity for the grant card (client-facts §5.3, `moS`). It
//! must not sanitize or judge the identity; `crate::identity` does that.

use super::DesignClient;
use serde_json::{json, Value};

impl DesignClient {
    /// The first text block of `get_project{project_id}` parsed as JSON; `None` on any failure,
    /// an error result, or a block that is not JSON.
    pub async fn project_identity(&self, project_id: &str) -> Option<Value> {
        let result = self
            .call_tool("get_project", &json!({"project_id": project_id}))
            .await
            .ok()?;
        if result.is_error {
            return None;
        }
        let text = result
            .content
            .iter()
            .find(|block| block.get("type").and_then(Value::as_str) == Some("text"))?
            .get("text")
            .and_then(Value::as_str)?;
        serde_json::from_str(text).ok()
    }
}
