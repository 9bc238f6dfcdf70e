//! Session state the decisions depend on: the consent cache, approved plans and durable grants.
//! It owns the stores and the events that change several of them at once; it must not decide,
//! read the clock or talk to the network.
//!
//! | module     | concept                                                  | facts      |
//! |------------|----------------------------------------------------------|------------|
//! | `consent`  | the `agent_design_projects` bit and its generation       | §4         |
//! | `plans`    | finalize_plan approvals: registration, expiry, clearing  | §3         |
//! | `session_key` | whose session: (principal, session id)                | SPEC §11   |
//! | `sessions` | plans per session, the session bound, idle eviction      | §3         |
//! | `grants`   | verified, ineligible and recard-flagged projects         | §5.1, §5.6 |
//! | `followups`| the state events an outcome or an approval implies       | §3–§5, §8  |
//! | `events`   | those events as data, applied by the methods below       | SPEC §12   |
//! | `usage`    | each principal's recent calls, for limits set by policy  | issue 36   |
//!
//! Every store is `Send + Sync` and used through `&self`; methods are named for what happened.

pub mod consent;
pub mod events;
pub mod followups;
pub mod grants;
pub mod plans;
pub mod rate;
pub mod session_key;
pub mod sessions;
pub mod usage;

pub use consent::{ConsentCache, ConsentState, FetchTicket};
pub use events::{AccountEvent, PlanRegistration, PlansDropped};
pub use grants::GrantStore;
pub use plans::{ApprovedPlan, PlanApproval, PlanRefusal, PlanStore};
pub use session_key::SessionKey;
pub use sessions::SessionPlans;

/// The Design operations whose success invalidates a project's plans and grant (§3 `xBt`).
/// `remove_member` is deliberately absent: the reference client does not invalidate on it.
pub const MEMBERSHIP_OR_SHARING_OPERATIONS: [&str; 3] =
    ["update_sharing", "add_member", "update_member_role"];

/// All Design state of one upstream account: consent and grants per account, plans per
/// session. Events that touch more than one store live here so that callers cannot forget one
/// of the stores; the service and the scenario runner both change state only through them.
#[derive(Debug, Default)]
pub struct DesignState {
    pub consent: ConsentCache,
    pub sessions: SessionPlans,
    pub grants: GrantStore,
}

/// Borrowed access to what one decision of one session reads.
#[derive(Debug, Clone, Copy)]
pub struct DesignStores<'a> {
    pub consent: &'a ConsentCache,
    pub sessions: &'a SessionPlans,
    pub session: &'a SessionKey,
    pub grants: &'a GrantStore,
}

impl DesignStores<'_> {
    /// The plan registered under `token` in this session.
    pub fn plan(&self, token: &str) -> Option<ApprovedPlan> {
        self.sessions.plan(self.session, token)
    }
}

impl DesignState {
    /// The stores as a decision of `session` sees them.
    pub fn stores<'a>(&'a self, session: &'a SessionKey) -> DesignStores<'a> {
        DesignStores {
            consent: &self.consent,
            sessions: &self.sessions,
            session,
            grants: &self.grants,
        }
    }

    /// The user granted consent: `POST /v1/design/consent` succeeded (§4).
    pub fn consent_granted(&self) {
        self.consent.consent_recorded();
    }

    /// finalize_plan is about to run in `session` (§3 `IBt`).
    pub fn plan_finalize_started(&self, session: &SessionKey, project_id: &str) {
        self.sessions.finalize_started(session, project_id);
    }

    /// finalize_plan succeeded after an approval in `session` (§3 `g0f`).
    pub fn plan_registered(
        &self,
        session: &SessionKey,
        approval: PlanApproval<'_>,
        now: time::OffsetDateTime,
    ) -> Result<ApprovedPlan, PlanRefusal> {
        self.sessions.finalize_approved(session, approval, now)
    }

    /// Plans that expired by `now` go, and every session left without a live plan.
    pub fn plans_expired(&self, now: time::OffsetDateTime) -> usize {
        self.sessions.expired_removed(now)
    }

    /// `POST /v1/design/grants` succeeded after the user approved the card (§5.1).
    pub fn grant_verified(&self, project_id: &str) {
        self.grants.grant_recorded(project_id);
    }

    /// `POST /v1/design/grants` returned 404 (§5.1 `m0f`).
    pub fn grant_not_eligible(&self, project_id: &str) {
        self.grants.grant_refused_not_found(project_id);
    }

    /// A tokenless write went through: the server holds the grant (§8 6e). False when the
    /// project needs its card again, which a server answer cannot replace.
    pub fn server_grant_observed(&self, project_id: &str) -> bool {
        self.grants.server_grant_observed(project_id)
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
    /// state.grant_verified("p1");
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
        self.sessions.project_invalidated(project_id);
        // Flagging drops the verified mark in the same step (see `GrantStore::recard_flagged`).
        self.grants.recard_flagged(project_id);
    }

    /// The consent bit was seeded false (§4 `OOe`): consent is Refused, every plan and every
    /// verified grant goes, and every project needs its card again. The DesignSync plan store
    /// that `OOe` also clears is not part of this state.
    pub fn consent_seeded_refused(&self) {
        // Consent first: from here on every gated call asks, whatever the other stores say.
        self.consent.consent_refused();
        self.sessions.all_cleared();
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
mod test_support;
#[cfg(test)]
mod tests;
