//! store: where the state replicas share lives — in this process (the embedded default) or in
//! PostgreSQL (`serve --store postgres://…`, a fleet). Each kind of shared state has one seam,
//! a trait whose methods are the events that change it: the account's consent, grants and
//! plans ([`AccountStore`]), approvals ([`approvals::ApprovalBook`]) and console sessions
//! ([`console::ConsoleBook`]). The store owns its seams and never imports `server`. Decisions never wait on a store for a read: the
//! gateway readies a replica's view during `prepare` and the pure core gathers from it.
//!
//! Map: `account` (the account seam and its in-memory implementation), `attestations` (hook
//! attestations of MCP calls, their seam and the in-memory book), `approvals` (the
//! approval books' seam, their limits and errors, and the in-memory books), `console` (the
//! console sessions' seam and its in-memory book), `postgres` (the PostgreSQL implementations,
//! their migrations, listener and lease).

pub mod account;
pub mod approvals;
pub mod attestations;
pub mod console;
pub mod postgres;
pub mod rows;

pub use account::{AccountStore, MemoryAccount};

/// Why the shared store could not serve: the store is named (never its password) and so is
/// the cause. Callers refuse what needed it (503): nothing is decided on guesses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("the shared store {store} is unavailable: {cause}")]
    Unavailable { store: String, cause: String },
    #[error("the shared store {store} refused the change: {cause}")]
    Refused { store: String, cause: String },
}

/// What kind of store a service runs on, as `/healthz` and the start-up banner say it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoreHealth {
    /// `memory` or the PostgreSQL URL without its password.
    pub store: String,
    /// Whether calls that read shared state may be decided now.
    pub ready: bool,
    /// Why not, when not.
    pub cause: Option<String>,
    /// This replica's id (PostgreSQL only).
    pub replica: Option<String>,
}
