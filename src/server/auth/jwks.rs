//! server::auth::jwks: one issuer's key cache ([`KeySource`]). Keys are looked up by `kid`
//! without a lock; a `kid` it does not know triggers one refetch, at most once per
//! [`UNKNOWN_KID_COOLDOWN`] per issuer, shared by every request waiting for it (single
//! flight); a background task refreshes the set when its `Cache-Control` lifetime ends; when
//! the issuer cannot be reached the last good keys are served for [`STALE_GRACE`] past their
//! lifetime, then not at all.
//!
//! Time comes in as an argument (`now`) on the request path so tests can move it; the
//! background task reads the system clock.

use std::sync::{Arc, Weak};

use arc_swap::ArcSwap;
use time::{Duration as Span, OffsetDateTime};

use super::error::{shown, TokenError};
use super::fetch;
use super::issuer::KeysLocation;
use super::keys::{KeySet, VerifyingKey};

/// An unknown `kid` refetches the key set at most this often per issuer.
pub const UNKNOWN_KID_COOLDOWN: Span = Span::seconds(10);
/// How long past their lifetime the last good keys are served while the issuer is unreachable.
pub const STALE_GRACE: Span = Span::hours(24);
/// The background task's wait after a failed refresh.
pub const RETRY_AFTER_FAILURE: Span = Span::seconds(30);
/// How long a request waits for another request's fetch (two documents, each with its deadline).
const FETCH_WAIT: std::time::Duration = std::time::Duration::from_secs(12);

#[derive(Debug, Default)]
struct FetchLog {
    /// The last fetch an unknown `kid` (or unusable keys) caused.
    last_on_demand: Option<OffsetDateTime>,
    /// Why the last fetch failed, while it is the last.
    last_error: Option<String>,
    /// When the background task fetches next.
    next_refresh: Option<OffsetDateTime>,
}

/// The keys of one issuer.
#[derive(Debug)]
pub struct KeySource {
    issuer: String,
    location: KeysLocation,
    http: reqwest::Client,
    // INVARIANT: replaced only by `store`, with a higher generation; readers never lock.
    keys: ArcSwap<KeySet>,
    // The single flight: whoever holds it is the one fetch in progress.
    fetch: tokio::sync::Mutex<FetchLog>,
}

impl KeySource {
    pub fn new(issuer: String, location: KeysLocation, http: reqwest::Client) -> Self {
        Self {
            issuer,
            location,
            http,
            keys: ArcSwap::from_pointee(KeySet::empty()),
            fetch: tokio::sync::Mutex::new(FetchLog::default()),
        }
    }

    /// The key `kid`, refetching the set once (within the cooldown) when it is not known or
    /// the keys are past their grace.
    pub async fn key(
        &self,
        kid: &str,
        now: OffsetDateTime,
    ) -> Result<Arc<VerifyingKey>, TokenError> {
        let seen = self.keys.load_full();
        if seen.usable(now) {
            if let Some(key) = seen.get(kid) {
                return Ok(Arc::clone(key));
            }
        }
        self.refetch_on_demand(seen.generation, now).await?;
        let current = self.keys.load();
        if !current.usable(now) {
            return Err(self.unavailable(now));
        }
        current
            .get(kid)
            .cloned()
            .ok_or_else(|| TokenError::UnknownKey {
                kid: shown(kid),
                issuer: self.issuer.clone(),
            })
    }

    /// One fetch for everyone who saw generation `seen`: a waiter that finds a newer set
    /// returns at once; within the cooldown nobody fetches.
    async fn refetch_on_demand(&self, seen: u64, now: OffsetDateTime) -> Result<(), TokenError> {
        let mut log = tokio::time::timeout(FETCH_WAIT, self.fetch.lock())
            .await
            .map_err(|_| TokenError::KeysUnavailable {
                issuer: self.issuer.clone(),
                reason: "another fetch of the keys did not finish in time".into(),
            })?;
        if self.keys.load().generation != seen {
            return Ok(());
        }
        if let Some(last) = log.last_on_demand {
            if now - last < UNKNOWN_KID_COOLDOWN {
                return Ok(());
            }
        }
        log.last_on_demand = Some(now);
        self.fetch_locked(&mut log, now).await;
        Ok(())
    }

    /// Fetches and stores the key set; the caller holds the fetch lock.
    async fn fetch_locked(&self, log: &mut FetchLog, now: OffsetDateTime) {
        let fetched = fetch::key_set(&self.http, &self.issuer, &self.location)
            .await
            .and_then(|fetched| Ok((KeySet::parse(&fetched.body)?, fetched.max_age)));
        match fetched {
            Ok((keys, max_age)) => {
                let generation = self.keys.load().generation + 1;
                let fresh_until = now + max_age;
                self.keys.store(Arc::new(KeySet::with_keys(
                    keys,
                    generation,
                    fresh_until,
                    fresh_until + STALE_GRACE,
                )));
                log.last_error = None;
                log.next_refresh = Some(fresh_until);
            }
            Err(why) => {
                tracing::warn!(issuer = %self.issuer, error = %why, "fetching the issuer's keys failed; the last good keys stay in use within their grace");
                log.last_error = Some(why);
                log.next_refresh = Some(now + RETRY_AFTER_FAILURE);
            }
        }
    }

    fn unavailable(&self, now: OffsetDateTime) -> TokenError {
        // Not waiting for a fetch in progress: its outcome is the next request's business.
        let last_error = self
            .fetch
            .try_lock()
            .ok()
            .and_then(|log| log.last_error.clone());
        let keys = self.keys.load();
        let reason = match (&last_error, keys.generation) {
            (Some(why), 0) => format!("they were never fetched: {why}"),
            (Some(why), _) => format!(
                "the last good keys expired at {} and the issuer is unreachable: {why}",
                keys.usable_until
            ),
            (None, _) if keys.generation == 0 => "they were not fetched yet".to_string(),
            (None, _) => format!(
                "the last good keys expired at {} ({now})",
                keys.usable_until
            ),
        };
        TokenError::KeysUnavailable {
            issuer: self.issuer.clone(),
            reason,
        }
    }

    /// How many keys are held now (for tests and metrics).
    pub fn key_count(&self) -> usize {
        self.keys.load().len()
    }

    /// The background refresh: fetches at once, then whenever the keys' lifetime ends (or
    /// [`RETRY_AFTER_FAILURE`] after a failure), until the source is dropped.
    pub async fn refresh(source: Weak<KeySource>) {
        loop {
            let Some(strong) = source.upgrade() else {
                return;
            };
            let now = OffsetDateTime::now_utc();
            {
                let mut log = strong.fetch.lock().await;
                if log.next_refresh.is_none_or(|at| at <= now) {
                    strong.fetch_locked(&mut log, now).await;
                }
            }
            let next = strong.fetch.lock().await.next_refresh;
            drop(strong);
            let wait = next
                .map(|at| at - OffsetDateTime::now_utc())
                .unwrap_or(RETRY_AFTER_FAILURE)
                .clamp(Span::seconds(1), fetch::MAX_MAX_AGE);
            tokio::time::sleep(wait.unsigned_abs()).await;
        }
    }
}
