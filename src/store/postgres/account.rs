//! store::postgres::account: the account's Design state in a fleet. Each replica decides on
//! its own view (an in-memory `DesignState`: decisions never wait on the store), and the
//! events that tighten it (consent revoked, membership changed, a plan finalize started, …)
//! are rows of `account_events` announced with `NOTIFY`. Recording one returns only once
//! every other replica with a live lease has applied it — a replica that cannot is not
//! deciding, since its lease is renewed only when its view is current. Events that loosen
//! (consent granted, a grant verified) stay in the replica that saw them: another replica
//! fetches consent from the upstream or asks for the card again (fail closed). Registered
//! plans are rows of `plans`: a replica that meets a plan token its view does not hold loads
//! it (under the catch-up's lock, so an invalidation is never overtaken), and the events that
//! clear plans delete their rows in the transaction that records them.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::fleet::{Fleet, ACCOUNT_CHANNEL};
use crate::state::{
    AccountEvent, ApprovedPlan, DesignState, PlanRefusal, PlanRegistration, PlansDropped,
    SessionKey,
};
use crate::store::rows::{self, AccountEventV1, PlanV1};
use crate::store::{AccountStore, MemoryAccount, StoreError, StoreHealth};

/// The most events one catch-up reads; it goes on until it is current.
const CATCH_UP_BATCH: i64 = 1_000;

/// The most plans the store keeps (live ones; expired ones are swept).
const MAX_PLANS: i64 = 100_000;

/// How often the view catches up without a wake-up (the fallback of `LISTEN`).
const CATCH_UP_EVERY: Duration = Duration::from_secs(1);

pub struct PgAccount {
    fleet: Arc<Fleet>,
    memory: MemoryAccount,
    /// One catch-up at a time.
    catching_up: tokio::sync::Mutex<()>,
}

impl PgAccount {
    /// The account of a replica that just joined: its fresh view has nothing to invalidate,
    /// so it starts current at the store's latest event.
    pub async fn joined(fleet: Arc<Fleet>) -> Result<Arc<Self>, StoreError> {
        let client = fleet.client().await?;
        let latest: i64 = fleet
            .timed(client.query_one("SELECT coalesce(max(seq), 0) FROM account_events", &[]))
            .await?
            .get(0);
        drop(client);
        fleet.applied_up_to(latest).await?;
        let account = Arc::new(Self {
            fleet,
            memory: MemoryAccount::default(),
            catching_up: tokio::sync::Mutex::new(()),
        });
        let following = Arc::clone(&account);
        tokio::spawn(async move { following.follow().await });
        Ok(account)
    }

    /// Catches up on every wake-up and every [`CATCH_UP_EVERY`].
    async fn follow(&self) {
        loop {
            let _ =
                tokio::time::timeout(CATCH_UP_EVERY, self.fleet.account_changed.notified()).await;
            if let Err(error) = self.catch_up().await {
                tracing::warn!(%error, "the account view did not catch up");
            }
        }
    }

    /// Applies the events other replicas recorded since the last one applied.
    pub async fn catch_up(&self) -> Result<(), StoreError> {
        let _one = self.catching_up.lock().await;
        self.trimmed_past().await?;
        loop {
            let after = self.fleet.applied.load(Ordering::SeqCst);
            let client = self.fleet.client().await?;
            let rows = self
                .fleet
                .timed(client.query(
                    "SELECT seq, replica, event FROM account_events WHERE seq > $1 \
                     ORDER BY seq LIMIT $2",
                    &[&after, &CATCH_UP_BATCH],
                ))
                .await?;
            drop(client);
            let Some(last) = rows.last().map(|row| row.get::<_, i64>("seq")) else {
                return Ok(());
            };
            for row in &rows {
                let replica: String = row.get("replica");
                if replica == self.fleet.replica() {
                    continue; // applied when it was recorded
                }
                let event: serde_json::Value = row.get("event");
                match rows::decode::<AccountEventV1, AccountEvent>(event) {
                    Ok(event) => event.apply(self.memory.view()),
                    Err(error) => {
                        // An event this binary does not know: it cannot be sure its view is
                        // right, so it stops deciding (its lease lapses) until upgraded.
                        return Err(self.fleet.unavailable(format!(
                            "account event {} does not read ({error})",
                            row.get::<_, i64>("seq")
                        )));
                    }
                }
            }
            self.fleet.applied_up_to(last).await?;
            if rows.len() < usize::try_from(CATCH_UP_BATCH).unwrap_or(usize::MAX) {
                return Ok(());
            }
        }
    }
}

impl PgAccount {
    /// Keeps `plan` of `session` in the store, under [`MAX_PLANS`].
    async fn plan_shared(
        &self,
        session: &SessionKey,
        plan: &ApprovedPlan,
    ) -> Result<(), StoreError> {
        let stored = rows::encode::<_, PlanV1>(plan).map_err(|error| StoreError::Refused {
            store: self.fleet.store.clone(),
            cause: format!("the plan could not be stored ({error})"),
        })?;
        let client = self.fleet.client().await?;
        let kept = self
            .fleet
            .timed(client.execute(
                "INSERT INTO plans (principal, session_id, token, project_id, plan, expires_at) \
                 SELECT $1, $2, $3, $4, $5, $6 WHERE (SELECT count(*) FROM plans) < $7 \
                 ON CONFLICT (principal, session_id, token) DO UPDATE \
                 SET plan = EXCLUDED.plan, expires_at = EXCLUDED.expires_at",
                &[
                    &session.principal,
                    &session.id,
                    &plan.token,
                    &plan.project_id,
                    &stored,
                    &plan.expires_at,
                    &MAX_PLANS,
                ],
            ))
            .await?;
        if kept == 0 {
            return Err(StoreError::Refused {
                store: self.fleet.store.clone(),
                cause: format!("the store already keeps {MAX_PLANS} plans"),
            });
        }
        Ok(())
    }

