//! server::config: the service configuration. Raw values come from a JSON file, then the
//! environment (`ASKGATE_*`), then flags — later wins (`raw`) — and are validated into a
//! `Config` before anything starts. Tokens are never printed.

mod approvals;
pub mod console;
mod escalation;
mod http;
pub mod mcp;
mod notify;
mod projects;
mod raw;
mod store;

use std::net::SocketAddr;
use std::path::PathBuf;

use super::caller::{Caller, Callers, Role};
use crate::facts::Environment;

pub use approvals::{ApprovalLimits, DeskSettings, RawApprovalLimits};
pub use escalation::RawEscalation;
pub use http::{
    HttpLimits, RawHttpLimits, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_RESERVED_CONNECTIONS,
    RESERVED_HEADER_READ_TIMEOUT,
};
pub use notify::RawNotify;
pub use projects::RawProjects;
pub use raw::{RawCaller, RawConfig, RawMayClaim, RawSessionDefaults, RawUpstreamCredentials};
pub use store::StoreSettings;

/// Demo caller tokens used only when none are configured and the service listens on loopback.
pub const DEMO_AGENT_TOKEN: &str = "askgate-demo-agent-token";
pub const DEMO_APPROVER_TOKEN: &str = "askgate-demo-approver-token";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration `{field}`: {message}")]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl ConfigError {
    /// The key `field` (as the file names it) and what is wrong with its value.
    pub fn new(field: &str, message: String) -> Self {
        Self {
            field: field.to_string(),
            message,
        }
    }
}

/// Where calls go upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// An in-process sandbox on a loopback port (the embedded default).
    Sandbox,
    Url(String),
}

#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// Where `/healthz` alone is served on its own connections, if anywhere (N6).
    pub health_listen: Option<SocketAddr>,
    pub upstream: Upstream,
    pub policies: Vec<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub callers: Callers,
    pub demo_callers: bool,
    /// The IdPs whose JWT access tokens are callers (empty: configured tokens only).
    pub identity: crate::server::auth::IdentityConfig,
    /// Approvers sign in to the console with this IdP (`console.oidc`), if set.
    pub console_oidc: Option<console::ConsoleOidc>,
    /// The rate limit per caller (`limits.rate`), if any.
    pub rate: Option<crate::state::rate::RateQuota>,
    pub environment: Environment,
    /// The approving feature's section (`approvals`, `approval_ttl_seconds`).
    pub desk: DeskSettings,
    pub credentials: Option<RawUpstreamCredentials>,
    pub org_uuid: String,
    pub spill_dir: PathBuf,
    /// The only directory a `local_path` is read under; `None` refuses every `local_path`.
    pub local_path_root: Option<PathBuf>,
    /// The configuration file, when there is one (askgate's own: see `service_paths`).
    pub config_file: Option<PathBuf>,
    pub shadow_policies: Vec<PathBuf>,
    /// The decision log (`log_dir` and the `log_*` keys: `journal::settings`).
    pub log: super::journal::settings::LogSettings,
    pub http: HttpLimits,
    pub mcp: mcp::McpSettings,
    /// The approval webhook (`notify`), if any.
    pub notify: Option<super::notify::WebhookTarget>,
    /// Where an approval unanswered for too long is sent, once (`escalation`), if anywhere.
    pub escalation: Option<super::notify::Escalation>,
    /// The bearer token `GET /metrics` requires, if any.
    pub metrics_token: Option<String>,
    /// The service's own log lines (`telemetry`): format and level.
    pub logging: super::telemetry::Logging,
    /// OpenTelemetry export (`telemetry`; off unless an endpoint is set).
    pub telemetry: super::telemetry::Telemetry,
    /// Where shared state lives and this replica's name (`store`, `replica_id`).
    pub store: StoreSettings,
}

