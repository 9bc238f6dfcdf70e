//! executor: the thin client that runs a call upstream after the decision allowed it (or a
//! human approved it). It holds no policy logic: transport, protocol, result mapping and
//! token redaction only.
//!
//! Map: `credentials` (the bearer token and its single-flight refresh), `design` (MCP over
//! HTTP: shared initialize, discovery, consent and grant endpoints, identity), `result` (caps
//! and notices of a tool result), `projects` (org and session routes, reads, writes,
//! `local_path`), `redact` (`[redacted-oauth-token]`).

pub mod credentials;
pub mod design;
pub mod projects;
pub mod redact;
pub mod result;
