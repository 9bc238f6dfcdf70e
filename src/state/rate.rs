//! state::rate: a plain rate limit per caller, for abuse (issue 36 §2) — keyed GCRA
//! (`governor`) over the authenticated principal, configured by `limits.rate`
//! (`{per_second, burst}`; off when absent). It decides nothing: it tells the call's facts
//! whether this call is over the caller's rate and when the next one fits
//! (`context.caller.usage.rate_limited`, `retry_after_seconds`), and the shipped gate
//! `gates.rate-limit` (`@rate_limit`) denies it — a logged decision like any other, answered
//! as 429 with `Retry-After` over HTTP, a tool error on `/mcp`, a deny from the hook, each
//! naming the time to wait. Bounded: principals whose state is back to fresh are forgotten
//! every [`PRUNE_EVERY`] checks, and at most [`MAX_KEYS`] are kept (past it, a new caller is
//! limited until room is made: fail closed; at the cap a pruning runs at most once a second).

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use serde::Deserialize;

/// Principals tracked at once.
pub const MAX_KEYS: usize = 100_000;
/// Checks between two prunings of fresh states.
pub const PRUNE_EVERY: u64 = 4_096;
/// At the cap, the fewest time between two prunings (a pruning walks every key).
pub const PRUNE_AT_CAP_EVERY: Duration = Duration::from_secs(1);

/// `limits` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub rate: Option<RawRate>,
}

/// `limits.rate` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawRate {
    /// Calls per second a caller may make, sustained.
    pub per_second: Option<u32>,
    /// Calls a caller may make at once after a pause (default: `per_second`).
    pub burst: Option<u32>,
}

/// `limits.rate`, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateQuota {
    pub per_second: NonZeroU32,
    pub burst: NonZeroU32,
}

impl RateQuota {
    /// The section checked: `per_second` 1..=100000, `burst` 1..=100000; `None` when absent.
    pub fn validate(raw: Option<RawLimits>) -> Result<Option<Self>, (&'static str, String)> {
        let Some(rate) = raw.and_then(|limits| limits.rate) else {
            return Ok(None);
        };
        let bounded = |value: u32, field: &'static str| {
            NonZeroU32::new(value)
                .filter(|value| value.get() <= 100_000)
                .ok_or((field, format!("{value} is outside 1..=100000")))
        };
        let per_second = bounded(
            rate.per_second
                .ok_or(("limits.rate.per_second", "is required".to_string()))?,
            "limits.rate.per_second",
        )?;
        let burst = bounded(rate.burst.unwrap_or(per_second.get()), "limits.rate.burst")?;
        Ok(Some(Self { per_second, burst }))
    }
}

/// The rate limiter of one process.
pub struct RateLimiter {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
    checks: AtomicU64,
    /// When the cap last made a pruning.
    pruned_at_cap: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("keys", &self.limiter.len())
            .finish()
    }
}

impl RateLimiter {
    pub fn new(quota: RateQuota) -> Self {
        let quota = Quota::per_second(quota.per_second).allow_burst(quota.burst);
        Self {
            limiter: DefaultKeyedRateLimiter::dashmap(quota),
            clock: DefaultClock::default(),
            checks: AtomicU64::new(0),
            pruned_at_cap: Mutex::new(None),
        }
    }

    /// Takes one call of `principal`: `None` when it fits, else the whole seconds until the
    /// next one does (at least 1).
    pub fn over(&self, principal: &str) -> Option<i64> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            self.prune();
        }
        let key = principal.to_string();
        if self.limiter.len() >= MAX_KEYS {
            let due = {
                let mut last = self
                    .pruned_at_cap
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let due = last.is_none_or(|at| at.elapsed() >= PRUNE_AT_CAP_EVERY);
                if due {
                    *last = Some(Instant::now());
                }
                due
            };
            if due {
                self.prune();
            }
            if self.limiter.len() >= MAX_KEYS {
                return Some(1);
            }
        }
        match self.limiter.check_key(&key) {
            Ok(()) => None,
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                let seconds = i64::try_from(wait.as_secs()).unwrap_or(i64::MAX);
                Some(
                    seconds
                        .saturating_add(i64::from(wait.subsec_nanos() > 0))
                        .max(1),
                )
            }
        }
    }

    /// Forgets the principals whose state is fresh again.
    fn prune(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    /// Principals tracked now (for tests and metrics).
    pub fn len(&self) -> usize {
        self.limiter.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(per_second: u32, burst: u32) -> RateQuota {
        RateQuota::validate(Some(RawLimits {
            rate: Some(RawRate {
                per_second: Some(per_second),
                burst: Some(burst),
            }),
        }))
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_burst_fits_then_the_caller_waits_and_others_are_apart() {
        let limiter = RateLimiter::new(quota(1, 3));
        for _ in 0..3 {
            assert_eq!(limiter.over("alice"), None);
        }
        assert_eq!(limiter.over("alice"), Some(1));
        assert_eq!(
            limiter.over("bob"),
            None,
            "another caller has its own budget"
        );
        assert_eq!(limiter.len(), 2);
    }

    #[test]
    fn the_section_is_checked() {
        assert_eq!(RateQuota::validate(None).unwrap(), None);
        let absent = RawLimits { rate: None };
        assert_eq!(RateQuota::validate(Some(absent)).unwrap(), None);
        let zero = RawLimits {
            rate: Some(RawRate {
                per_second: Some(0),
                burst: None,
            }),
        };
        assert_eq!(
            RateQuota::validate(Some(zero)).unwrap_err().0,
            "limits.rate.per_second"
        );
        let missing = RawLimits {
            rate: Some(RawRate::default()),
        };
        assert!(RateQuota::validate(Some(missing)).is_err());
        assert_eq!(quota(5, 5).burst.get(), 5);
    }
}
