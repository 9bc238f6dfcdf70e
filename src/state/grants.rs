//! Durable per-project write grants as this process knows them (client-facts §5.1, §5.6):
//! verified projects, grant-ineligible projects and the recard flags. It must not call the grant
//! endpoints or decide whether a write may run; it only records what happened.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use dashmap::{DashMap, DashSet};

use crate::paths::project_key;

/// Everything a [`GrantStore`] holds, as a store keeps it (sorted, so equal books compare
/// and serialize equal).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantBook {
    pub verified: Vec<String>,
    pub ineligible: Vec<String>,
    pub recard: Vec<String>,
    pub recard_all_epoch: u64,
    pub reapproved: Vec<(String, u64)>,
}

/// Grant state; every method takes `&self` and is safe from many threads.
///
/// Reads are lock-free. Changes hold `changes`, so a change touching two sets (verify and clear
/// the recard flag; flag and unverify) is never interleaved with another change.
// INVARIANT: once changes settle, no verified project needs recard: a verified mark would skip
// the identity card that the recard flag exists to show again.
#[derive(Debug, Default)]
pub struct GrantStore {
    /// Raw project ids, compared exactly (`verifiedProjectGrants`).
    verified: DashSet<String>,
    /// Project keys (`grantIneligibleProjects`).
    ineligible: DashSet<String>,
    /// Project keys flagged one by one (`recardProjects`).
    recard: DashSet<String>,
    /// How many times recard-all was set; 0 means never (`recardAllProjects`). An epoch rather
    /// than a flag plus a cleared set, so a reader never sees the flag without the reset.
    recard_all_epoch: AtomicU64,
    /// Project key → the recard-all epoch in force when the user last re-approved its card.
    reapproved: DashMap<String, u64>,
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

    /// Whether the server's word on this project's grant must not be trusted until the user
    /// re-approves the identity card: flagged, or recard-all set and not re-approved since.
    pub fn needs_recard(&self, project_id: &str) -> bool {
        let key = project_key(project_id);
        if self.recard.contains(&key) {
            return true;
        }
        let epoch = self.recard_all_epoch.load(Ordering::SeqCst);
        epoch != 0 && self.reapproved.get(&key).map(|entry| *entry.value()) != Some(epoch)
    }

    /// Whether consent was ever seeded false in this process, so every project needs its card.
    pub fn recard_all_flagged(&self) -> bool {
        self.recard_all_epoch.load(Ordering::SeqCst) != 0
    }

    /// `POST /v1/design/grants` returned 2xx after the user approved the card: the project is
    /// verified and no longer needs recard.
    pub fn grant_recorded(&self, project_id: &str) {
        let _changes = self.changes_locked();
        let key = project_key(project_id);
        let epoch = self.recard_all_epoch.load(Ordering::SeqCst);
        self.reapproved.insert(key.clone(), epoch);
        self.recard.remove(&key);
        self.verified.insert(project_id.to_owned());
    }

    /// The server's GET says granted (§8 6e). Marks the project verified and returns true, unless
    /// it needs recard: then nothing changes and it returns false.
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
        // Bumped first: from here on no earlier re-approval counts.
        self.recard_all_epoch.fetch_add(1, Ordering::SeqCst);
        self.reapproved.clear();
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

    /// The whole store as data.
    pub fn book(&self) -> GrantBook {
        let _changes = self.changes_locked();
        let mut reapproved: Vec<(String, u64)> = self
            .reapproved
            .iter()
            .map(|entry| (entry.key().clone(), *entry.value()))
            .collect();
        reapproved.sort();
        GrantBook {
            verified: self.verified_projects(),
            ineligible: self.ineligible_keys(),
            recard: self.recard_projects(),
            recard_all_epoch: self.recard_all_epoch.load(Ordering::SeqCst),
            reapproved,
        }
    }

    /// Replaces everything with `book` in one change (a replica catching up with its store).
    pub fn restore(&self, book: &GrantBook) {
        let _changes = self.changes_locked();
        self.verified.clear();
        self.ineligible.clear();
        self.recard.clear();
        self.reapproved.clear();
        for (set, items) in [
            (&self.verified, &book.verified),
            (&self.ineligible, &book.ineligible),
            (&self.recard, &book.recard),
        ] {
            for item in items {
                set.insert(item.clone());
            }
        }
        for (key, epoch) in &book.reapproved {
            self.reapproved.insert(key.clone(), *epoch);
        }
        self.recard_all_epoch
            .store(book.recard_all_epoch, Ordering::SeqCst);
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
