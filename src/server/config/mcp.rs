//! server::config::mcp: the MCP front door's configuration (`"mcp"` in the config file) —
//! how long a held call waits for an approver, which `Host` and `Origin` values `/mcp` accepts,
//! how many MCP sessions may be open, and the public URL approvals are linked from.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;

/// The `"mcp"` object as written; every key is optional.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawMcp {
    /// How long a `tools/call` that asked is held for an approver (default 120).
    pub approval_wait_seconds: Option<u64>,
    /// How often a held call reports progress, in seconds (default 5).
    pub progress_seconds: Option<u64>,
    /// `Host` values accepted (default: `localhost`, `127.0.0.1`, `::1`).
    pub allowed_hosts: Option<Vec<String>>,
    /// Browser `Origin` values accepted (default: none; requests without `Origin` pass).
    pub allowed_origins: Option<Vec<String>>,
    /// Open MCP sessions at most (default 256); a new `initialize` beyond it gets 503.
    pub max_sessions: Option<usize>,
    /// Open MCP sessions of one principal at most (default 16).
    pub max_sessions_per_caller: Option<usize>,
    /// Calls held for an approver at once, at most (default 64); one more is answered with
    /// `isError` and its approval is withdrawn.
    pub max_held: Option<usize>,
    /// Calls of one principal held at once, at most (default 16).
    pub max_held_per_caller: Option<usize>,
    /// The service's URL as approvers reach it, for the approval links sent to clients
    /// (default: `http://` and the request's `Host`).
    pub public_url: Option<String>,
    /// Deny every `tools/call` without a matching hook attestation (default false; see
    /// `server::attest`).
    pub require_attestation: Option<bool>,
    /// The names Claude Code knows this server by (`claude mcp add NAME`; default
    /// `["askgate"]`): a hook attestation counts only for `mcp__NAME__<tool>` of one of them.
    pub server_names: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSettings {
    pub approval_wait: Duration,
    /// How often a held call reports progress to a client that gave a progress token.
    pub progress_every: Duration,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    pub max_sessions: usize,
    pub max_sessions_per_caller: usize,
    pub max_held: usize,
    pub max_held_per_caller: usize,
    pub public_url: Option<String>,
    /// `mcp.require_attestation`: an MCP call needs a hook attestation (a session fact the
    /// policies read: `gates.mcp-attestation-required`).
    pub require_attestation: bool,
    /// `mcp.server_names`: what a hook attestation's `mcp__NAME__` must name.
    pub server_names: Vec<String>,
    /// `http.max_body_bytes`, which `/mcp` bodies obey too (set by the configuration).
    pub max_body_bytes: usize,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            approval_wait: Duration::from_secs(120),
            progress_every: Duration::from_secs(5),
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: Vec::new(),
            max_sessions: 256,
            max_sessions_per_caller: 16,
            max_held: 64,
            max_held_per_caller: 16,
            public_url: None,
            require_attestation: false,
            server_names: vec![DEFAULT_SERVER_NAME.to_string()],
            max_body_bytes: super::DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// The name `askgate connect claude-code` and the docs register the server under.
pub const DEFAULT_SERVER_NAME: &str = "askgate";

/// The longest hold: a held call keeps an HTTP request open.
const MAX_WAIT_SECONDS: u64 = 3_600;

fn invalid(field: &str, message: String) -> ConfigError {
    ConfigError {
        field: format!("mcp.{field}"),
        message,
    }
}

impl McpSettings {
    pub fn validate(raw: RawMcp) -> Result<Self, ConfigError> {
        let defaults = Self::default();
        let wait = raw
            .approval_wait_seconds
            .unwrap_or(defaults.approval_wait.as_secs());
        if wait == 0 || wait > MAX_WAIT_SECONDS {
            return Err(invalid(
                "approval_wait_seconds",
                format!("{wait} is outside 1..={MAX_WAIT_SECONDS}"),
            ));
        }
        let progress = raw
            .progress_seconds
            .unwrap_or(defaults.progress_every.as_secs());
        if progress == 0 || progress > 60 {
            return Err(invalid(
                "progress_seconds",
                format!("{progress} is outside 1..=60"),
            ));
        }
        let max_sessions = raw.max_sessions.unwrap_or(defaults.max_sessions);
        if max_sessions == 0 || max_sessions > 100_000 {
            return Err(invalid(
                "max_sessions",
                format!("{max_sessions} is outside 1..=100000"),
            ));
        }
        let max_held = raw.max_held.unwrap_or(defaults.max_held);
        if max_held == 0 || max_held > 10_000 {
            return Err(invalid(
                "max_held",
                format!("{max_held} is outside 1..=10000"),
            ));
        }
        let max_sessions_per_caller = per_caller(
            "max_sessions_per_caller",
            raw.max_sessions_per_caller,
            defaults.max_sessions_per_caller,
            max_sessions,
        )?;
        let max_held_per_caller = per_caller(
            "max_held_per_caller",
            raw.max_held_per_caller,
            defaults.max_held_per_caller,
            max_held,
        )?;
        let public_url = match raw.public_url {
            Some(url) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(invalid(
                    "public_url",
                    format!("`{url}` is not an http(s) URL"),
                ))
            }
            other => other.map(|url| url.trim_end_matches('/').to_string()),
        };
        let allowed_origins = raw.allowed_origins.unwrap_or_default();
        if let Some(origin) = allowed_origins
            .iter()
            .find(|origin| !origin.contains("://"))
        {
            return Err(invalid(
                "allowed_origins",
                format!("`{origin}` needs a scheme, like http://localhost:*"),
            ));
        }
        let server_names = raw.server_names.unwrap_or(defaults.server_names.clone());
        if server_names.is_empty() {
            return Err(invalid(
                "server_names",
                "is empty: name the server as the client registered it (e.g. [\"askgate\"])"
                    .to_string(),
            ));
        }
        if let Some(name) = server_names
            .iter()
            .find(|name| name.is_empty() || name.len() > 64 || name.contains("__"))
        {
            return Err(invalid(
                "server_names",
                format!("`{name}` is not a name Claude Code gives an MCP server (1-64 characters, no `__`)"),
            ));
        }
        Ok(Self {
            approval_wait: Duration::from_secs(wait),
            progress_every: Duration::from_secs(progress),
            allowed_hosts: raw.allowed_hosts.unwrap_or(defaults.allowed_hosts),
            allowed_origins,
            max_sessions,
            max_sessions_per_caller,
            max_held,
            max_held_per_caller,
            public_url,
            require_attestation: raw.require_attestation.unwrap_or(false),
            server_names,
            max_body_bytes: defaults.max_body_bytes,
        })
    }
}

