//! store::approvals::limits: the bounds and deadlines the approval books apply, with their
//! defaults. Reading them from the config file (and validating them) is `server::config`'s.

use std::time::Duration;

/// Validated bounds: open (pending or running) approvals per caller and in all, the bytes of
/// the calls they hold, how long finished ones are kept, and the deadlines of the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalLimits {
    pub max_pending_per_caller: usize,
    pub max_pending: usize,
    pub max_held_bytes: u64,
    /// The bytes one caller's held calls may take, so one agent cannot fill the store.
    pub max_held_bytes_per_caller: u64,
    pub retention: Duration,
    /// A running approval ends (`completed` or `failed`) within this.
    pub run_deadline: Duration,
    /// How long `POST …/approve` waits for the work before answering `running`.
    pub approve_wait: Duration,
    pub sweep_interval: Duration,
}

impl Default for ApprovalLimits {
    fn default() -> Self {
        Self {
            max_pending_per_caller: 32,
            max_pending: 1024,
            max_held_bytes: 64 * 1024 * 1024,
            max_held_bytes_per_caller: 16 * 1024 * 1024,
            retention: Duration::from_secs(600),
            run_deadline: Duration::from_secs(180),
            approve_wait: Duration::from_secs(30),
            sweep_interval: Duration::from_millis(1000),
        }
    }
}
