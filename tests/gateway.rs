//! End-to-end tests of `askgate serve` (issue 3): each test boots its own service with an
//! in-process sandbox upstream on loopback and talks to it over real HTTP, as the demo agent
//! and approver. They assert decisions, statuses, approvals and the sandbox's own counters;
//! they must not reach into the service's state.

mod approvals;
mod consent_grants;
mod harness;
mod plans;
mod projects;
mod transport;
