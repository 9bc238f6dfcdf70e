//! server::config::http: the limits of the HTTP front door — read timeouts (and the shorter
//! head deadline near the cap), the connection cap with its `/healthz` reserve, the per-peer
//! connection limit, and the largest request body — validated from the raw `http` section.
//! Enforcing them is `server::listen`'s and `server::body`'s.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;

/// The `http` section as written; every field is optional and defaults as documented.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawHttpLimits {
    pub header_read_timeout_ms: Option<u64>,
    pub body_read_timeout_ms: Option<u64>,
    pub idle_timeout_ms: Option<u64>,
    pub max_connections: Option<usize>,
    pub reserved_connections: Option<usize>,
    pub max_connections_per_peer: Option<usize>,
    pub busy_header_read_timeout_ms: Option<u64>,
    pub max_body_bytes: Option<usize>,
}

/// Validated HTTP limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// From a connection's first byte (or the end of its last response) to a complete
    /// request head; hyper starts this timer whenever it waits for a head, so it also bounds
    /// an idle keep-alive connection.
    pub header_read_timeout: Duration,
    /// From the handler asking for the body to its last byte.
    pub body_read_timeout: Duration,
    /// No byte read or written on a connection for this long closes it (a client that stops
    /// reading its response). Must exceed the longest `?wait=` (120 s).
    pub idle_timeout: Duration,
    /// Connections served normally at once.
    pub max_connections: usize,
    /// Extra connections accepted past the cap that only answer `/healthz` (others get 503),
    /// each with a short head deadline, so a health check still gets through a flood. Only
    /// a peer that has completed a request head recently gets one (N6).
    pub reserved_connections: usize,
    /// Connections one peer (IP address) may hold at once, in both pools together (N6).
    pub max_connections_per_peer: usize,
    /// The head deadline while the server is near its cap (see `server::listen`): a
    /// connection waiting for a request head longer than this is closed (N6).
    pub busy_header_read_timeout: Duration,
    /// Largest request body, in bytes; larger ones get a JSON 413.
    pub max_body_bytes: usize,
}

pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(180);
/// The cap when the open-file limit allows it (see [`default_max_connections`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1_024;
pub const DEFAULT_RESERVED_CONNECTIONS: usize = 16;
pub const DEFAULT_MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// The head deadline of a reserved (health-only) connection.
pub const RESERVED_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(1);
/// The head deadline near the cap (never longer than `header_read_timeout`).
pub const DEFAULT_BUSY_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(1);
/// The default per-peer limit is this fraction of `max_connections` (256 of 1,024): one
/// address can never hold the whole pool.
const PEER_SHARE: usize = 4;
/// File descriptors kept free for the log, policies and upstream sockets.
const DESCRIPTORS_KEPT: u64 = 128;
/// Most connections either pool may be configured for (far above any descriptor limit).
const MAX_CONNECTIONS_LIMIT: usize = 1_000_000;
/// Connections the separate health listener serves at once.
const HEALTH_CONNECTIONS: usize = 64;
/// Longest `?wait=`; the idle timeout must be longer or long polls would be cut.
const LONGEST_WAIT: Duration = Duration::from_secs(120);

