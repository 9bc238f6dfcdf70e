//! The fleet (issue 20): replicas of the real `askgate serve --store postgres://…` sharing one
//! PostgreSQL, and the conformance suite every approval book passes (in memory and in
//! PostgreSQL). Each test has its own fresh database, dropped afterwards, so tests run in
//! parallel, on the PostgreSQL at `ASKGATE_TEST_DATABASE_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`) or, when none answers there, on a throwaway
//! cluster the harness starts (`cluster`). They never skip.

mod binding;
mod cluster;
mod conformance;
mod harness;
mod outage;
mod quorum;
mod replicas;
mod shared;
mod trust;
mod upgrade;
mod usage;
