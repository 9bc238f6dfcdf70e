//! server::reload: hot reload of the policy snapshot. A new snapshot is built and strictly
//! validated off to the side, then swapped in atomically; a request loads the snapshot once,
//! so no decision ever sees a half-loaded set. An invalid change keeps the running set and is
//! reported in `/healthz`. Triggers: a change in the policy directories (polled), SIGHUP, and
//! `POST /v1/admin/reload`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use crate::authz::{LoadProblem, PolicySnapshot};
use crate::sources::listing::{policy_entries, PolicyEntry};
use crate::sources::{self, PolicyArgs};

/// What the last reload attempt did.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReloadStatus {
    pub snapshot: String,
    pub policies: usize,
    pub reloads: u64,
    pub last_error: Option<Vec<String>>,
}

/// Rebuilds the live (and shadow) snapshots from their directories.
#[derive(Debug)]
pub struct Reloader {
    live: PolicyArgs,
    shadow: Option<PolicyArgs>,
    status: Mutex<ReloadStatus>,
    /// The directories' fingerprint taken just before the running set was loaded, so a change
    /// made while loading is still seen as a change.
    loaded_from: Mutex<Fingerprint>,
    /// Serializes reloads so two triggers never race to swap.
    running: tokio::sync::Mutex<()>,
}

/// The outcome of one reload.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReloadReport {
    pub reloaded: bool,
    pub snapshot: String,
    pub problems: Vec<String>,
}

impl Reloader {
    /// `loaded_from` is the fingerprint taken before `current` was loaded (`fingerprint_of`).
    pub fn new(
        live: PolicyArgs,
        shadow: Option<PolicyArgs>,
        current: &PolicySnapshot,
        loaded_from: Fingerprint,
    ) -> Self {
        let status = ReloadStatus {
            snapshot: current.hash().to_string(),
            policies: current.len(),
            reloads: 0,
            last_error: None,
        };
        Self {
            live,
            shadow,
            status: Mutex::new(status),
            loaded_from: Mutex::new(loaded_from),
            running: tokio::sync::Mutex::new(()),
        }
    }

