//! store::account: the seam of the account's shared Design state — consent, grants and plans
//! per (principal, session). A store records [`AccountEvent`]s and plan registrations and keeps
//! a [`DesignState`] view that the pure decision core reads synchronously; `ready` is where a
//! replica may wait (a plan it has not seen, a lease to check) before a call gathers its facts.
//! The in-memory implementation is the state itself; it must not do I/O.

use async_trait::async_trait;

use super::{StoreError, StoreHealth};
use crate::state::{
    AccountEvent, ApprovedPlan, DesignState, PlanRefusal, PlanRegistration, SessionKey,
};

/// The account's Design state, wherever it lives.
#[async_trait]
pub trait AccountStore: Send + Sync {
    /// The state as this process sees it; decisions gather from it without waiting.
    fn view(&self) -> &DesignState;

    /// Makes the view fit to decide a call of `session` that names `plan_token`: the plan is
    /// loaded when the view does not hold it, and the view is current (else an error: the
    /// call is refused, never decided on a stale view).
    async fn ready(&self, session: &SessionKey, plan_token: Option<&str>)
        -> Result<(), StoreError>;

    /// Records an event; an event that tightens returns once every replica applies it.
    async fn record(&self, event: AccountEvent) -> Result<(), StoreError>;

    /// Registers a finalize_plan result under the rules and bounds of `state::plans`.
    async fn plan_registered(
        &self,
        registration: PlanRegistration,
    ) -> Result<Result<ApprovedPlan, PlanRefusal>, StoreError>;

    /// Whether calls that read shared state may be decided now, and why not.
    fn health(&self) -> StoreHealth;
}

/// The embedded default: the state in this process, changed in place.
#[derive(Debug, Default)]
pub struct MemoryAccount {
    state: DesignState,
}

impl MemoryAccount {
    pub fn new(state: DesignState) -> Self {
        Self { state }
    }
}

#[async_trait]
impl AccountStore for MemoryAccount {
    fn view(&self) -> &DesignState {
        &self.state
    }

    async fn ready(&self, _: &SessionKey, _: Option<&str>) -> Result<(), StoreError> {
        Ok(())
    }

    async fn record(&self, event: AccountEvent) -> Result<(), StoreError> {
        event.apply(&self.state);
        Ok(())
    }

    async fn plan_registered(
        &self,
        registration: PlanRegistration,
    ) -> Result<Result<ApprovedPlan, PlanRefusal>, StoreError> {
        Ok(registration.apply(&self.state))
    }

    fn health(&self) -> StoreHealth {
        memory_health()
    }
}

/// The health of the in-memory store: always ready.
pub fn memory_health() -> StoreHealth {
    StoreHealth {
        store: "memory".to_string(),
        ready: true,
        cause: None,
        replica: None,
    }
}
