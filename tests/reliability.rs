//! Reliability tests of issue 4: hot reload under concurrent load and by the watcher, `kill -9`
//! of the real `askgate serve` binary under load, and an unwritable decision log at the service
//! level. Each test starts its own service on loopback (in process or as a child process) and
//! talks real HTTP; they read the service's state only through `/healthz` and the log files.

mod crash;
mod full_disk;
mod harness;
mod reload;
mod replaced;
mod unwritable;
mod watched;
