//! server::config::console: the `console.oidc` section (its owner is `server::console::oidc`) — which of the configured issuers
//! approvers sign in with, as which OAuth client, and where the provider sends them back.
//! Validated beside the identity configuration it leans on: the issuer must be one of
//! `identity.issuers` (its keys, claim names and role mapping are the ones used) and must map
//! approvers by group, since an ID token carries the person's groups but no scopes.

use serde::Deserialize;

use super::ConfigError;
use crate::server::auth::issuer::check_url;
use crate::server::auth::IdentityConfig;

/// The path the provider redirects back to; `redirect_uri` must end in it.
pub const CALLBACK_PATH: &str = "/console/oidc/callback";
/// The scopes asked for when `scopes` is not given.
pub const DEFAULT_SCOPES: [&str; 3] = ["openid", "email", "profile"];

/// `console` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawConsole {
    pub oidc: Option<RawConsoleOidc>,
}

/// `console.oidc` as written: every key optional here so a missing one is named by its place.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawConsoleOidc {
    pub issuer: Option<String>,
    pub client_id: Option<String>,
    /// The client's secret (`client_secret_basic`); absent for a public client (PKCE alone).
    pub client_secret: Option<String>,
    pub redirect_uri: Option<String>,
    pub scopes: Option<Vec<String>>,
    /// The sign-in button's words (`Sign in with …`); the issuer's host when absent.
    pub label: Option<String>,
}

/// `console.oidc`, validated.
#[derive(Clone, PartialEq, Eq)]
pub struct ConsoleOidc {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub redirect_uri: String,
    pub scopes: Vec<String>,
    pub label: String,
}

// The secret never reaches a log line or an error, not even through `{:?}`.
impl std::fmt::Debug for ConsoleOidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleOidc")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("redirect_uri", &self.redirect_uri)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl ConsoleOidc {
    /// `console.oidc` checked against the validated `identity`; `None` when not configured.
    pub fn validate(
        raw: Option<RawConsole>,
        identity: &IdentityConfig,
    ) -> Result<Option<Self>, ConfigError> {
        let Some(raw) = raw.and_then(|console| console.oidc) else {
            return Ok(None);
        };
        let issuer = required(raw.issuer, "issuer")?;
        let Some(known) = identity.issuers.iter().find(|known| known.issuer == issuer) else {
            return Err(error(
                "issuer",
                format!("`{issuer}` is not one of `identity.issuers`: approvers sign in with a configured issuer, whose keys and claims askgate already trusts"),
            ));
        };
        if known.roles.approver_groups.is_empty() {
            return Err(error(
                "issuer",
                format!("`{issuer}` maps no `approver_groups`: an ID token carries the person's groups but no scopes, so nobody could sign in as an approver"),
            ));
        }
        let client_id = required(raw.client_id, "client_id")?;
        let redirect_uri = required(raw.redirect_uri, "redirect_uri")?;
        check_url(&redirect_uri).map_err(|why| error("redirect_uri", why))?;
        let path_ok = url::Url::parse(&redirect_uri)
            .is_ok_and(|url| url.path() == CALLBACK_PATH && url.query().is_none());
        if !path_ok {
            return Err(error(
                "redirect_uri",
                format!("`{redirect_uri}` must be askgate's own address ending in `{CALLBACK_PATH}` (no query)"),
            ));
        }
        let scopes = match raw.scopes {
            None => DEFAULT_SCOPES
                .iter()
                .map(|scope| scope.to_string())
                .collect(),
            Some(scopes) if scopes.iter().any(|scope| scope == "openid") => scopes,
            Some(_) => {
                return Err(error(
                    "scopes",
                    "must include `openid` (without it the provider issues no ID token)".into(),
                ))
            }
        };
        if let Some(bad) = scopes
            .iter()
            .find(|scope| scope.is_empty() || scope.chars().any(|c| c.is_whitespace()))
        {
            return Err(error("scopes", format!("`{bad}` is not one scope")));
        }
        let client_secret = match raw.client_secret {
            Some(secret) if secret.is_empty() => {
                return Err(error(
                    "client_secret",
                    "is empty: leave it out for a public client".into(),
                ))
            }
            secret => secret,
        };
        let label = raw.label.unwrap_or_else(|| {
            url::Url::parse(&issuer)
                .ok()
                .and_then(|url| url.host_str().map(str::to_string))
                .unwrap_or_else(|| issuer.clone())
        });
        Ok(Some(Self {
            issuer,
            client_id,
            client_secret,
            redirect_uri,
            scopes,
            label,
        }))
    }
}