/// A per-principal quota: 1..=the total it shares; by default the smaller of the default and
/// the total.
fn per_caller(
    field: &str,
    raw: Option<usize>,
    default: usize,
    total: usize,
) -> Result<usize, ConfigError> {
    let value = raw.unwrap_or(default.min(total));
    if value == 0 || value > total {
        return Err(invalid(field, format!("{value} is outside 1..={total}")));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_wait_two_minutes_and_accept_loopback_hosts() {
        let settings = McpSettings::validate(RawMcp::default()).unwrap();
        assert_eq!(settings.approval_wait, Duration::from_secs(120));
        assert!(settings
            .allowed_hosts
            .iter()
            .any(|host| host == "127.0.0.1"));
    }

    #[test]
    fn a_zero_wait_and_a_schemeless_origin_are_refused_by_name() {
        let zero = RawMcp {
            approval_wait_seconds: Some(0),
            ..RawMcp::default()
        };
        let error = McpSettings::validate(zero).unwrap_err();
        assert_eq!(error.field, "mcp.approval_wait_seconds");
        let origin = RawMcp {
            allowed_origins: Some(vec!["example.com".into()]),
            ..RawMcp::default()
        };
        let error = McpSettings::validate(origin).unwrap_err();
        assert_eq!(error.field, "mcp.allowed_origins");
    }
}