impl Default for HttpLimits {
    fn default() -> Self {
        let max_connections = default_max_connections();
        Self {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections,
            reserved_connections: DEFAULT_RESERVED_CONNECTIONS,
            max_connections_per_peer: default_per_peer(max_connections),
            busy_header_read_timeout: DEFAULT_BUSY_HEADER_READ_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// A quarter of the cap, at least 1.
fn default_per_peer(max_connections: usize) -> usize {
    (max_connections / PEER_SHARE).max(1)
}

/// 1,024, or fewer when the soft open-file limit (`RLIMIT_NOFILE`) would run out first: the
/// cap and the reserve must fit below it with descriptors to spare, or a flood would stop
/// `accept` itself.
pub fn default_max_connections() -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    let spare = DESCRIPTORS_KEPT + DEFAULT_RESERVED_CONNECTIONS as u64;
    let fitting = usize::try_from(soft.saturating_sub(spare)).unwrap_or(usize::MAX);
    fitting.clamp(16, DEFAULT_MAX_CONNECTIONS)
}

impl HttpLimits {
    pub fn validate(raw: Option<RawHttpLimits>) -> Result<Self, ConfigError> {
        let raw = raw.unwrap_or_default();
        let defaults = Self::default();
        let millis = |field: &str, value: Option<u64>, default: Duration| match value {
            None => Ok(default),
            Some(0) => Err(ConfigError::new(
                &format!("http.{field}"),
                "must be at least 1 millisecond".to_string(),
            )),
            Some(ms) => Ok(Duration::from_millis(ms)),
        };
        let header_read_timeout = millis(
            "header_read_timeout_ms",
            raw.header_read_timeout_ms,
            defaults.header_read_timeout,
        )?;
        let max_connections = raw.max_connections.unwrap_or(defaults.max_connections);
        let limits = Self {
            header_read_timeout,
            body_read_timeout: millis(
                "body_read_timeout_ms",
                raw.body_read_timeout_ms,
                defaults.body_read_timeout,
            )?,
            idle_timeout: millis(
                "idle_timeout_ms",
                raw.idle_timeout_ms,
                defaults.idle_timeout,
            )?,
            max_connections,
            reserved_connections: raw
                .reserved_connections
                .unwrap_or(defaults.reserved_connections),
            max_connections_per_peer: raw
                .max_connections_per_peer
                .unwrap_or_else(|| default_per_peer(max_connections)),
            busy_header_read_timeout: millis(
                "busy_header_read_timeout_ms",
                raw.busy_header_read_timeout_ms,
                DEFAULT_BUSY_HEADER_READ_TIMEOUT.min(header_read_timeout),
            )?,
            max_body_bytes: raw.max_body_bytes.unwrap_or(defaults.max_body_bytes),
        };
        limits.check()?.check_front_door()
    }

    /// The limits of the separate health listener (`health_listen`): a small pool of its own
    /// with a short head deadline; nothing is shared with the main listener.
    pub fn for_health_listener(&self) -> Self {
        Self {
            header_read_timeout: RESERVED_HEADER_READ_TIMEOUT,
            busy_header_read_timeout: RESERVED_HEADER_READ_TIMEOUT,
            max_connections: HEALTH_CONNECTIONS,
            reserved_connections: 0,
            max_connections_per_peer: HEALTH_CONNECTIONS / PEER_SHARE,
            ..*self
        }
    }

    /// The checks of the keys N6 added.
    fn check_front_door(self) -> Result<Self, ConfigError> {
        if self.max_connections_per_peer == 0
            || self.max_connections_per_peer > self.max_connections
        {
            return Err(ConfigError::new(
                "http.max_connections_per_peer",
                format!(
                    "must be from 1 to `http.max_connections` ({})",
                    self.max_connections
                ),
            ));
        }
        if self.busy_header_read_timeout > self.header_read_timeout {
            return Err(ConfigError::new(
                "http.busy_header_read_timeout_ms",
                format!(
                    "must not be longer than `http.header_read_timeout_ms` ({})",
                    self.header_read_timeout.as_millis()
                ),
            ));
        }
        Ok(self)
    }

    fn check(self) -> Result<Self, ConfigError> {
        if self.idle_timeout <= LONGEST_WAIT {
            return Err(ConfigError::new(
                "http.idle_timeout_ms",
                "must be longer than the longest `?wait=` (120000)".to_string(),
            ));
        }
        if self.max_connections == 0 || self.max_connections > MAX_CONNECTIONS_LIMIT {
            return Err(ConfigError::new(
                "http.max_connections",
                format!("must be from 1 to {MAX_CONNECTIONS_LIMIT}"),
            ));
        }
        if self.reserved_connections > MAX_CONNECTIONS_LIMIT {
            return Err(ConfigError::new(
                "http.reserved_connections",
                format!("must be at most {MAX_CONNECTIONS_LIMIT}"),
            ));
        }
        if self.reserved_connections == 0 {
            return Err(ConfigError::new(
                "http.reserved_connections",
                "must be at least 1, or `/healthz` cannot answer under a flood".to_string(),
            ));
        }
        if self.max_body_bytes == 0 {
            return Err(ConfigError::new(
                "http.max_body_bytes",
                "must be at least 1".to_string(),
            ));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(raw: RawHttpLimits) -> Result<HttpLimits, ConfigError> {
        HttpLimits::validate(Some(raw))
    }

    #[test]
    fn n6_the_per_peer_limit_is_a_quarter_of_the_cap_unless_given() {
        let limits = with(RawHttpLimits {
            max_connections: Some(1_024),
            ..RawHttpLimits::default()
        })
        .unwrap();
        assert_eq!(limits.max_connections_per_peer, 256);
        let small = with(RawHttpLimits {
            max_connections: Some(2),
            ..RawHttpLimits::default()
        })
        .unwrap();
        assert_eq!(small.max_connections_per_peer, 1);
        for per_peer in [0, 9] {
            let error = with(RawHttpLimits {
                max_connections: Some(8),
                max_connections_per_peer: Some(per_peer),
                ..RawHttpLimits::default()
            })
            .unwrap_err();
            assert_eq!(error.field, "http.max_connections_per_peer");
            assert_eq!(
                error.message,
                "must be from 1 to `http.max_connections` (8)"
            );
        }
    }

    #[test]
    fn n6_the_busy_head_deadline_is_never_longer_than_the_head_deadline() {
        let defaults = with(RawHttpLimits::default()).unwrap();
        assert_eq!(defaults.busy_header_read_timeout, Duration::from_secs(1));
        let short = with(RawHttpLimits {
            header_read_timeout_ms: Some(300),
            ..RawHttpLimits::default()
        })
        .unwrap();
        assert_eq!(short.busy_header_read_timeout, Duration::from_millis(300));
        let error = with(RawHttpLimits {
            header_read_timeout_ms: Some(300),
            busy_header_read_timeout_ms: Some(301),
            ..RawHttpLimits::default()
        })
        .unwrap_err();
        assert_eq!(error.field, "http.busy_header_read_timeout_ms");
        let zero = with(RawHttpLimits {
            busy_header_read_timeout_ms: Some(0),
            ..RawHttpLimits::default()
        })
        .unwrap_err();
        assert_eq!(zero.message, "must be at least 1 millisecond");
    }

    #[test]
    fn the_health_listener_has_a_small_pool_of_its_own() {
        let health = HttpLimits::default().for_health_listener();
        assert_eq!(health.max_connections, HEALTH_CONNECTIONS);
        assert_eq!(health.reserved_connections, 0);
        assert!(health.max_connections_per_peer < health.max_connections);
        assert_eq!(health.header_read_timeout, RESERVED_HEADER_READ_TIMEOUT);
    }
}
