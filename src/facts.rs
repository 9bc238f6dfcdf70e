//! facts: everything known about one call, gathered from the validated call, the session
//! facts, the environment, the session stores and upstream observations. Pure analysis and
//! lookups: it decides nothing (the policies do) and reads no clock (time is passed in).
//!
//! Map: `caller` (who calls, as verified, and what it may claim), `session` and `environment`
//! (the facts the caller and the deployment supply), `observations` (what the
//! upstream said: server grants, project identities, catalog, project data), `design` and
//! `projects` (per-surface gathering), `targets` (a Design call's target facts, remembered by
//! path list). What the caller did lately comes from `state::usage`.
//! The decision input they produce (`CallFacts`) is the decision core's type (`authz::input`).

pub mod caller;
pub mod design;
pub mod environment;
pub mod observations;
pub mod projects;
pub mod session;
pub mod targets;

pub use caller::CallerFacts;
pub use environment::Environment;
pub use observations::{DesignObservations, Observations, ProjectsObservations, ServerGrants};
pub use session::{AgentKind, Attestation, Mode, Session};
