//! server::config::raw: the configuration as written — the JSON file format (unknown keys
//! refused), the `ASKGATE_*` environment variables, and the layering of one source over another
//! (later wins). Values are not checked here; that is `Config::validate`'s.

use std::path::PathBuf;

use serde::Deserialize;

use super::super::caller::Role;
use super::ConfigError;
use crate::facts::Environment;
use crate::facts::{AgentKind, Mode};

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawCaller {
    pub token: String,
    pub role: Role,
    pub principal: String,
    /// This caller's MCP session facts (`agent`, `mode`, `interactive`, `permission_hook`,
    /// `bypass_available`); an `agent` or `mode` set here also holds the caller to it on every
    /// front door unless `may_claim` says otherwise.
    #[serde(default)]
    pub session: RawSessionDefaults,
    /// What this caller may state about its session (`modes`, `agents`); derived from
    /// `session` when absent.
    #[serde(default)]
    pub may_claim: Option<RawMayClaim>,
    /// The person's groups, as the approving policies read them (`principal.groups`).
    #[serde(default)]
    pub groups: Vec<String>,
    /// The person's email, as the approving policies read it (`principal.email`).
    #[serde(default)]
    pub email: Option<String>,
    /// The OAuth scopes this token's calls present (`context.caller.scopes`), as an IdP
    /// token's `scope` would: what a `@step_up` policy asks for.
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// `callers[].session` as written: a key left out is not configured.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawSessionDefaults {
    pub agent: Option<AgentKind>,
    pub mode: Option<Mode>,
    pub interactive: Option<bool>,
    pub permission_hook: Option<bool>,
    pub bypass_available: Option<bool>,
}

/// `callers[].may_claim`: the permission modes and agent kinds the caller may state.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawMayClaim {
    pub modes: Option<Vec<Mode>>,
    pub agents: Option<Vec<AgentKind>>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawUpstreamCredentials {
    pub access_token: String,
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub session_token: Option<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub listen: Option<String>,
    /// A second address that answers only `/healthz`, with its own connections (N6).
    pub health_listen: Option<String>,
    pub upstream: Option<String>,
    pub policies: Option<Vec<PathBuf>>,
    pub baseline: Option<PathBuf>,
    pub callers: Option<Vec<RawCaller>>,
    /// The organisation's IdPs whose JWT access tokens are callers too (`identity.issuers`,
    /// `server::auth::issuer`).
    pub identity: Option<crate::server::auth::RawIdentity>,
    /// The approvers' console: `{oidc: {issuer, client_id, client_secret?, redirect_uri,
    /// scopes?, label?}}` (`config::console`).
    pub console: Option<super::console::RawConsole>,
    /// `{rate: {per_second, burst}}`: a plain rate limit per caller (`state::rate`).
    pub limits: Option<crate::state::rate::RawLimits>,
    pub environment: Option<Environment>,
    pub approval_ttl_seconds: Option<u64>,
    /// Bounds and deadlines of pending approvals (`config::approvals`).
    pub approvals: Option<super::RawApprovalLimits>,
    pub upstream_credentials: Option<RawUpstreamCredentials>,
    pub org_uuid: Option<String>,
    pub spill_dir: Option<PathBuf>,
    /// Removed (N1): refused with a message naming `projects.local_path_root`; the value is
    /// never kept.
    pub working_dir: Option<serde::de::IgnoredAny>,
    /// The `projects` section (`config::projects`): where a `local_path` may be read.
    pub projects: Option<super::projects::RawProjects>,
    /// Shadow policy directories: evaluated beside the live set, logged, never enforced.
    pub shadow_policies: Option<Vec<PathBuf>>,
    /// Decision log directory; `None` disables the log.
    pub log_dir: Option<PathBuf>,
    /// `refuse` (default): calls are refused when the log cannot be written; `allow`.
    pub log_failure: Option<String>,
    /// `fsync` (default) or `none`.
    pub log_durability: Option<String>,
    /// Writer threads with fsync, each running its batch's sync (1 by default; up to 8).
    pub log_sync_threads: Option<u64>,
    /// Zero-filled room kept past the open log file's last line with fsync, in bytes (0 by
    /// default: the file grows line by line; at most 64 MiB; 1 MiB measured best).
    pub log_room_bytes: Option<u64>,
    /// The decision log's Ed25519 checkpoint key (64 hex digits of its seed): must exist.
    /// Unset: `checkpoint[-<replica>].key` in the log directory, made on first run.
    pub log_key_file: Option<PathBuf>,
    /// A signed checkpoint after this many records (1000 by default)…
    pub log_checkpoint_records: Option<u64>,
    /// …or this many seconds after the last one when records came since (60 by default).
    pub log_checkpoint_seconds: Option<u64>,
    /// Timeouts, the connection cap and the body limit (`config::http`).
    pub http: Option<super::http::RawHttpLimits>,
    /// The MCP front door (`/mcp`): approval wait, allowed hosts and origins, session cap.
    pub mcp: Option<super::mcp::RawMcp>,
    /// The approval webhook (`config::notify`).
    pub notify: Option<super::notify::RawNotify>,
    /// Where an approval left unanswered too long is sent (`config::escalation`).
    pub escalation: Option<super::escalation::RawEscalation>,
    /// A bearer token `GET /metrics` requires (none: the metrics are open; see
    /// docs/operators.md for what they expose).
    pub metrics_token: Option<String>,
    /// The service's own log lines on stderr: `{format: text | json, level}` (`RUST_LOG`
    /// overrides the level; `ASKGATE_LOG_FORMAT` the format).
    pub logging: Option<crate::server::telemetry::RawLogging>,
    /// OpenTelemetry export: `{endpoint, sample_ratio, decision_records}` (the `OTEL_*`
    /// variables win; `server::telemetry::otlp`).
    pub telemetry: Option<crate::server::telemetry::RawTelemetry>,
    /// Where shared state lives: absent (this process) or a `postgres://` URL (a fleet).
    pub store: Option<String>,
    /// This replica's id in a fleet: names its log files and its claims in the store.
    pub replica_id: Option<String>,
    /// The file this configuration was read from (not a key): askgate's own, never read
    /// through a `local_path`.
    #[serde(skip)]
    pub config_file: Option<PathBuf>,
}

