//! The real Claude Code client against askgate: the fake Messages API scripts the model, the
//! client runs headless, askgate and its sandbox run on loopback.

mod attest;
mod attest_sessions;
mod client;
mod hook;
mod idp;
mod mcp;
mod oauth;
mod users;
