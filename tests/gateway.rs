//! End-to-end tests of `askgate serve` (issue 3): each test boots its own service with a
//! sandbox upstream on loopback (the in-process one, or one the test starts behind a recording
//! layer: `upstream`) and talks to it over real HTTP, as the demo agent and approver. They assert
//! decisions, statuses, approvals and what the sandbox saw; they must not reach into the
//! service's state (the `local_path` test seam only times a file swap).

mod approval_bounds;
mod approval_log;
mod approval_work;
mod approvals;
mod approvals_cli;
mod approving;
mod attest;
mod boundaries;
mod cards;
mod consent_grants;
pub(crate) mod console;
mod console_boundaries;
mod console_browser;
mod escalation;
mod explain;
mod fatigue;
mod hardening;
pub(crate) mod harness;
mod hook;
mod hook_command;
pub(crate) mod hook_install;
pub(crate) mod hook_log;
mod local_path;
mod mcp;
pub mod mcp_client;
mod mcp_fast;
mod nulls;
mod otel;
mod plans;
mod projects;
mod quorum;
mod rate;
mod recard;
mod session_route;
mod state;
mod transport;
mod trust;
mod upstream;
mod usage;
mod users;
mod webhook;
mod wire_shapes;