impl RawConfig {
    pub fn from_file(path: &std::path::Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            ConfigError::new(
                "config",
                format!("cannot read `{}`: {error}", path.display()),
            )
        })?;
        let raw: Self = serde_json::from_str(&text).map_err(|error| {
            ConfigError::new(
                "config",
                format!("`{}`: {}", path.display(), without_values(&error)),
            )
        })?;
        Ok(Self {
            config_file: Some(path.to_path_buf()),
            ..raw
        })
    }

    /// `ASKGATE_LISTEN`, `ASKGATE_UPSTREAM`, `ASKGATE_POLICIES` (colon-separated directories).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            listen: get("ASKGATE_LISTEN"),
            upstream: get("ASKGATE_UPSTREAM"),
            policies: get("ASKGATE_POLICIES").map(|dirs| {
                dirs.split(':')
                    .filter(|d| !d.is_empty())
                    .map(PathBuf::from)
                    .collect()
            }),
            log_dir: get("ASKGATE_LOG_DIR").map(PathBuf::from),
            store: get("ASKGATE_STORE"),
            replica_id: get("ASKGATE_REPLICA_ID"),
            logging: get("ASKGATE_LOG_FORMAT").map(|format| crate::server::telemetry::RawLogging {
                format: Some(format),
                level: None,
            }),
            ..Self::default()
        }
    }

    /// Fields set in `higher` replace these.
    pub fn overridden_by(self, higher: Self) -> Self {
        Self {
            listen: higher.listen.or(self.listen),
            health_listen: higher.health_listen.or(self.health_listen),
            upstream: higher.upstream.or(self.upstream),
            policies: higher.policies.or(self.policies),
            baseline: higher.baseline.or(self.baseline),
            callers: higher.callers.or(self.callers),
            identity: higher.identity.or(self.identity),
            console: higher.console.or(self.console),
            limits: higher.limits.or(self.limits),
            environment: higher.environment.or(self.environment),
            approval_ttl_seconds: higher.approval_ttl_seconds.or(self.approval_ttl_seconds),
            approvals: higher.approvals.or(self.approvals),
            upstream_credentials: higher.upstream_credentials.or(self.upstream_credentials),
            org_uuid: higher.org_uuid.or(self.org_uuid),
            spill_dir: higher.spill_dir.or(self.spill_dir),
            working_dir: higher.working_dir.or(self.working_dir),
            projects: higher.projects.or(self.projects),
            shadow_policies: higher.shadow_policies.or(self.shadow_policies),
            log_dir: higher.log_dir.or(self.log_dir),
            log_failure: higher.log_failure.or(self.log_failure),
            log_durability: higher.log_durability.or(self.log_durability),
            log_sync_threads: higher.log_sync_threads.or(self.log_sync_threads),
            log_room_bytes: higher.log_room_bytes.or(self.log_room_bytes),
            log_key_file: higher.log_key_file.or(self.log_key_file),
            log_checkpoint_records: higher
                .log_checkpoint_records
                .or(self.log_checkpoint_records),
            log_checkpoint_seconds: higher
                .log_checkpoint_seconds
                .or(self.log_checkpoint_seconds),
            http: higher.http.or(self.http),
            mcp: higher.mcp.or(self.mcp),
            notify: higher.notify.or(self.notify),
            escalation: higher.escalation.or(self.escalation),
            metrics_token: higher.metrics_token.or(self.metrics_token),
            logging: match (self.logging, higher.logging) {
                (Some(lower), Some(higher)) => Some(crate::server::telemetry::RawLogging {
                    format: higher.format.or(lower.format),
                    level: higher.level.or(lower.level),
                }),
                (lower, higher) => higher.or(lower),
            },
            telemetry: higher.telemetry.or(self.telemetry),
            store: higher.store.or(self.store),
            replica_id: higher.replica_id.or(self.replica_id),
            config_file: higher.config_file.or(self.config_file),
        }
    }
}

/// serde's message without the values it quotes: `invalid type: string "SECRET", expected …`
/// would print a token put in the wrong place (C13). Every quoted value becomes `"…"`; keys
/// and expected types (in backticks) stay, and so does the position.
fn without_values(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let mut out = String::with_capacity(message.len());
    let (mut quoted, mut escaped) = (false, false);
    for c in message.chars() {
        if quoted {
            // Inside a quoted value nothing is kept; `\"` does not end it.
            match (c, escaped) {
                (_, true) => escaped = false,
                ('\\', false) => escaped = true,
                ('"', false) => {
                    out.push('"');
                    quoted = false;
                }
                _ => {}
            }
        } else if c == '"' {
            out.push_str("\"…");
            quoted = true;
        } else {
            out.push(c);
        }
    }
    out
}