fn required(value: Option<String>, key: &str) -> Result<String, ConfigError> {
    match value {
        Some(value) if !value.trim().is_empty() => Ok(value),
        _ => Err(error(key, "is required".into())),
    }
}

fn error(key: &str, message: String) -> ConfigError {
    ConfigError {
        field: format!("console.oidc.{key}"),
        message,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::server::auth::RawIdentity;

    fn identity(approver_groups: &[&str]) -> IdentityConfig {
        let raw: RawIdentity = serde_json::from_value(json!({"issuers": [{
            "issuer": "https://idp.acme.test",
            "audience": "https://askgate.acme.test",
            "agent_scopes": ["askgate:agent"],
            "approver_groups": approver_groups,
            "approver_scopes": ["askgate:approve"],
        }]}))
        .unwrap();
        IdentityConfig::validate(raw).unwrap()
    }

    fn raw(oidc: serde_json::Value) -> Option<RawConsole> {
        Some(serde_json::from_value(json!({ "oidc": oidc })).unwrap())
    }

    fn valid() -> serde_json::Value {
        json!({"issuer": "https://idp.acme.test", "client_id": "askgate-console",
               "client_secret": "s3cret",
               "redirect_uri": "https://askgate.acme.test/console/oidc/callback"})
    }

    fn refused(oidc: serde_json::Value, groups: &[&str]) -> ConfigError {
        ConsoleOidc::validate(raw(oidc), &identity(groups)).unwrap_err()
    }

    #[test]
    fn a_complete_section_validates_with_default_scopes_and_the_issuers_host_as_label() {
        let oidc = ConsoleOidc::validate(raw(valid()), &identity(&["approvers"]))
            .unwrap()
            .unwrap();
        assert_eq!(oidc.scopes, ["openid", "email", "profile"]);
        assert_eq!(oidc.label, "idp.acme.test");
        assert!(!format!("{oidc:?}").contains("s3cret"));
        assert_eq!(ConsoleOidc::validate(None, &identity(&[])).unwrap(), None);
    }

    #[test]
    fn an_issuer_not_trusted_or_mapping_no_approver_group_is_refused() {
        let mut other = valid();
        other["issuer"] = json!("https://elsewhere.test");
        let error = refused(other, &["approvers"]);
        assert_eq!(error.field, "console.oidc.issuer");
        assert!(error.message.contains("identity.issuers"), "{error}");
        let error = refused(valid(), &[]);
        assert!(error.message.contains("approver_groups"), "{error}");
    }

    #[test]
    fn a_redirect_uri_elsewhere_a_scope_list_without_openid_and_an_empty_secret_are_refused() {
        for (key, value, field) in [
            (
                "redirect_uri",
                json!("https://askgate.acme.test/callback"),
                "redirect_uri",
            ),
            (
                "redirect_uri",
                json!("http://askgate.acme.test/console/oidc/callback"),
                "redirect_uri",
            ),
            ("scopes", json!(["email"]), "scopes"),
            ("scopes", json!(["openid", "two words"]), "scopes"),
            ("client_secret", json!(""), "client_secret"),
            ("client_id", json!(" "), "client_id"),
        ] {
            let mut oidc = valid();
            oidc[key] = value;
            let error = refused(oidc, &["approvers"]);
            assert_eq!(error.field, format!("console.oidc.{field}"), "{error}");
        }
    }
}
