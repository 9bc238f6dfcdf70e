//! server::auth::resource: askgate as an OAuth protected resource (RFC 9728, issue 34 §2) —
//! the metadata document a client reads to find the authorization servers that issue tokens
//! for askgate, and where it is published. The resource is the first issuer's `audience`
//! (askgate's own resource URI); every configured issuer is an authorization server, and the
//! scopes that make a token an agent's or an approver's are the scopes supported.

use serde_json::{json, Value};

use super::issuer::IdentityConfig;

/// The path prefix of RFC 9728's well-known metadata.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedResource {
    /// The resource URI tokens must name as their audience.
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes: Vec<String>,
}

impl ProtectedResource {
    /// The resource `identity` describes; `None` without issuers.
    pub fn of(identity: &IdentityConfig) -> Option<Self> {
        let first = identity.issuers.first()?;
        let mut scopes: Vec<String> = identity
            .issuers
            .iter()
            .flat_map(|issuer| {
                issuer
                    .roles
                    .agent_scopes
                    .iter()
                    .chain(&issuer.roles.approver_scopes)
                    .cloned()
            })
            .collect();
        scopes.sort();
        scopes.dedup();
        Some(Self {
            resource: first.audience.clone(),
            authorization_servers: identity
                .issuers
                .iter()
                .map(|issuer| issuer.issuer.clone())
                .collect(),
            scopes,
        })
    }

    /// Where the metadata is published (RFC 9728 §3.1: the well-known prefix inserted between
    /// the host and the resource's path), or `None` when the resource is not a URL.
    pub fn metadata_url(&self) -> Option<String> {
        let url = url::Url::parse(&self.resource).ok()?;
        let host = url.host_str()?;
        let port = url
            .port()
            .map(|port| format!(":{port}"))
            .unwrap_or_default();
        let path = url.path().trim_end_matches('/');
        Some(format!("{}://{host}{port}{WELL_KNOWN}{path}", url.scheme()))
    }

    /// The metadata document.
    pub fn document(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "askgate",
        })
    }
}

/// The `WWW-Authenticate` value of OAuth's step-up answer (RFC 6750 §3.1, MCP 2026-07-28): a
/// 403 `insufficient_scope` naming the scopes a token needs for the call (`@step_up`; scope
/// tokens hold no `"`), with the resource's metadata when askgate is a protected resource.
pub fn insufficient_scope(resource: Option<&ProtectedResource>, scopes: &[String]) -> String {
    let mut challenge = format!(
        "Bearer realm=\"askgate\", error=\"insufficient_scope\", scope=\"{}\"",
        scopes.join(" ")
    );
    if let Some(url) = resource.and_then(ProtectedResource::metadata_url) {
        challenge.push_str(&format!(", resource_metadata=\"{url}\""));
    }
    challenge.push_str(", error_description=\"this call needs a token with more scope\"");
    challenge
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(uri: &str) -> ProtectedResource {
        ProtectedResource {
            resource: uri.into(),
            authorization_servers: vec!["https://idp.test".into()],
            scopes: vec!["askgate:agent".into()],
        }
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_prefix_before_the_path() {
        assert_eq!(
            resource("https://askgate.test/mcp")
                .metadata_url()
                .as_deref(),
            Some("https://askgate.test/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            resource("http://127.0.0.1:8080/").metadata_url().as_deref(),
            Some("http://127.0.0.1:8080/.well-known/oauth-protected-resource")
        );
        assert_eq!(resource("not a url").metadata_url(), None);
    }
}