impl Config {
    pub fn validate(raw: RawConfig) -> Result<Self, ConfigError> {
        let log = super::journal::settings::LogSettings::validate(&raw)?;
        let listen: SocketAddr = raw
            .listen
            .as_deref()
            .unwrap_or("127.0.0.1:8080")
            .parse()
            .map_err(|_| {
                ConfigError::new(
                    "listen",
                    format!(
                        "`{}` is not an address like 127.0.0.1:8080",
                        raw.listen.clone().unwrap_or_default()
                    ),
                )
            })?;
        let health_listen = health_listen(raw.health_listen.as_deref(), listen)?;
        let upstream = match raw.upstream.as_deref() {
            None => Upstream::Sandbox,
            Some(url) => Upstream::Url(upstream_url(url)?),
        };
        if upstream != Upstream::Sandbox && raw.upstream_credentials.is_none() {
            return Err(ConfigError::new(
                "upstream_credentials",
                "a real upstream needs `upstream_credentials.access_token`".to_string(),
            ));
        }
        let identity = match raw.identity {
            Some(raw) => crate::server::auth::IdentityConfig::validate(raw)?,
            None => crate::server::auth::IdentityConfig::default(),
        };
        let console_oidc = console::ConsoleOidc::validate(raw.console, &identity)?;
        let rate = crate::state::rate::RateQuota::validate(raw.limits)
            .map_err(|(field, message)| ConfigError::new(field, message))?;
        // With issuers configured and no `callers`, only the IdP's tokens are taken: the
        // published demo tokens are for a first run with nothing configured.
        let (callers, demo_callers) = if raw.callers.is_none() && !identity.issuers.is_empty() {
            (Callers::default(), false)
        } else {
            callers(raw.callers, listen)?
        };
        let spill_dir = raw
            .spill_dir
            .unwrap_or_else(|| std::env::temp_dir().join("askgate-spill"));
        projects::refuse_working_dir(raw.working_dir.is_some())?;
        let local_path_root = raw.projects.unwrap_or_default().validate()?;
        let desk = DeskSettings::validate(raw.approvals, raw.approval_ttl_seconds)?;
        let http = HttpLimits::validate(raw.http)?;
        let mut mcp = mcp::McpSettings::validate(raw.mcp.unwrap_or_default())?;
        mcp.max_body_bytes = http.max_body_bytes;
        let console_url = raw
            .notify
            .as_ref()
            .and_then(|notify| notify.console_url.clone());
        let escalation = raw
            .escalation
            .unwrap_or_default()
            .validate(console_url.as_deref(), &listen.to_string())?;
        let notify = raw
            .notify
            .unwrap_or_default()
            .validate(&listen.to_string())?;
        let logging = super::telemetry::Logging::validate(raw.logging.clone().unwrap_or_default())
            .map_err(|(key, message)| ConfigError::new(key, message))?;
        let telemetry =
            super::telemetry::Telemetry::validate(raw.telemetry.clone().unwrap_or_default())
                .map_err(|(key, message)| ConfigError::new(key, message))?;
        if let Some(token) = &raw.metrics_token {
            token_strength(token, "metrics_token")?;
        }
        let store = StoreSettings::validate(raw.store.as_deref(), raw.replica_id.as_deref())?;
        Ok(Self {
            store,
            metrics_token: raw.metrics_token,
            logging,
            telemetry,
            mcp,
            notify,
            escalation,
            desk,
            http,
            shadow_policies: raw.shadow_policies.unwrap_or_default(),
            log,
            listen,
            health_listen,
            upstream,
            policies: raw.policies.unwrap_or_default(),
            baseline: raw.baseline,
            callers,
            demo_callers,
            identity,
            console_oidc,
            rate,
            environment: raw.environment.unwrap_or_default(),
            credentials: raw.upstream_credentials,
            org_uuid: raw.org_uuid.unwrap_or_else(|| "org-0000".to_string()),
            spill_dir,
            local_path_root,
            config_file: raw.config_file,
        })
    }
}

/// The health listener's address: parsed like `listen`, and not the same socket address.
fn health_listen(
    text: Option<&str>,
    listen: SocketAddr,
) -> Result<Option<SocketAddr>, ConfigError> {
    let Some(text) = text else {
        return Ok(None);
    };
    let address: SocketAddr = text.parse().map_err(|_| {
        ConfigError::new(
            "health_listen",
            format!("`{text}` is not an address like 127.0.0.1:8081"),
        )
    })?;
    if address == listen && address.port() != 0 {
        return Err(ConfigError::new(
            "health_listen",
            format!("`{text}` is the `listen` address: give the health listener its own"),
        ));
    }
    Ok(Some(address))
}

/// An http(s) URL without credentials (C12): a `user:password@` would be printed at startup
/// and sent as Basic auth instead of the bearer. Errors never show the userinfo.
fn upstream_url(text: &str) -> Result<String, ConfigError> {
    let parsed = url::Url::parse(text)
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some());
    let Some(mut parsed) = parsed else {
        return Err(ConfigError::new(
            "upstream",
            format!("`{}` is not an http(s) URL", without_userinfo(text)),
        ));
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        return Err(ConfigError::new(
            "upstream",
            format!(
                "`{parsed}` must not carry credentials (`user:password@`); put them in `upstream_credentials`"
            ),
        ));
    }
    Ok(text.trim_end_matches('/').to_string())
}

