//! state::events: the account's state events as data — what happened to consent, grants and
//! plans, one variant per event method of [`DesignState`]. An event is applied to a state by
//! exactly those methods, so the in-memory store, a replica's cache and the PostgreSQL
//! store's writer all change state through one implementation. It must not talk to a store
//! or the network; it only says what changed and applies it.

use time::OffsetDateTime;

use super::{ApprovedPlan, DesignState, PlanApproval, PlanRefusal, SessionKey};

/// One change of the account's Design state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountEvent {
    /// `POST /v1/design/consent` succeeded (§4).
    ConsentGranted,
    /// A consent GET that started at `generation` answered `granted`; applied only if no
    /// other consent event came in between (the fetch ticket's rule).
    ConsentFetched { generation: u64, granted: bool },
    /// A 403 `needs_consent` seeded the bit false (§4 `OOe`).
    ConsentSeededRefused,
    /// The user revoked consent.
    ConsentRevoked,
    /// The server answered `needs_project_grant` (§5.6).
    ProjectGrantDemanded { project_id: String },
    /// Sharing or membership changed on the project (§3 `xBt`, §5.6).
    MembershipOrSharingChanged { project_id: String },
    /// `POST /v1/design/grants` succeeded after the card was approved (§5.1).
    GrantVerified { project_id: String },
    /// `POST /v1/design/grants` returned 404 (§5.1 `m0f`).
    GrantNotEligible { project_id: String },
    /// A tokenless write went through: the server holds the grant (§8 6e).
    ServerGrantObserved { project_id: String },
    /// finalize_plan is about to run in `session`: its plans for the project go (§3 `IBt`).
    PlanFinalizeStarted {
        session: SessionKey,
        project_id: String,
    },
}

/// Which cached plans an event removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlansDropped<'a> {
    None,
    /// Every session's plans for the project (by key).
    Project(&'a str),
    /// One session's plans for the project (by key).
    SessionProject(&'a SessionKey, &'a str),
    All,
}

impl AccountEvent {
    /// Applies the event through the [`DesignState`] method named for it.
    pub fn apply(&self, state: &DesignState) {
        match self {
            Self::ConsentGranted => state.consent_granted(),
            Self::ConsentFetched {
                generation,
                granted,
            } => {
                state.consent.fetched_at(*generation, *granted);
            }
            Self::ConsentSeededRefused => state.consent_seeded_refused(),
            Self::ConsentRevoked => state.consent_revoked(),
            Self::ProjectGrantDemanded { project_id } => state.project_grant_demanded(project_id),
            Self::MembershipOrSharingChanged { project_id } => {
                state.membership_or_sharing_changed(project_id)
            }
            Self::GrantVerified { project_id } => state.grant_verified(project_id),
            Self::GrantNotEligible { project_id } => state.grant_not_eligible(project_id),
            Self::ServerGrantObserved { project_id } => {
                state.server_grant_observed(project_id);
            }
            Self::PlanFinalizeStarted {
                session,
                project_id,
            } => state.plan_finalize_started(session, project_id),
        }
    }

    /// Whether a replica deciding on a cache without this event could allow what the state
    /// after it refuses or asks: such an event returns only once every live replica applied it.
    pub fn tightens(&self) -> bool {
        !matches!(
            self,
            Self::ConsentGranted
                | Self::ConsentFetched { .. }
                | Self::GrantVerified { .. }
                | Self::GrantNotEligible { .. }
                | Self::ServerGrantObserved { .. }
        )
    }

    /// Whether applying it to `state` would change nothing, so a store need not record it
    /// (a tokenless write under a grant already verified).
    pub fn changes_nothing(&self, state: &DesignState) -> bool {
        match self {
            Self::ServerGrantObserved { project_id } => {
                state.grants.is_verified(project_id) && !state.grants.needs_recard(project_id)
            }
            _ => false,
        }
    }

    /// The cached plans the event removes (a replica applies the same to its plan cache).
    pub fn plans_dropped(&self) -> PlansDropped<'_> {
        match self {
            Self::ConsentSeededRefused | Self::ConsentRevoked => PlansDropped::All,
            Self::MembershipOrSharingChanged { project_id } => PlansDropped::Project(project_id),
            Self::PlanFinalizeStarted {
                session,
                project_id,
            } => PlansDropped::SessionProject(session, project_id),
            _ => PlansDropped::None,
        }
    }
}

/// A finalize_plan result to register, owned so that it can travel to a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRegistration {
    pub session: SessionKey,
    pub token: String,
    pub project_id: String,
    pub scope: Option<String>,
    pub writes: Vec<String>,
    pub deletes: Vec<String>,
    pub server_expiry: Option<OffsetDateTime>,
    pub prompt_reaches_user: bool,
    pub main_agent_without_hook: bool,
    pub now: OffsetDateTime,
}

impl PlanRegistration {
    /// The registration as the rules of §3 `g0f` read it (the ask was shown: it was approved).
    pub fn approval(&self) -> PlanApproval<'_> {
        PlanApproval {
            token: &self.token,
            project_id: &self.project_id,
            scope: self.scope.as_deref(),
            writes: &self.writes,
            deletes: &self.deletes,
            server_expiry: self.server_expiry,
            ask_was_shown: true,
            prompt_reaches_user: self.prompt_reaches_user,
            main_agent_without_hook: self.main_agent_without_hook,
            result_is_error: false,
        }
    }

    /// Registers it in `state` (the in-memory store).
    pub fn apply(&self, state: &DesignState) -> Result<ApprovedPlan, PlanRefusal> {
        state.plan_registered(&self.session, self.approval(), self.now)
    }
}
