//! Owns the fake claude.ai Projects surface: [`ProjectsSandbox`], its routes (client-facts
//! §10.2), seed state and scripted faults; it must not authenticate callers (the sandbox core
//! wraps the router with auth) or know about decisions.
//!
//! Map of the module:
//! - `seed`: the "Handbook" project of the common contract;
//! - `store` (private): the state and its operations;
//! - `routes` (private): the axum handlers of the org routes and the CCR session route.

mod routes;
pub mod seed;
mod store;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

use store::{ProjectStore, StoreError};

/// Largest request body the sandbox accepts: above the 25 MiB `local_path` limit plus JSON.
const BODY_LIMIT_BYTES: usize = 64 * 1024 * 1024;

/// A scripted fault for the next matching Projects requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectsFault {
    /// 403 on the next kb search (either route).
    SearchForbidden,
    /// The next raw download's `content_base64` decodes to one byte fewer than reported.
    RawSizeMismatch,
}

/// Fault counters, one per kind.
#[derive(Debug, Default)]
struct FaultCounts {
    search_forbidden: u32,
    raw_size_mismatch: u32,
}

impl FaultCounts {
    fn slot(&mut self, fault: ProjectsFault) -> &mut u32 {
        match fault {
            ProjectsFault::SearchForbidden => &mut self.search_forbidden,
            ProjectsFault::RawSizeMismatch => &mut self.raw_size_mismatch,
        }
    }
}

/// State shared by the handlers.
struct Shared {
    store: Mutex<ProjectStore>,
    faults: Mutex<FaultCounts>,
    requests: AtomicU64,
}

impl Shared {
    fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Runs `operation` on the store; the lock is never held across an await.
    fn with_store<T>(&self, operation: impl FnOnce(&mut ProjectStore) -> T) -> T {
        let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        operation(&mut store)
    }

    /// Counts the request, then runs `operation` if `org` and `project` name the project (404
    /// otherwise).
    fn with_project<T>(
        &self,
        org: &str,
        project: &str,
        operation: impl FnOnce(&mut ProjectStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.count_request();
        self.with_store(|store| {
            store.check_project(org, project)?;
            operation(store)
        })
    }

    /// Consumes one pending `fault`, if any.
    fn take_fault(&self, fault: ProjectsFault) -> bool {
        let mut faults = self.faults.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = faults.slot(fault);
        if *slot == 0 {
            return false;
        }
        *slot -= 1;
        true
    }
}

/// The Projects half of the sandbox upstream; clones share one state.
#[derive(Clone)]
pub struct ProjectsSandbox {
    shared: Arc<Shared>,
}

impl ProjectsSandbox {
    /// A sandbox holding the seed state of the common contract.
    pub fn seeded() -> Self {
        ProjectsSandbox {
            shared: Arc::new(Shared {
                store: Mutex::new(seed::seed_store()),
                faults: Mutex::new(FaultCounts::default()),
                requests: AtomicU64::new(0),
            }),
        }
    }

    /// The org routes and the CCR session route, without authentication.
    pub fn router(&self) -> Router {
        let org = "/api/organizations/{org}/projects/{project}";
        Router::new()
            .route(&format!("{org}/detail"), get(routes::detail))
            .route(&format!("{org}/docs"), post(routes::create_doc))
            .route(
                &format!("{org}/docs/{{doc_uuid}}"),
                get(routes::read_doc)
                    .patch(routes::update_doc)
                    .delete(routes::delete_doc),
            )
            .route(
                &format!("{org}/files/{{file_uuid}}/extracted"),
                get(routes::extracted),
            )
            .route(&format!("{org}/files/{{file_uuid}}/raw"), get(routes::raw))
            .route(&format!("{org}/kb/search"), get(routes::search))
            .route(
                "/v2/ccr-sessions/-/chat-project",
                post(routes::chat_project),
            )
            .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
            .with_state(Arc::clone(&self.shared))
    }

    /// Scripts `fault` for the next `count` matching requests (adds to any pending count).
    pub fn inject(&self, fault: ProjectsFault, count: u32) {
        let mut faults = self
            .shared
            .faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let slot = faults.slot(fault);
        *slot = slot.saturating_add(count);
    }

    pub fn clear_faults(&self) {
        let mut faults = self
            .shared
            .faults
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *faults = FaultCounts::default();
    }

    /// Restores the seed state, clears the faults and zeroes the request count.
    pub fn reset(&self) {
        self.shared.with_store(|store| *store = seed::seed_store());
        self.clear_faults();
        self.shared.requests.store(0, Ordering::Relaxed);
    }

    /// How many Projects requests reached the sandbox (the `projects_requests` stat).
    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// The project's current knowledge size in tokens.
    pub fn knowledge_size(&self) -> i64 {
        self.shared.with_store(|store| store.knowledge_size)
    }
}