/// `text` with anything between `://` and a following `@` elided, for messages about a URL
/// that did not parse.
fn without_userinfo(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest
        .get(..authority_end)
        .and_then(|authority| authority.rfind('@'))
    {
        Some(at) => format!("{scheme}://…{}", rest.get(at..).unwrap_or("")),
        None => text.to_string(),
    }
}

/// The shortest secret accepted as a bearer token (caller or metrics).
pub const MIN_TOKEN_CHARS: usize = 32;

/// A token must be long enough to be a secret and usable in an `Authorization` header: at least
/// [`MIN_TOKEN_CHARS`] characters, none of them whitespace or control characters. The token
/// itself is never echoed.
fn token_strength(token: &str, field: &str) -> Result<(), ConfigError> {
    let chars = token.chars().count();
    if chars < MIN_TOKEN_CHARS {
        return Err(ConfigError::new(
            field,
            format!("is {chars} characters long: use a random secret of at least {MIN_TOKEN_CHARS} characters"),
        ));
    }
    if let Some(bad) = token.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(ConfigError::new(
            field,
            format!(
                "holds the character U+{:04X} (whitespace or a control character), which no \
                 `Authorization` header can carry: use printable characters only",
                u32::from(bad)
            ),
        ));
    }
    Ok(())
}

fn callers(
    raw: Option<Vec<RawCaller>>,
    listen: SocketAddr,
) -> Result<(Callers, bool), ConfigError> {
    let Some(raw) = raw else {
        if !listen.ip().is_loopback() {
            return Err(ConfigError::new(
                "callers",
                "no callers configured: the demo tokens are only allowed on a loopback address"
                    .to_string(),
            ));
        }
        let demo_agent = Caller::configured(
            Role::Agent,
            "demo-agent".to_string(),
            RawSessionDefaults::default(),
            None,
        )
        .map_err(|(key, message)| ConfigError::new(&format!("demo-agent.{key}"), message))?;
        let demo = [
            (DEMO_AGENT_TOKEN.to_string(), demo_agent),
            (
                DEMO_APPROVER_TOKEN.to_string(),
                Caller::approver("demo-approver".to_string()),
            ),
        ];
        return Ok((Callers::new(demo), true));
    };
    let mut seen = std::collections::HashSet::new();
    for (index, caller) in raw.iter().enumerate() {
        let published = [DEMO_AGENT_TOKEN, DEMO_APPROVER_TOKEN].contains(&caller.token.as_str());
        if !published {
            token_strength(&caller.token, &format!("callers[{index}].token"))?;
        }
        if caller.principal.trim().is_empty() {
            return Err(ConfigError::new(
                &format!("callers[{index}].principal"),
                "must not be empty".to_string(),
            ));
        }
        if published && !listen.ip().is_loopback() {
            return Err(ConfigError::new(
                &format!("callers[{index}].token"),
                "is a published demo token, refused on a non-loopback listener: generate a secret token"
                    .to_string(),
            ));
        }
        if !seen.insert(caller.token.clone()) {
            return Err(ConfigError::new(
                &format!("callers[{index}].token"),
                "is used twice".to_string(),
            ));
        }
    }
    let mut entries = Vec::with_capacity(raw.len());
    for (index, caller) in raw.into_iter().enumerate() {
        let configured = Caller::configured(
            caller.role,
            caller.principal,
            caller.session,
            caller.may_claim,
        )
        .map_err(|(key, message)| ConfigError::new(&format!("callers[{index}].{key}"), message))?
        .with_person(person(index, caller.groups, caller.email)?)
        .with_scopes(&scopes(index, caller.scopes)?);
        entries.push((caller.token, configured));
    }
    Ok((Callers::new(entries), false))
}

/// `callers[].scopes`: OAuth scope tokens, none empty or holding whitespace.
fn scopes(index: usize, scopes: Vec<String>) -> Result<Vec<String>, ConfigError> {
    match scopes.iter().position(|scope| {
        scope.is_empty() || scope.chars().any(|c| c.is_whitespace() || c.is_control())
    }) {
        Some(bad) => Err(ConfigError::new(
            &format!("callers[{index}].scopes[{bad}]"),
            "must be one OAuth scope: not empty, without spaces".to_string(),
        )),
        None => Ok(scopes),
    }
}

/// `callers[].groups` and `email`: what the approving policies read of the person.
fn person(
    index: usize,
    groups: Vec<String>,
    email: Option<String>,
) -> Result<super::caller::Person, ConfigError> {
    if let Some(empty) = groups.iter().position(|group| group.trim().is_empty()) {
        return Err(ConfigError::new(
            &format!("callers[{index}].groups[{empty}]"),
            "must not be empty".to_string(),
        ));
    }
    Ok(super::caller::Person {
        groups,
        email: email.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests;
