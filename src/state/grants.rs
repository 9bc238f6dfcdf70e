//! Durable per-project write grants as this process knows them (client-facts §5.1, §5.6):
//! verified projects, grant-ineligible projects and the recard flags. It must not call the grant
//! endpoints or decide whether a write may run; it only records what happened.
//!
//! A recard flag withdraws trust from the *server's* grant only (§5.1): a flagged project is
//! not verified from a server answer, and its next tokenless write shows the identity card. A
//! project the human then re-approves is verified and keeps its flag, as in the reference, so
//! a verified grant allows (§8 6e) while the non-interactive rule (§8 6a), which names the
//! flag, still refuses it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use dashmap::DashSet;

use crate::paths::project_key;

/// Grant state; every method takes `&self` and is safe from many threads.
///
/// Reads are lock-free. Changes hold `changes`, so a change touching two sets (flag and
/// unverify) is never interleaved with another change.
// INVARIANT: a project flagged for recard becomes verified only through `grant_recorded` (the
// human approved its card after the flag was set); `server_grant_observed` never verifies it.
#[derive(Debug, Default)]
pub struct GrantStore {
    /// Raw project ids, compared exactly (`verifiedProjectGrants`).
    verified: DashSet<String>,
    /// Project keys (`grantIneligibleProjects`).
    ineligible: DashSet<String>,
    /// Project keys flagged one by one (`recardProjects`).
    recard: DashSet<String>,
    /// Consent was seeded false in this process (`recardAllProjects`): every project is flagged.
    recard_all: AtomicBool,
    changes: Mutex<()>,
}

impl GrantStore {
    /// Whether this exact project id holds a verified grant.
    pub fn is_verified(&self, project_id: &str) -> bool {
        self.verified.contains(project_id)
    }

    /// Whether an earlier grant POST for this project (by key) returned 404.
    pub fn is_ineligible(&self, project_id: &str) -> bool {
        self.ineligible.contains(&project_key(project_id))
    }

    /// Whether the project is flagged for recard (one by one, or by recard-all): the server's
    /// word on its grant is not trusted, and a non-interactive session may not write under it.
    /// A verified project may be flagged too: the human re-approved its card after the flag.
    pub fn needs_recard(&self, project_id: &str) -> bool {
        self.recard_all_flagged() || self.recard.contains(&project_key(project_id))
    }

    /// Whether consent was ever seeded false in this process, so every project is flagged.
    pub fn recard_all_flagged(&self) -> bool {
        self.recard_all.load(Ordering::SeqCst)
    }

    /// `POST /v1/design/grants` returned 2xx after the user approved the card: the project is
    /// verified. Its recard flag stays (the reference never clears one; §8 6a reads it).
    pub fn grant_recorded(&self, project_id: &str) {
        let _changes = self.changes_locked();
        self.verified.insert(project_id.to_owned());
    }

    /// The server's GET says granted (§8 6e). Marks the project verified and returns true, unless
    /// it is flagged for recard: then nothing changes and it returns false.
    pub fn server_grant_observed(&self, project_id: &str) -> bool {
        let _changes = self.changes_locked();
        if self.needs_recard(project_id) {
            return false;
        }
        self.verified.insert(project_id.to_owned());
        true
    }

    /// `POST /v1/design/grants` returned 404: the project (by key) can't hold a grant in this
    /// process (`m0f`).
    pub fn grant_refused_not_found(&self, project_id: &str) {
        self.ineligible.insert(project_key(project_id));
    }

    /// The server demanded a grant: the verified mark goes. Every spelling with the same key goes
    /// too, because they name the same project and keeping one would keep trusting it.
    pub fn verified_dropped(&self, project_id: &str) {
        let _changes = self.changes_locked();
        self.unverified(&project_key(project_id));
    }

    pub fn all_verified_dropped(&self) {
        let _changes = self.changes_locked();
        self.verified.clear();
    }

    /// Sharing or membership changed: the project (by key) needs its card again. Its verified
    /// mark goes in the same step, since a verified project would never show the card.
    pub fn recard_flagged(&self, project_id: &str) {
        let _changes = self.changes_locked();
        let key = project_key(project_id);
        self.recard.insert(key.clone());
        self.unverified(&key);
    }

    /// Consent was seeded false: every project needs its card again, and every verified mark goes
    /// in the same step.
    pub fn recard_all(&self) {
        let _changes = self.changes_locked();
        self.recard_all.store(true, Ordering::SeqCst);
        self.verified.clear();
    }

    /// Verified raw project ids, sorted.
    pub fn verified_projects(&self) -> Vec<String> {
        sorted(self.verified.iter().map(|id| id.clone()))
    }

    /// Grant-ineligible project keys, sorted.
    pub fn ineligible_keys(&self) -> Vec<String> {
        sorted(self.ineligible.iter().map(|key| key.clone()))
    }

    /// Project keys flagged one by one for recard, sorted (recard-all is reported separately).
    pub fn recard_projects(&self) -> Vec<String> {
        sorted(self.recard.iter().map(|key| key.clone()))
    }

    /// Callers hold `changes`.
    fn unverified(&self, key: &str) {
        self.verified.retain(|id| project_key(id) != key);
    }

    /// `()` behind the lock cannot be left inconsistent by a panicking holder.
    fn changes_locked(&self) -> MutexGuard<'_, ()> {
        self.changes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn sorted(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut items: Vec<String> = items.collect();
    items.sort();
    items
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
