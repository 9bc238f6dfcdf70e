//! server::policies: the policy sets the service decides with, as one [`Generation`] — the
//! live set, the hook-mode set, the shadow set and the approving set — built together off to
//! the side (`server::reload`) and swapped in one step (issue 39 §1). A call loads the
//! generation once, so its gates, its decision, its shadow comparison, a hook's answer and who
//! may approve it never come from two different reloads.

use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::authz::PolicySnapshot;

/// The sets of one load of the policy directories.
#[derive(Debug)]
pub struct Generation {
    /// What every front door decides on.
    pub live: Arc<PolicySnapshot>,
    /// Hook mode (`server::hook`): the live directories in hook mode.
    pub hook: Arc<PolicySnapshot>,
    /// Evaluated beside the live set on every call; never changes an outcome.
    pub shadow: Option<Arc<PolicySnapshot>>,
    /// Who may answer which approval (`server::approving::routing`).
    pub approving: Arc<PolicySnapshot>,
}

/// The generation in force.
#[derive(Debug)]
pub struct Policies(ArcSwap<Generation>);

impl Policies {
    pub fn new(generation: Generation) -> Self {
        Self(ArcSwap::from_pointee(generation))
    }

    /// The generation in force (load it once per call).
    pub fn current(&self) -> Arc<Generation> {
        self.0.load_full()
    }

    /// The live set in force.
    pub fn live(&self) -> Arc<PolicySnapshot> {
        self.0.load().live.clone()
    }

    /// A new generation, valid as a whole (the reload built every set first).
    pub fn swap(&self, generation: Generation) {
        self.0.store(Arc::new(generation));
    }
}
