//! server::reload: hot reload of the policy sets. A new generation (`server::policies`: the
//! live, hook-mode, approving and shadow sets) is built and strictly validated off to the side,
//! then swapped in one step; a request loads the generation once, so no decision ever sees a
//! half-loaded set or sets of two reloads. An invalid change keeps the running set and is
//! reported in `/healthz`. Triggers: a change in the policy directories (polled), SIGHUP, and
//! `POST /v1/admin/reload`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

use super::policies::Generation;
use crate::authz::PolicySnapshot;
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

    /// Builds a new generation off the request path — the live set with its hook-mode and
    /// approving sets, all three or none, and the shadow set — and swaps it in one step when
    /// the live three are valid (a shadow set that does not load keeps the running one). What
    /// did not load is reported, naming the set; the running generation stays.
    pub async fn reload(
        &self,
        current: &Generation,
        swap: impl FnOnce(Generation),
    ) -> ReloadReport {
        let _running = self.running.lock().await;
        let before = self.fingerprint();
        let live = self.live.clone();
        let built = tokio::task::spawn_blocking(move || build(&live))
            .await
            .unwrap_or_else(|join| Err(vec![join.to_string()]));
        let mut status = self.status();
        let mut problems = Vec::new();
        let shadow = match self.shadow.clone() {
            None => None,
            Some(shadow) => match tokio::task::spawn_blocking(move || sources::load(&shadow)).await
            {
                Ok(Ok(snapshot)) => Some(Arc::new(snapshot)),
                Ok(Err(error)) => {
                    // The running shadow set stays; the problem is reported like a live one.
                    problems.extend(
                        error
                            .problems
                            .iter()
                            .map(|problem| format!("shadow: {problem}")),
                    );
                    current.shadow.clone()
                }
                Err(join) => {
                    problems.push(format!("shadow: {join}"));
                    current.shadow.clone()
                }
            },
        };
        let (generation, reloaded) = match built {
            Ok((live, hook, approving)) => {
                let hash = live.hash().to_string();
                let changed = hash != status.snapshot;
                if changed {
                    log_warnings(&live);
                }
                status.snapshot = hash;
                status.policies = live.len();
                status.reloads += u64::from(changed);
                let generation = Generation {
                    live: Arc::new(live),
                    hook: Arc::new(hook),
                    shadow,
                    approving: Arc::new(approving),
                };
                (generation, changed)
            }
            Err(refused) => {
                tracing::warn!(
                    problems = refused.len(),
                    "policy reload refused; keeping the running set"
                );
                problems.splice(0..0, refused);
                let generation = Generation {
                    live: current.live.clone(),
                    hook: current.hook.clone(),
                    shadow,
                    approving: current.approving.clone(),
                };
                (generation, false)
            }
        };
        status.last_error = (!problems.is_empty()).then(|| problems.clone());
        // The status is published under its lock with the swap, so a health read that sees the
        // new set (it loads the set first) also sees the reload that made it.
        let mut published = self.status.lock().unwrap_or_else(PoisonError::into_inner);
        swap(generation);
        *published = status.clone();
        drop(published);
        *self
            .loaded_from
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = before;
        ReloadReport {
            reloaded,
            snapshot: status.snapshot,
            problems,
        }
    }

    /// A fingerprint of the watched directories (see [`Fingerprint`]).
    pub fn fingerprint(&self) -> Fingerprint {
        fingerprint_of(&self.live, self.shadow.as_ref())
    }
}

/// The live set with its hook-mode and approving sets, from the live directories: all three,
/// or the problems of the first that does not load (named but for the live set's).
fn build(
    args: &PolicyArgs,
) -> Result<(PolicySnapshot, PolicySnapshot, PolicySnapshot), Vec<String>> {
    let named = |set: &str| {
        let set = set.to_string();
        move |error: crate::authz::LoadError| -> Vec<String> {
            error
                .problems
                .iter()
                .map(|problem| format!("{set}{problem}"))
                .collect()
        }
    };
    let live = sources::load(args).map_err(named(""))?;
    let hook = sources::load_hook(args).map_err(named("hook: "))?;
    let approving = sources::load_approving(args).map_err(named("approving: "))?;
    Ok((live, hook, approving))
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
