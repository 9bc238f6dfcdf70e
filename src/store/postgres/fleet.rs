//! store::postgres::fleet: one replica's place in the fleet — its connection pool, its lease
//! (a heartbeat row in `replicas`: while it is live, the approvals this replica runs or holds
//! open are its own; once it lapses another replica's sweeper ends them), its listener (one
//! dedicated connection: `LISTEN` survives no pooler and no reconnect, so after each
//! (re)`LISTEN` every waiter looks at its row again), and who waits for which approval. It
//! decides nothing and owns no state rows.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use futures_util::StreamExt;
use tokio::sync::{mpsc, Notify};
use tokio_postgres::{AsyncMessage, NoTls};
use tokio_util::sync::CancellationToken;

use super::{redacted, FleetOptions, OpenError};
use crate::store::{StoreError, StoreHealth};

/// The channel the account's tightening events are announced on (payload: their seq).
pub const ACCOUNT_CHANNEL: &str = "askgate_account";
/// The channel an approval's every change is announced on (payload: its id).
pub const APPROVALS_CHANNEL: &str = "askgate_approvals";

/// The most notifications queued between the listener's connection and its reader; past it
/// the reader catches up from the rows instead (nothing is lost: the rows are the truth).
const NOTIFICATION_QUEUE: usize = 1024;

/// The most pooled connections a replica opens.
const POOL_SIZE: usize = 16;

#[derive(Debug, Default)]
struct Lease {
    /// Until when this replica may decide on its view (its last good heartbeat, less a margin).
    valid_until: Option<Instant>,
    listening: bool,
    cause: Option<String>,
}

pub struct Fleet {
    pool: Pool,
    /// This process's token in `replicas.instance`: only the process holding a replica id's
    /// lease renews it (P8).
    instance: String,
    config: tokio_postgres::Config,
    /// The store as logs and errors name it (never its password).
    pub store: String,
    pub options: FleetOptions,
    lease: Mutex<Lease>,
    waiters: Mutex<HashMap<String, (Arc<Notify>, usize)>>,
    stop: CancellationToken,
    /// The last account event this replica's view has applied.
    pub applied: AtomicI64,
    /// Wakes the account's catch-up (a notification, a reconnect, a beat behind the store).
    pub account_changed: Notify,
    /// The fleet's keys for sealing MCP `requestState`, newest first (at most two: the current
    /// and the one before it, so a state sealed just before a rotation still opens).
    link_keys: arc_swap::ArcSwap<Vec<Vec<u8>>>,
}

/// How often the fleet's `requestState` key is replaced (by the store's clock).
pub const LINK_KEY_ROTATION: Duration = Duration::from_secs(24 * 60 * 60);

/// One wait on an approval's changes; the entry goes with its last watcher.
pub struct Watch<'a> {
    fleet: &'a Fleet,
    id: String,
    pub changed: Arc<Notify>,
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        let mut waiters = self.fleet.waiters_locked();
        if let Some((_, count)) = waiters.get_mut(&self.id) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                waiters.remove(&self.id);
            }
        }
    }
}

