//! sandbox::state: the Design side's state (projects, files, members, conversations, consent,
//! grants, plan tokens), its seed, the optional JSON state file and the sandbox clock. It must
//! not decide who may change what; that is `enforce`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

use super::SandboxError;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub account_uuid: String,
    pub email: String,
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    pub title: String,
    pub messages: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignProject {
    pub id: String,
    pub name: String,
    /// `invited`, `org` or `public`.
    pub scope: String,
    pub link_permission: String,
    /// False for projects that cannot hold a durable write grant (shared from elsewhere).
    pub grantable: bool,
    pub design_system_id: Option<String>,
    pub members: Vec<Member>,
    pub files: BTreeMap<String, String>,
    pub conversations: BTreeMap<String, Conversation>,
}

/// A minted plan token: what it lets the holder write and delete, until when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanGrant {
    pub project_id: String,
    pub writes: BTreeSet<String>,
    pub deletes: BTreeSet<String>,
    /// Unix seconds.
    pub expires_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DesignState {
    pub projects: BTreeMap<String, DesignProject>,
    pub consent: bool,
    /// Project id → RFC 3339 creation time.
    pub grants: BTreeMap<String, String>,
    pub plans: BTreeMap<String, PlanGrant>,
}

fn project(id: &str, name: &str, scope: &str, grantable: bool) -> DesignProject {
    DesignProject {
        id: id.to_owned(),
        name: name.to_owned(),
        scope: scope.to_owned(),
        link_permission: "view".to_owned(),
        grantable,
        design_system_id: None,
        members: vec![Member {
            account_uuid: "acct-owner-0001".to_owned(),
            email: "owner@example.com".to_owned(),
            role: "editor".to_owned(),
        }],
        files: BTreeMap::new(),
        conversations: BTreeMap::new(),
    }
}

impl DesignState {
    /// The seed of the common contract: p1, p2, shared-1 (not grantable), pub-1; no consent.
    pub fn seed() -> Self {
        let mut deck = project("p1", "Q3 deck", "invited", true);
        deck.files.insert(
            "index.html".to_owned(),
            "<!doctype html><title>Q3 deck</title><link rel=\"stylesheet\" href=\"styles.css\">"
                .to_owned(),
        );
        deck.files
            .insert("styles.css".to_owned(), "body { margin: 0; }".to_owned());
        let projects = [
            deck,
            project("p2", "Launch site", "org", true),
            project("shared-1", "Partner deck", "invited", false),
            project("pub-1", "Public board", "public", true),
        ];
        DesignState {
            projects: projects.into_iter().map(|p| (p.id.clone(), p)).collect(),
            consent: false,
            grants: BTreeMap::new(),
            plans: BTreeMap::new(),
        }
    }
}

/// The Design state behind one lock, saved to the state file after each change.
pub struct DesignStore {
    state: Mutex<DesignState>,
    file: Option<PathBuf>,
}

impl DesignStore {
    /// Loads the state file when it exists; a missing file starts from the seed.
    pub fn open(file: Option<PathBuf>) -> Result<Self, SandboxError> {
        let state = match &file {
            Some(path) if path.exists() => load(path)?,
            _ => DesignState::seed(),
        };
        Ok(DesignStore {
            state: Mutex::new(state),
            file,
        })
    }

    /// Reads under the lock.
    pub fn read<T>(&self, reader: impl FnOnce(&DesignState) -> T) -> T {
        reader(&self.lock())
    }

    /// Changes under the lock, then saves. A failed save is logged: the in-memory state stays
    /// the truth while the sandbox runs.
    pub fn change<T>(&self, changer: impl FnOnce(&mut DesignState) -> T) -> T {
        let mut state = self.lock();
        let result = changer(&mut state);
        if let Some(path) = &self.file {
            if let Err(error) = save(path, &state) {
                tracing::warn!("cannot save the sandbox state file: {error}");
            }
        }
        result
    }

    fn lock(&self) -> MutexGuard<'_, DesignState> {
        // A panic while holding the lock cannot leave the state half-written in a way that
        // matters for a sandbox, so a poisoned lock is simply taken over.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn load(path: &PathBuf) -> Result<DesignState, SandboxError> {
    let shown = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|error| SandboxError::StateFileUnreadable {
            path: shown.clone(),
            message: error.to_string(),
        })?;
    serde_json::from_str(&text).map_err(|error| SandboxError::StateFileInvalid {
        path: shown,
        message: error.to_string(),
    })
}

fn save(path: &PathBuf, state: &DesignState) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(state).map_err(std::io::Error::other)?;
    // Write then rename, so a reader never sees half a file.
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

/// The sandbox's notion of now: the system clock plus an offset tests can advance.
#[derive(Debug, Default)]
pub struct SandboxClock {
    offset_seconds: AtomicI64,
}

impl SandboxClock {
    pub fn now(&self) -> time::OffsetDateTime {
        let offset = self.offset_seconds.load(Ordering::SeqCst);
        time::OffsetDateTime::now_utc() + time::Duration::seconds(offset)
    }

    pub fn now_seconds(&self) -> i64 {
        self.now().unix_timestamp()
    }

    pub fn advance(&self, seconds: i64) {
        self.offset_seconds.fetch_add(seconds, Ordering::SeqCst);
    }

    pub fn reset(&self) {
        self.offset_seconds.store(0, Ordering::SeqCst);
    }

    pub fn now_rfc3339(&self) -> String {
        self.now()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_has_the_four_projects_and_no_consent() {
        let seed = DesignState::seed();
        let ids: Vec<&str> = seed.projects.keys().map(String::as_str).collect();
        assert_eq!(ids, ["p1", "p2", "pub-1", "shared-1"]);
        assert!(!seed.consent);
        assert!(!seed.projects["shared-1"].grantable);
        assert_eq!(seed.projects["pub-1"].scope, "public");
        assert!(seed.projects["p1"].files.contains_key("styles.css"));
    }

    #[test]
    fn state_file_round_trips_and_rejects_garbage() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("state.json");
        let store = DesignStore::open(Some(path.clone())).unwrap();
        store.change(|state| state.consent = true);
        let reopened = DesignStore::open(Some(path.clone())).unwrap();
        assert!(reopened.read(|state| state.consent));
        std::fs::write(&path, "{not json").unwrap();
        let error = DesignStore::open(Some(path)).err().unwrap();
        assert!(error.to_string().starts_with("invalid state file"));
    }

    #[test]
    fn clock_advances_and_resets() {
        let clock = SandboxClock::default();
        let before = clock.now_seconds();
        clock.advance(600);
        assert!(clock.now_seconds() >= before + 600);
        clock.reset();
        assert!(clock.now_seconds() < before + 600);
    }
}
