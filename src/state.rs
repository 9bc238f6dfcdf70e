//! Session state the decisions depend on: the consent cache, approved plans and durable grants.
//! It owns the stores and the events that change several of them at once; it must not decide,
//! read the clock or talk to the network.
//!
//! | module     | concept                                                  | facts      |
//! |------------|----------------------------------------------------------|------------|
//! | `consent`  | the `agent_design_projects` bit and its generation       | §4         |
//! | `plans`    | finalize_plan approvals: registration, expiry, clearing  | §3         |
//! | `grants`   | verified, ineligible and recard-flagged projects         | §5.1, §5.6 |
//!
//! Every store is `Send + Sync` and used through `&self`; methods are named for what happened.

pub mod consent;
pub mod grants;
pub mod plans;

pub use consent::{ConsentCache, ConsentState, FetchTicket};
pub use grants::GrantStore;
pub use plans::{ApprovedPlan, PlanApproval, PlanRefusal, PlanStore};

/// The Design operations whose success invalidates a project's plans and grant (§3 `xBt`).
/// `remove_member` is deliberately absent: the reference client does not invalidate on it.
pub const MEMBERSHIP_OR_SHARING_OPERATIONS: [&str; 3] =
    ["update_sharing", "add_member", "update_member_role"];

/// All Design state of one process. Events that touch more than one store live here so that
/// callers cannot forget one of the stores.
#[derive(Debug, Default)]
pub struct DesignState {
    pub consent: ConsentCache,
    pub plans: PlanStore,
    pub grants: GrantStore,
}

/// Borrowed access to the three stores a decision reads, wherever they live (the service
/// keeps consent and grants per account and plans per session).
#[derive(Debug, Clone, Copy)]
pub struct DesignStores<'a> {
    pub consent: &'a ConsentCache,
    pub plans: &'a PlanStore,
    pub grants: &'a GrantStore,
}

impl DesignState {
    pub fn stores(&self) -> DesignStores<'_> {
        DesignStores {
            consent: &self.consent,
            plans: &self.plans,
            grants: &self.grants,
        }
    }

    /// `update_sharing`, `add_member` or `update_member_role` succeeded on `project_id` (§3 `xBt`,
    /// §5.6): its plans are cleared, its verified grant dropped, and it is flagged for recard.
    /// `remove_member` is not such an event (see [`MEMBERSHIP_OR_SHARING_OPERATIONS`]); callers
    /// do not call this for it.
    ///
    /// ```
    /// use askgate::state::{DesignState, MEMBERSHIP_OR_SHARING_OPERATIONS};
    ///
    /// let state = DesignState::default();
    /// state.grants.grant_recorded("p1");
    /// for operation in ["remove_member", "add_member"] {
    ///     if MEMBERSHIP_OR_SHARING_OPERATIONS.contains(&operation) {
    ///         state.membership_or_sharing_changed("p1");
    ///     }
    ///     let invalidated = operation != "remove_member";
    ///     assert_eq!(state.grants.is_verified("p1"), !invalidated);
    ///     assert_eq!(state.grants.needs_recard("p1"), invalidated);
    /// }
    /// ```
    pub fn membership_or_sharing_changed(&self, project_id: &str) {
        self.plans.project_invalidated(project_id);
        // Flagging drops the verified mark in the same step (see `GrantStore::recard_flagged`).
        self.grants.recard_flagged(project_id);
    }

    /// The consent bit was seeded false (§4 `OOe`): consent is Refused, every plan and every
    /// verified grant goes, and every project needs its card again. The DesignSync plan store
    /// that `OOe` also clears is not part of this state.
    pub fn consent_seeded_refused(&self) {
        // Consent first: from here on every gated call asks, whatever the other stores say.
        self.consent.consent_refused();
        self.plans.all_cleared();
        self.grants.recard_all();
    }

    /// The server answered `needs_project_grant` for `project_id` (§5.6): its verified grant is
    /// dropped and the consent cache reset (`S0f`). Plans and recard flags are untouched.
    pub fn project_grant_demanded(&self, project_id: &str) {
        self.grants.verified_dropped(project_id);
        self.consent.reset();
    }

    /// The user revoked consent (`DELETE /v1/design/consent` succeeded). Treated exactly like
    /// consent seeded false: the reference sets the cached bit to false on success, and seeding
    /// false is the one path that does so with its invalidations. Keeping plans or grants past a
    /// revoke would let writes run without the consent the user just withdrew.
    pub fn consent_revoked(&self) {
        self.consent_seeded_refused();
    }
}

#[cfg(test)]
mod tests;