    pub fn loaded_from(&self) -> Fingerprint {
        self.loaded_from
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn status(&self) -> ReloadStatus {
        self.status
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The arguments the live set is loaded from.
    pub fn live_args(&self) -> &PolicyArgs {
        &self.live
    }

    pub fn shadow_args(&self) -> Option<&PolicyArgs> {
        self.shadow.as_ref()
    }

    /// Builds the new live snapshot off the request path; swaps only when it is valid.
    pub async fn reload(
        &self,
        swap: impl FnOnce(PolicySnapshot),
        swap_shadow: impl FnOnce(PolicySnapshot),
    ) -> ReloadReport {
        let _running = self.running.lock().await;
        let before = self.fingerprint();
        let live = self.live.clone();
        let built = tokio::task::spawn_blocking(move || sources::load(&live)).await;
        let loaded = match built {
            Ok(loaded) => loaded,
            Err(join) => Err(crate::authz::LoadError::single(LoadProblem::in_file(
                "<reload>",
                None,
                join.to_string(),
            ))),
        };
        let mut status = self.status();
        let report = match loaded {
            Ok(snapshot) => {
                let hash = snapshot.hash().to_string();
                let changed = hash != status.snapshot;
                if changed {
                    log_warnings(&snapshot);
                }
                status.snapshot = hash.clone();
                status.policies = snapshot.len();
                status.reloads += u64::from(changed);
                status.last_error = None;
                // The status is published under its lock with the swap, so a health read that
                // sees the new set (it loads the set first) also sees the reload that made it.
                let mut published = self.status.lock().unwrap_or_else(PoisonError::into_inner);
                swap(snapshot);
                *published = status.clone();
                drop(published);
                ReloadReport {
                    reloaded: changed,
                    snapshot: hash,
                    problems: Vec::new(),
                }
            }
            Err(error) => {
                let problems: Vec<String> =
                    error.problems.iter().map(ToString::to_string).collect();
                tracing::warn!(
                    problems = problems.len(),
                    "policy reload refused; keeping the running set"
                );
                status.last_error = Some(problems.clone());
                ReloadReport {
                    reloaded: false,
                    snapshot: status.snapshot.clone(),
                    problems,
                }
            }
        };
        let mut report = report;
        if let Some(shadow) = self.shadow.clone() {
            match tokio::task::spawn_blocking(move || sources::load(&shadow)).await {
                Ok(Ok(snapshot)) => swap_shadow(snapshot),
                Ok(Err(error)) => {
                    // The running shadow set stays; the problem is reported like a live one.
                    let problems: Vec<String> = error
                        .problems
                        .iter()
                        .map(|problem| format!("shadow: {problem}"))
                        .collect();
                    status
                        .last_error
                        .get_or_insert_with(Vec::new)
                        .extend(problems.iter().cloned());
                    report.problems.extend(problems);
                }
                Err(join) => {
                    let problem = format!("shadow: {join}");
                    status
                        .last_error
                        .get_or_insert_with(Vec::new)
                        .push(problem.clone());
                    report.problems.push(problem);
                }
            }
        }
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = status;
        *self
            .loaded_from
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = before;
        report
    }

    /// A fingerprint of the watched directories (see [`Fingerprint`]).
    pub fn fingerprint(&self) -> Fingerprint {
        fingerprint_of(&self.live, self.shadow.as_ref())
    }
}

/// What the watcher compares: every `*.cedar` entry of every directory as seen through its
/// symlinks (size, time, device and inode of the file it names, or why it is not one), the
/// SHA-256 of each file's bytes, and any directory that cannot be listed. A Kubernetes
/// ConfigMap's `..data` swap changes the inode behind every link, so it is a change (F7); a
/// link whose target vanishes is one too, and the reload it triggers reports it (C14); an edit
/// in place that keeps the size and the time (`cp -p`, `rsync -t --inplace`) changes the hash.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<(PolicyEntry, Option<ContentHash>)>);

/// The SHA-256 of a policy file's bytes; `None` in a fingerprint when it could not be read
/// (the reload that follows reports why).
type ContentHash = [u8; 32];

pub fn fingerprint_of(live: &PolicyArgs, shadow: Option<&PolicyArgs>) -> Fingerprint {
    let mut dirs: Vec<PathBuf> = live.policies.clone();
    dirs.extend(live.baseline.clone());
    if let Some(shadow) = shadow {
        dirs.extend(shadow.policies.clone());
        dirs.extend(shadow.baseline.clone());
    }
    let mut entries = Vec::new();
    for dir in dirs {
        match policy_entries(&dir) {
            Ok(listed) => entries.extend(listed),
            Err(error) => entries.push(PolicyEntry::Problem {
                path: dir,
                message: error.to_string(),
            }),
        }
    }
    entries.sort();
    let hashed = entries
        .into_iter()
        .map(|entry| {
            let hash = match &entry {
                PolicyEntry::File { path, .. } => content_hash(path),
                PolicyEntry::Problem { .. } => None,
            };
            (entry, hash)
        })
        .collect();
    Fingerprint(hashed)
}

fn content_hash(path: &std::path::Path) -> Option<ContentHash> {
    use sha2::Digest;
    let bytes = std::fs::read(path).ok()?;
    Some(sha2::Sha256::digest(bytes).into())
}

pub type SharedReloader = Arc<Reloader>;

/// Each warning of a set just loaded (`PolicySnapshot::warnings`: what loads but cannot do
/// what it says), as a log line.
pub fn log_warnings(snapshot: &PolicySnapshot) {
    for warning in snapshot.warnings() {
        tracing::warn!(%warning, "policy loaded with a warning");
    }
}
