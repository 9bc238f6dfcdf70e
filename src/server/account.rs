//! server::account: the upstream account the gateway acts for — its Design and Projects
//! clients, its Design state (`state::DesignState`: consent and grants per account, plans per
//! session, and every event that changes them) and the catalog it discovered.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError, RwLock};

use crate::call::Catalog;
use crate::executor::design::DesignClient;
use crate::executor::projects::ProjectsExecutor;
use crate::state::DesignState;

/// How many agents' catalog hashes are remembered for `list` dedup (client-facts §1.2).
pub const CATALOG_AGENTS: usize = 64;

pub struct Account {
    pub design: DesignClient,
    pub projects: Option<ProjectsExecutor>,
    /// Changed only through its event methods (and the follow-ups that call them).
    pub state: DesignState,
    catalog: RwLock<Option<Catalog>>,
    served_catalogs: Mutex<VecDeque<(String, String)>>,
    /// Serializes the consent GET so concurrent first calls share one fetch.
    pub consent_fetch: tokio::sync::Mutex<()>,
}

impl Account {
    pub fn new(design: DesignClient, projects: Option<ProjectsExecutor>) -> Self {
        Self {
            design,
            projects,
            state: DesignState::default(),
            catalog: RwLock::new(None),
            served_catalogs: Mutex::new(VecDeque::new()),
            consent_fetch: tokio::sync::Mutex::new(()),
        }
    }

    pub fn catalog(&self) -> Option<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn catalog_discovered(&self, catalog: Catalog) {
        *self.catalog.write().unwrap_or_else(PoisonError::into_inner) = Some(catalog);
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
