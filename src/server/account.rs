//! server::account: the upstream account the gateway acts for — its Design and Projects
//! clients, the store of its Design state (`store::AccountStore`: consent and grants per
//! account, plans per session; in this process or shared by a fleet) and the catalog it
//! discovered.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use crate::call::Catalog;
use crate::executor::design::DesignClient;
use crate::executor::projects::ProjectsExecutor;
use crate::state::{AccountEvent, DesignState};
use crate::store::{AccountStore, MemoryAccount, StoreError};

/// How many agents' catalog hashes are remembered for `list` dedup (client-facts §1.2).
pub const CATALOG_AGENTS: usize = 64;

pub struct Account {
    pub design: DesignClient,
    pub projects: Option<ProjectsExecutor>,
    /// The scopes of the upstream credential (Projects needs both project scopes).
    pub scopes: Vec<String>,
    /// Changed only through its events (and the follow-ups that name them).
    pub store: Arc<dyn AccountStore>,
    catalog: RwLock<Option<Arc<Catalog>>>,
    served_catalogs: Mutex<VecDeque<(String, String)>>,
    /// Serializes the consent GET so concurrent first calls share one fetch.
    pub consent_fetch: tokio::sync::Mutex<()>,
}

impl Account {
    /// An account whose state lives in this process.
    pub fn new(design: DesignClient, projects: Option<ProjectsExecutor>) -> Self {
        Self::with_store(design, projects, Arc::new(MemoryAccount::default()))
    }

    /// This account with its credential's `scopes`.
    pub fn with_scopes(self, scopes: Vec<String>) -> Self {
        Self { scopes, ..self }
    }

    pub fn with_store(
        design: DesignClient,
        projects: Option<ProjectsExecutor>,
        store: Arc<dyn AccountStore>,
    ) -> Self {
        Self {
            design,
            projects,
            scopes: Vec::new(),
            store,
            catalog: RwLock::new(None),
            served_catalogs: Mutex::new(VecDeque::new()),
            consent_fetch: tokio::sync::Mutex::new(()),
        }
    }

    /// The Design state as this process sees it (what decisions gather from).
    pub fn state(&self) -> &DesignState {
        self.store.view()
    }

    /// Records each event in order; stops at the first the store refuses.
    pub async fn record(
        &self,
        events: impl IntoIterator<Item = AccountEvent>,
    ) -> Result<(), StoreError> {
        for event in events {
            if event.changes_nothing(self.state()) {
                continue;
            }
            self.store.record(event).await?;
        }
        Ok(())
    }

    /// The discovered catalog, shared (calls compare it by identity: `Arc::ptr_eq`).
    pub fn catalog(&self) -> Option<Arc<Catalog>> {
        self.catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn catalog_discovered(&self, catalog: Catalog) {
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(catalog));
    }

    /// Whether `agent` was already served a catalog with `hash`; remembers it (64-entry LRU).
    pub fn catalog_served(&self, agent: &str, hash: &str) -> bool {
        let mut served = self
            .served_catalogs
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let seen = served.iter().position(|(known, _)| known == agent);
        let repeated = seen
            .and_then(|index| served.get(index))
            .is_some_and(|(_, known)| known == hash);
        if let Some(index) = seen {
            served.remove(index);
        }
        served.push_back((agent.to_string(), hash.to_string()));
        while served.len() > CATALOG_AGENTS {
            served.pop_front();
        }
        repeated
    }
}
