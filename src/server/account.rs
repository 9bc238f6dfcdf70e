//! server::account: the upstream account the gateway acts for — its Design and Projects
//! clients, consent and grant bookkeeping (per account) and plans (per session), with the
//! invalidation events that cross sessions.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use dashmap::DashMap;

use crate::call::Catalog;
use crate::executor::design::DesignClient;
use crate::executor::projects::ProjectsExecutor;
use crate::state::{ConsentCache, DesignStores, GrantStore, PlanStore};

/// How many agents' catalog hashes are remembered for `list` dedup (client-facts §1.2).
pub const CATALOG_AGENTS: usize = 64;

pub struct Account {
    pub design: DesignClient,
    pub projects: Option<ProjectsExecutor>,
    pub consent: ConsentCache,
    pub grants: GrantStore,
    sessions: DashMap<String, Arc<PlanStore>>,
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
            consent: ConsentCache::default(),
            grants: GrantStore::default(),
            sessions: DashMap::new(),
            catalog: RwLock::new(None),
            served_catalogs: Mutex::new(VecDeque::new()),
            consent_fetch: tokio::sync::Mutex::new(()),
        }
    }

    pub fn plans(&self, session_id: &str) -> Arc<PlanStore> {
        // A known session is only read: `entry` would take the shard's write lock every call.
        if let Some(plans) = self.sessions.get(session_id) {
            return Arc::clone(plans.value());
        }
        Arc::clone(
            self.sessions
                .entry(session_id.to_string())
                .or_default()
                .value(),
        )
    }

    pub fn stores<'a>(&'a self, plans: &'a PlanStore) -> DesignStores<'a> {
        DesignStores {
            consent: &self.consent,
            plans,
            grants: &self.grants,
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

    /// `update_sharing`, `add_member` or `update_member_role` succeeded (client-facts §3 xBt):
    /// every session's plans for the project, its verified grant, and a recard flag.
    pub fn membership_or_sharing_changed(&self, project_id: &str) {
        for session in &self.sessions {
            session.value().project_invalidated(project_id);
        }
        self.grants.recard_flagged(project_id);
    }

    /// The consent bit was seeded false or revoked (client-facts §4 OOe).
    pub fn consent_withdrawn(&self) {
        self.consent.consent_refused();
        for session in &self.sessions {
            session.value().all_cleared();
        }
        self.grants.all_verified_dropped();
        self.grants.recard_all();
    }

    /// The server demanded a grant (client-facts §5.6): drop the verified mark, reset consent.
    pub fn project_grant_demanded(&self, project_id: &str) {
        self.grants.verified_dropped(project_id);
        self.consent.reset();
    }
}
