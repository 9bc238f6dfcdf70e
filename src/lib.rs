//! askgate: a Cedar permission service for AI agents working on claude.ai Design and Projects.
//!
//! Every call flows one way through these layers:
//!
//! - [`call`]: typed `ClaudeDesign` / `Projects` inputs and their local validation.
//! - [`paths`]: path normalization, per-target facts, enumeration, display budgets.
//! - [`identity`]: sanitizing a project's server-verified identity for the grant card.
//! - [`state`]: the session stores (consent, plans, grants) with one method per event.
//! - [`store`]: where shared state lives: in this process, or PostgreSQL for a fleet.
//! - [`facts`]: everything known about one call, gathered into a Cedar request context.
//! - [`authz`]: policy snapshots and the pure, synchronous allow / ask / deny decision.
//! - [`sources`]: where policies come from: the schema and policy files on disk (or the
//!   embedded baseline), read and loaded into a snapshot.
//! - [`audit`]: the decision log, its reader, replay and queries.
//! - [`analysis`]: `diff` and `validate --analyze`: what policies could ever decide, proved by
//!   the symbolic compiler and `cvc5` (async, spawns the solver; apart from the pure core).
//! - [`executor`]: the thin upstream client (Design MCP, Projects routes) run after a decision.
//! - [`server`]: `askgate serve`, the HTTP service (decide → execute / hold / refuse).
//! - [`trace`]: the spans askgate exports over OpenTelemetry and the W3C trace context they
//!   carry in from callers and out to the upstream.
//! - [`sandbox`]: a real HTTP fake of claude.ai for tests, demos and the default `serve`.
//! - [`scenario`]: the JSON scenario format of `check`, `test` and the corpus.
//! - [`cli`]: the `askgate` subcommands (adapters over the layers above).

pub mod analysis;
pub mod audit;
pub mod authz;
pub mod call;
pub mod cli;
pub mod executor;
pub mod facts;
pub mod identity;
pub mod paths;
pub mod sandbox;
pub mod scenario;
pub mod server;
pub mod sources;
pub mod state;
pub mod store;
pub mod trace;