    /// When events this view has not applied were already trimmed (a replica away for longer
    /// than the events are kept), the view cannot know what they cleared: it is cleared as a
    /// consent revoke would clear it (fail closed: consent, plans and grants are asked again).
    async fn trimmed_past(&self) -> Result<(), StoreError> {
        let after = self.fleet.applied.load(Ordering::SeqCst);
        let client = self.fleet.client().await?;
        let oldest: Option<i64> = self
            .fleet
            .timed(client.query_one("SELECT min(seq) FROM account_events", &[]))
            .await?
            .get(0);
        if oldest.is_some_and(|oldest| oldest > after.saturating_add(1)) && after > 0 {
            tracing::warn!(
                after,
                ?oldest,
                "account events were trimmed before this replica applied them: its view is cleared"
            );
            AccountEvent::ConsentRevoked.apply(self.memory.view());
        }
        Ok(())
    }
}

#[async_trait]
impl AccountStore for PgAccount {
    fn view(&self) -> &DesignState {
        self.memory.view()
    }

    /// Fit to decide while the replica's lease is live and its listener connected (a check of
    /// this process's own state: no round trip to the store).
    async fn ready(
        &self,
        session: &SessionKey,
        plan_token: Option<&str>,
    ) -> Result<(), StoreError> {
        self.fleet.fit()?;
        let Some(token) = plan_token else {
            return Ok(());
        };
        if self.memory.view().sessions.plan(session, token).is_some() {
            return Ok(());
        }
        // Under the catch-up's lock: an event that clears this plan is applied either before
        // the read (the row is gone) or after the plan is in the view (it clears it).
        let _one = self.catching_up.lock().await;
        let client = self.fleet.client().await?;
        let row = self
            .fleet
            .timed(client.query_opt(
                "SELECT plan FROM plans WHERE principal = $1 AND session_id = $2 AND token = $3 \
                 AND expires_at > now()",
                &[&session.principal, &session.id, &token],
            ))
            .await?;
        if let Some(row) = row {
            let stored: serde_json::Value = row.get(0);
            match rows::decode::<PlanV1, ApprovedPlan>(stored) {
                Ok(plan) => self.memory.view().sessions.restore(session, plan),
                Err(error) => tracing::warn!(%error, "a stored plan does not read"),
            }
        }
        Ok(())
    }

    async fn record(&self, event: AccountEvent) -> Result<(), StoreError> {
        self.memory.record(event.clone()).await?;
        if !event.tightens() {
            return Ok(());
        }
        let stored =
            rows::encode::<_, AccountEventV1>(&event).map_err(|error| StoreError::Refused {
                store: self.fleet.store.clone(),
                cause: format!("the account event could not be stored ({error})"),
            })?;
        let fleet = &self.fleet;
        let mut client = fleet.client().await?;
        let transaction = fleet.timed(client.transaction()).await?;
        match event.plans_dropped() {
            PlansDropped::None => 0,
            PlansDropped::All => {
                fleet
                    .timed(transaction.execute("DELETE FROM plans", &[]))
                    .await?
            }
            PlansDropped::Project(project) => {
                fleet
                    .timed(
                        transaction.execute("DELETE FROM plans WHERE project_id = $1", &[&project]),
                    )
                    .await?
            }
            PlansDropped::SessionProject(session, project) => {
                fleet
                    .timed(transaction.execute(
                        "DELETE FROM plans WHERE principal = $1 AND session_id = $2 \
                         AND project_id = $3",
                        &[&session.principal, &session.id, &project],
                    ))
                    .await?
            }
        };
        let sql = format!(
            "WITH recorded AS (INSERT INTO account_events (replica, event) VALUES ($1, $2) \
             RETURNING seq) SELECT seq, pg_notify('{ACCOUNT_CHANNEL}', seq::text) FROM recorded"
        );
        let seq: i64 = fleet
            .timed(transaction.query_one(&sql, &[&fleet.replica(), &stored]))
            .await?
            .get(0);
        fleet.timed(transaction.commit()).await?;
        drop(client);
        fleet.applied_everywhere(seq).await
    }

    async fn plan_registered(
        &self,
        registration: PlanRegistration,
    ) -> Result<Result<ApprovedPlan, PlanRefusal>, StoreError> {
        let session = registration.session.clone();
        let registered = self.memory.plan_registered(registration).await?;
        if let Ok(plan) = &registered {
            if let Err(error) = self.plan_shared(&session, plan).await {
                // The plan covers this replica's calls; another replica asks (fail closed).
                tracing::warn!(%error, "a registered plan was not shared with the fleet");
            }
        }
        Ok(registered)
    }

    fn health(&self) -> StoreHealth {
        self.fleet.health()
    }
}