impl Fleet {
    pub fn connect(url: &str, options: FleetOptions) -> Result<Self, OpenError> {
        let store = redacted(url);
        let mut config: tokio_postgres::Config = url.parse().map_err(|error| {
            OpenError::Url(format!("{store} is not a PostgreSQL URL ({error})"))
        })?;
        config.connect_timeout(options.operation_timeout);
        config.application_name(format!("askgate {}", options.replica));
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.operation_timeout))
            .create_timeout(Some(options.operation_timeout))
            .recycle_timeout(Some(options.operation_timeout))
            .build()
            .map_err(|error| OpenError::Url(format!("{store}: {error}")))?;
        Ok(Self {
            pool,
            instance: uuid::Uuid::new_v4().simple().to_string(),
            config,
            store,
            options,
            lease: Mutex::default(),
            waiters: Mutex::default(),
            stop: CancellationToken::new(),
            applied: AtomicI64::new(0),
            account_changed: Notify::new(),
            link_keys: arc_swap::ArcSwap::from_pointee(Vec::new()),
        })
    }

    pub fn replica(&self) -> &str {
        &self.options.replica
    }

    /// A store error naming the store and `cause`.
    pub fn unavailable(&self, cause: impl std::fmt::Display) -> StoreError {
        StoreError::Unavailable {
            store: self.store.clone(),
            cause: cause.to_string(),
        }
    }

    /// A pooled connection, within the operation timeout.
    pub async fn client(&self) -> Result<Object, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|error| self.unavailable(error))
    }

    /// `operation` within the operation timeout, its error named.
    pub async fn timed<T>(
        &self,
        operation: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.options.operation_timeout, operation).await {
            Ok(result) => result.map_err(|error| self.unavailable(cause_of(&error))),
            Err(_) => Err(self.unavailable(format!(
                "no answer within {} ms",
                self.options.operation_timeout.as_millis()
            ))),
        }
    }

    /// Whether this replica may decide on its view now: its listener connected and its lease
    /// live. Otherwise the reason, naming the store.
    pub fn fit(&self) -> Result<(), StoreError> {
        let lease = self.lease_locked();
        let live = lease
            .valid_until
            .is_some_and(|until| until > Instant::now());
        if lease.listening && live {
            return Ok(());
        }
        let cause = lease.cause.clone().unwrap_or_else(|| {
            if lease.listening {
                "this replica's lease lapsed (no heartbeat reached the store in time)".to_string()
            } else {
                "this replica is not listening for the fleet's changes".to_string()
            }
        });
        Err(self.unavailable(cause))
    }

    pub fn health(&self) -> StoreHealth {
        let fit = self.fit();
        StoreHealth {
            store: self.store.clone(),
            ready: fit.is_ok(),
            cause: fit.err().map(|error| error.to_string()),
            replica: Some(self.options.replica.clone()),
        }
    }

    /// Stops the listener and the heartbeat (the lease then lapses by itself).
    /// Cancelled when this replica stops: its background tasks end with it.
    pub fn stopped(&self) -> CancellationToken {
        self.stop.clone()
    }

    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Watches approval `id` for changes; create it before reading the row, so that a change
    /// between the read and the wait still wakes the waiter.
    pub fn watch(&self, id: &str) -> Watch<'_> {
        let mut waiters = self.waiters_locked();
        let (changed, count) = waiters
            .entry(id.to_string())
            .or_insert_with(|| (Arc::new(Notify::new()), 0));
        *count += 1;
        let changed = Arc::clone(changed);
        Watch {
            fleet: self,
            id: id.to_string(),
            changed,
        }
    }

    fn approval_changed(&self, id: &str) {
        if let Some((changed, _)) = self.waiters_locked().get(id) {
            changed.notify_waiters();
        }
    }

    /// Every waiter looks again (after a reconnect, when notifications may have been lost).
    pub fn every_approval_changed(&self) {
        for (changed, _) in self.waiters_locked().values() {
            changed.notify_waiters();
        }
    }

    /// One heartbeat: renews this replica's lease (its row in `replicas`) only when its view
    /// has applied every account event in the store; else the catch-up is woken and the lease
    /// runs down, so a replica that cannot catch up stops deciding.
    pub async fn beat(&self) {
        let sent = Instant::now();
        let lease_ms = i64::try_from(self.options.lease.as_millis()).unwrap_or(i64::MAX);
        let applied = self.applied.load(Ordering::SeqCst);
        let beaten = async {
            let client = self.client().await?;
            self.timed(client.query_opt(
                "WITH latest AS (SELECT coalesce(max(seq), 0) AS seq FROM account_events), \
                 beat AS (INSERT INTO replicas (id, applied, lease_until) \
                   SELECT $1, $2, CASE WHEN $2 >= latest.seq \
                     THEN now() + $3::bigint * interval '1 millisecond' ELSE now() END FROM latest \
                   ON CONFLICT (id) DO UPDATE SET applied = EXCLUDED.applied, \
                     lease_until = CASE WHEN EXCLUDED.lease_until > now() \
                       THEN EXCLUDED.lease_until ELSE replicas.lease_until END \
                   WHERE replicas.instance = $4 \
                   RETURNING 1) \
                 SELECT $2::bigint >= latest.seq FROM latest, beat",
                &[&self.options.replica, &applied, &lease_ms, &self.instance],
            ))
            .await
        };
        match beaten.await {
            Ok(None) => {
                // Another process holds this replica id now: stop deciding (P8).
                let cause = format!(
                    "another live replica holds the replica id `{}`: this replica stopped deciding (give each replica its own --replica-id)",
                    self.options.replica
                );
                tracing::error!(replica = %self.options.replica, "{cause}");
                let mut lease = self.lease_locked();
                lease.valid_until = None;
                lease.cause = Some(cause);
            }
            Ok(Some(row)) if row.get::<_, bool>(0) => {
                let margin = self.options.lease / 5;
                let mut lease = self.lease_locked();
                let renewed = sent + self.options.lease - margin;
                if lease.valid_until.is_none_or(|until| until < renewed) {
                    lease.valid_until = Some(renewed);
                }
                if lease.listening {
                    lease.cause = None;
                }
            }
            Ok(Some(_)) => self.account_changed.notify_one(),
            Err(error) => self.lease_locked().cause = Some(cause_text(&error)),
        }
    }

    /// Records that this replica's view applied account events up to `seq`.
    pub async fn applied_up_to(&self, seq: i64) -> Result<(), StoreError> {
        self.applied.fetch_max(seq, Ordering::SeqCst);
        let client = self.client().await?;
        self.timed(client.execute(
            "UPDATE replicas SET applied = GREATEST(applied, $2) WHERE id = $1 AND instance = $3",
            &[&self.options.replica, &seq, &self.instance],
        ))
        .await
        .map(|_| ())
    }

    /// Waits until every other replica with a live lease applied account event `seq`, or until
    /// the longest such a lease can still run: a replica that has not applied it by then is
    /// not deciding (its lease is renewed only when current). So once this returns no replica
    /// decides on a view without the event.
    pub async fn applied_everywhere(&self, seq: i64) -> Result<(), StoreError> {
        let deadline = Instant::now() + self.options.lease + self.options.lease / 5;
        loop {
            let client = self.client().await?;
            let behind: i64 = self
                .timed(client.query_one(
                    "SELECT count(*) FROM replicas WHERE id <> $1 AND lease_until > now() \
                     AND applied < $2",
                    &[&self.options.replica, &seq],
                ))
                .await?
                .get(0);
            drop(client);
            if behind == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                tracing::warn!(
                    seq,
                    behind,
                    "replicas still held a lease behind an account event"
                );
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Takes this replica's id for this process (P8): the row is ours when it is new, lapsed,
    /// or already ours. While another process holds a live lease on the id, it waits (up to a
    /// lease and its margin: a crashed predecessor's lease lapses in that time) and then
    /// refuses, naming the id.
    pub async fn claim_id(&self) -> Result<(), StoreError> {
        let lease_ms = i64::try_from(self.options.lease.as_millis()).unwrap_or(i64::MAX);
        let deadline = Instant::now() + self.options.lease + self.options.lease / 5;
        loop {
            let client = self.client().await?;
            let claimed = self
                .timed(client.query_opt(
                    "INSERT INTO replicas (id, applied, lease_until, instance) \
                     VALUES ($1, 0, now() + $2::bigint * interval '1 millisecond', $3) \
                     ON CONFLICT (id) DO UPDATE SET instance = EXCLUDED.instance, \
                       lease_until = EXCLUDED.lease_until \
                     WHERE replicas.lease_until <= now() OR replicas.instance = EXCLUDED.instance \
                     RETURNING 1",
                    &[&self.options.replica, &lease_ms, &self.instance],
                ))
                .await?;
            drop(client);
            if claimed.is_some() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(StoreError::Refused {
                    store: self.store.clone(),
                    cause: format!(
                        "another live replica holds the replica id `{}` (its lease is being renewed): give each replica its own --replica-id",
                        self.options.replica
                    ),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Gives the id's lease up at a graceful stop, so a restart need not wait for it to lapse.
    pub async fn release_id(&self) {
        if let Ok(client) = self.client().await {
            let _ = self
                .timed(client.execute(
                    "UPDATE replicas SET lease_until = now() WHERE id = $1 AND instance = $2",
                    &[&self.options.replica, &self.instance],
                ))
                .await;
        }
    }

    /// The keys sealing MCP `requestState` in this fleet, newest first (empty before the first
    /// [`Fleet::refresh_link_keys`]).
    pub fn link_keys(&self) -> Arc<Vec<Vec<u8>>> {
        self.link_keys.load_full()
    }

    /// Makes sure the key of the current rotation period exists (the first replica to ask
    /// creates it; the period is the store's clock over [`LINK_KEY_ROTATION`]), forgets keys
    /// three periods old, and takes the two newest (issue 32 §3: any replica opens a state
    /// another sealed, and a rotation breaks no live state).
    pub async fn refresh_link_keys(&self) -> Result<(), StoreError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|error| self.unavailable(error))?;
        let period = i64::try_from(LINK_KEY_ROTATION.as_secs()).unwrap_or(i64::MAX);
        let client = self.client().await?;
        self.timed(client.execute(
            "INSERT INTO fleet_secrets (name, secret) \
             SELECT 'request_state/' || floor(extract(epoch FROM now()) / $2::bigint)::bigint, $1 \
             ON CONFLICT (name) DO NOTHING",
            &[&secret.as_slice(), &period],
        ))
        .await?;
        self.timed(client.execute(
            "DELETE FROM fleet_secrets WHERE name LIKE 'request_state/%' \
             AND created_at < now() - 3 * $1::bigint * interval '1 second'",
            &[&period],
        ))
        .await?;
        let rows = self
            .timed(client.query(
                "SELECT secret FROM fleet_secrets WHERE name LIKE 'request_state/%' \
                 ORDER BY created_at DESC, name DESC LIMIT 2",
                &[],
            ))
            .await?;
        let keys: Vec<Vec<u8>> = rows.iter().map(|row| row.get(0)).collect();
        self.link_keys.store(Arc::new(keys));
        Ok(())
    }

    /// The first heartbeat and listener at start: waits (up to a lease) until both are up.
    pub async fn first_beat(&self) {
        let deadline = Instant::now() + self.options.lease;
        while Instant::now() < deadline && self.fit().is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn set_listening(&self, listening: bool, cause: Option<String>) {
        let mut lease = self.lease_locked();
        lease.listening = listening;
        if cause.is_some() || listening {
            lease.cause = cause;
        }
    }

    fn lease_locked(&self) -> MutexGuard<'_, Lease> {
        self.lease.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn waiters_locked(&self) -> MutexGuard<'_, HashMap<String, (Arc<Notify>, usize)>> {
        self.waiters.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Starts the listener and the heartbeat; both stop with [`Fleet::stop`].
pub fn start(fleet: &Arc<Fleet>) {
    let (listening, beating) = (Arc::clone(fleet), Arc::clone(fleet));
    tokio::spawn(async move {
        let stop = listening.stop.clone();
        tokio::select! {
            () = listen(&listening) => {}
            () = stop.cancelled() => {}
        }
        listening.set_listening(false, Some("this replica stopped".to_string()));
    });
    tokio::spawn(async move {
        let stop = beating.stop.clone();
        let every = beating.options.lease / 5;
        let mut keys_refreshed = Instant::now();
        loop {
            beating.beat().await;
            if keys_refreshed.elapsed() >= Duration::from_secs(60) {
                keys_refreshed = Instant::now();
                if let Err(error) = beating.refresh_link_keys().await {
                    tracing::warn!(%error, "the fleet's requestState keys were not refreshed");
                }
            }
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                () = stop.cancelled() => break,
            }
        }
    });
}

/// The listener: connect, `LISTEN`, wake every waiter (what changed while not listening is
/// read from the rows), then follow the notifications; on any failure the replica says it is
/// degraded and tries again.
async fn listen(fleet: &Fleet) {
    let mut backoff = Duration::from_millis(100);
    loop {
        if let Err(cause) = listened(fleet).await {
            fleet.set_listening(false, Some(cause));
        } else {
            backoff = Duration::from_millis(100);
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

async fn listened(fleet: &Fleet) -> Result<(), String> {
    let connected =
        tokio::time::timeout(fleet.options.operation_timeout, fleet.config.connect(NoTls))
            .await
            .map_err(|_| "the listener could not connect in time".to_string())?;
    let (client, mut connection) = connected.map_err(|error| cause_of(&error))?;
    let (sender, mut received) = mpsc::channel(NOTIFICATION_QUEUE);
    let driver = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(notification)) => {
                    // Full: the waiters poll the rows as well, so a dropped wake-up only
                    // delays one of them until its next look.
                    let _ = sender.try_send(Some(notification));
                }
                Ok(_) => {}
                Err(error) => {
                    let _ = sender.try_send(None);
                    tracing::warn!(error = %cause_of(&error), "the fleet listener's connection failed");
                    break;
                }
            }
        }
        let _ = sender.try_send(None);
    });
    let listening = format!("LISTEN {APPROVALS_CHANNEL}; LISTEN {ACCOUNT_CHANNEL}");
    let answer = tokio::time::timeout(
        fleet.options.operation_timeout,
        client.batch_execute(&listening),
    )
    .await;
    if !matches!(answer, Ok(Ok(()))) {
        driver.abort();
        return Err("the listener could not LISTEN".to_string());
    }
    // Only now, with LISTEN active, is a look at the rows sure to miss nothing.
    fleet.every_approval_changed();
    fleet.account_changed.notify_one();
    fleet.set_listening(true, None);
    while let Some(Some(notification)) = received.recv().await {
        match notification.channel() {
            APPROVALS_CHANNEL => fleet.approval_changed(notification.payload()),
            ACCOUNT_CHANNEL => fleet.account_changed.notify_one(),
            _ => {}
        }
    }
    driver.abort();
    Err("the listener's connection to the store closed".to_string())
}

/// A driver error in words: its database message when there is one.
pub fn cause_of(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => db.message().to_string(),
        None => error.to_string(),
    }
}

fn cause_text(error: &StoreError) -> String {
    match error {
        StoreError::Unavailable { cause, .. } | StoreError::Refused { cause, .. } => cause.clone(),
    }
}
