//! store::postgres::account: the account's Design state in a fleet. Each replica decides on
//! its own view (an in-memory `DesignState`: decisions never wait on the store), and the
//! events that tighten it (consent revoked, membership changed, a plan finalize started, …)
//! are rows of `account_events` announced with `NOTIFY`. Recording one returns only once
//! every other replica with a live lease has applied it — a replica that cannot is not
//! deciding, since its lease is renewed only when its view is current. Events that loosen
//! (consent granted, a grant verified) and plans stay in the replica that saw them: another
//! replica asks again, or fetches consent from the upstream (fail closed).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::fleet::{Fleet, ACCOUNT_CHANNEL};
use crate::state::{
    AccountEvent, ApprovedPlan, DesignState, PlanRefusal, PlanRegistration, SessionKey,
};
use crate::store::{AccountStore, MemoryAccount, StoreError, StoreHealth};

/// The most events one catch-up reads; it goes on until it is current.
const CATCH_UP_BATCH: i64 = 1_000;

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
                match serde_json::from_value::<AccountEvent>(event) {
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
    async fn ready(&self, _: &SessionKey, _: Option<&str>) -> Result<(), StoreError> {
        self.fleet.fit()
    }

    async fn record(&self, event: AccountEvent) -> Result<(), StoreError> {
        self.memory.record(event.clone()).await?;
        if !event.tightens() {
            return Ok(());
        }
        let stored = serde_json::to_value(&event).map_err(|error| StoreError::Refused {
            store: self.fleet.store.clone(),
            cause: format!("the account event could not be stored ({error})"),
        })?;
        let client = self.fleet.client().await?;
        let sql = format!(
            "WITH recorded AS (INSERT INTO account_events (replica, event) VALUES ($1, $2) \
             RETURNING seq) SELECT seq, pg_notify('{ACCOUNT_CHANNEL}', seq::text) FROM recorded"
        );
        let seq: i64 = self
            .fleet
            .timed(client.query_one(&sql, &[&self.fleet.replica(), &stored]))
            .await?
            .get(0);
        drop(client);
        self.fleet.applied_everywhere(seq).await
    }

    async fn plan_registered(
        &self,
        registration: PlanRegistration,
    ) -> Result<Result<ApprovedPlan, PlanRefusal>, StoreError> {
        self.memory.plan_registered(registration).await
    }

    fn health(&self) -> StoreHealth {
        self.fleet.health()
    }
}
