//! store::postgres: the PostgreSQL store of a fleet (`serve --store postgres://…`).
//! Approvals (with their held calls), console sessions and the account's tightening events
//! are rows; every change of an
//! approval is announced with `NOTIFY` (a wake-up carrying its id; the rows are the truth) and
//! each replica follows them on one dedicated `LISTEN` connection, reading the rows again
//! after every (re)connect and every [`approvals::POLL`] as the fallback.
//!
//! Map: `migrate` (embedded, versioned schema under an advisory lock), `fleet` (the pool, the
//! lease, the listener, who waits for which approval), `account` (the account's view and its
//! invalidations across replicas), `approvals` (the approval books),
//! `console` (console sessions), `attestations` (hook attestations of MCP calls), `usage` (the
//! usage counts the replicas share).

mod account;
mod approvals;
mod attestations;
mod console;
mod fleet;
mod migrate;
pub mod usage;

use std::sync::Arc;
use std::time::Duration;

pub use account::PgAccount;
pub use approvals::PgApprovals;
pub use attestations::PgAttestations;
pub use console::PgConsole;
pub use fleet::Fleet;
pub use migrate::SCHEMA_VERSION;

use super::approvals::ApprovalLimits;
use super::StoreError;

/// How a replica joins the fleet.
#[derive(Debug, Clone)]
pub struct FleetOptions {
    /// The replica's id: its lease, its runs and its decision-log files carry it.
    pub replica: String,
    /// How long a heartbeat keeps the replica fit to decide; it beats five times per lease.
    pub lease: Duration,
    /// The longest one store operation may take before it is given up.
    pub operation_timeout: Duration,
}

impl FleetOptions {
    pub fn new(replica: impl Into<String>) -> Self {
        Self {
            replica: replica.into(),
            lease: Duration::from_secs(5),
            operation_timeout: Duration::from_secs(5),
        }
    }
}

/// The stores of one replica, sharing its connection pool and lease.
pub struct PgStores {
    pub fleet: Arc<Fleet>,
    pub account: Arc<PgAccount>,
    pub approvals: Arc<PgApprovals>,
    pub console: Arc<PgConsole>,
    pub attestations: Arc<PgAttestations>,
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("`store`: {0}")]
    Url(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the store {store} holds schema version {found}, newer than this askgate knows ({known}): upgrade askgate before it joins the fleet")]
    NewerSchema {
        store: String,
        found: i32,
        known: i32,
    },
}

/// Connects, applies the migrations (one replica at a time), joins the fleet and starts the
/// listener and the heartbeat; returns once both are up or a lease has passed (it keeps
/// trying in the background and says so in `/healthz`). A store that cannot be reached at
/// start is an error: the replica does not start on guesses.
pub async fn open(
    url: &str,
    options: FleetOptions,
    limits: ApprovalLimits,
) -> Result<PgStores, OpenError> {
    let fleet = Arc::new(Fleet::connect(url, options)?);
    migrate::migrated(&fleet).await?;
    fleet.claim_id().await?;
    fleet.refresh_link_keys().await?;
    let account = PgAccount::joined(Arc::clone(&fleet)).await?;
    fleet::start(&fleet);
    fleet.first_beat().await;
    let approvals = Arc::new(PgApprovals::new(Arc::clone(&fleet), limits));
    let console = Arc::new(PgConsole::new(Arc::clone(&fleet)));
    let attestations = Arc::new(PgAttestations::new(Arc::clone(&fleet)));
    Ok(PgStores {
        fleet,
        account,
        approvals,
        console,
        attestations,
    })
}

/// The name of a replica started without `replica_id` (`--replica-id`,
/// `ASKGATE_REPLICA_ID`): the host name and a random suffix.
pub fn replica_id() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "askgate".to_string());
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}-{}", suffix.get(..8).unwrap_or("0"))
}

/// `url` as logs and errors may show it: the password replaced, nothing else changed.
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => "PostgreSQL (an unparsable `store` URL)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_shows() {
        let shown = redacted("postgres://askgate:s3cret@db.internal:5432/askgate");
        assert_eq!(shown, "postgres://askgate:***@db.internal:5432/askgate");
        assert!(!redacted("postgres://u:s3cret@h/db?sslmode=disable").contains("s3cret"));
        assert!(!redacted("host=h password=s3cret").contains("s3cret"));
    }
}
