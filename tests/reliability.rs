//! Reliability tests of issues 4 and 9: hot reload under concurrent load and by the watcher
//! (including ConfigMap volumes and broken policy entries), `kill -9` of the real `askgate serve`
//! binary under load, and a decision log that is unwritable, full, or deleted or replaced under
//! the service. Each test starts its own service on loopback (in process or as a child process)
//! and talks real HTTP; they read the service's state only through `/healthz` and the log files.

mod chain;
mod crash;
mod deep;
mod full_disk;
pub(crate) mod harness;
mod hostile_logs;
mod log_metrics;
mod reload;
mod replaced;
mod unwritable;
mod warnings;
mod watched;
