//! askgate's integration tests: one binary, one module per concern (like ripgrep).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod agents;
mod analysis;
mod audit;
mod cache;
mod cli;
mod corpus;
mod docs;
mod fleet;
mod gateway;
mod hostile;
mod identity;
mod isolation;
mod layers;
mod reliability;
mod support;
