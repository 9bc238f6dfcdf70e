//! audit::writer::pacing: how soon the writer thread tries the disk again after a failed batch.
//! While the log fails (a full disk, a missing directory) attempts are spaced by a doubling
//! delay; a batch that arrives before the delay has passed fails at once with the failure's
//! cause, touching nothing on disk, so a refused call costs no file, no directory listing and
//! no write however many calls arrive, and is answered fast. The first attempt after the delay
//! that succeeds ends the failure: recovery needs no operator. It owns the schedule only; the
//! attempt itself is `commit`'s.

use std::time::{Duration, Instant};

/// The default delay before the first retry after a failed batch.
pub const FIRST_RETRY: Duration = Duration::from_millis(50);
/// The default longest delay between two attempts while the log keeps failing: the log is
/// tried again at most this long after the disk has room again.
pub const MAX_RETRY: Duration = Duration::from_secs(1);

/// The failures in a row and when the last one ended.
#[derive(Debug)]
pub(super) struct Pacing {
    first: Duration,
    max: Duration,
    failures: u32,
    last_failure: Option<Instant>,
}

impl Pacing {
    pub(super) fn new(first: Duration, max: Duration) -> Self {
        Self {
            first,
            max,
            failures: 0,
            last_failure: None,
        }
    }

    /// Records a batch's result, as of `now`.
    pub(super) fn record(&mut self, failed: bool, now: Instant) {
        if failed {
            self.failures = self.failures.saturating_add(1);
            self.last_failure = Some(now);
        } else {
            self.failures = 0;
            self.last_failure = None;
        }
    }

    /// The delay between the last failure and the next attempt: `first`, doubling, at most `max`.
    pub(super) fn delay(&self) -> Duration {
        if self.failures == 0 {
            return Duration::ZERO;
        }
        let doublings = self.failures.saturating_sub(1).min(16);
        self.first.saturating_mul(1 << doublings).min(self.max)
    }

    /// How long, at `now`, until the next attempt may touch the disk (zero: attempt now).
    pub(super) fn wait_at(&self, now: Instant) -> Duration {
        match self.last_failure {
            Some(last) => (last + self.delay()).saturating_duration_since(now),
            None => Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_from_50ms_to_at_most_1s_and_resets_on_success() {
        let start = Instant::now();
        let mut pacing = Pacing::new(FIRST_RETRY, MAX_RETRY);
        assert_eq!(pacing.wait_at(start), Duration::ZERO, "healthy: no wait");
        let mut delays = Vec::new();
        for _ in 0..8 {
            pacing.record(true, start);
            delays.push(pacing.delay().as_millis());
        }
        assert_eq!(delays, vec![50, 100, 200, 400, 800, 1000, 1000, 1000]);
        for _ in 0..100 {
            pacing.record(true, start);
        }
        assert_eq!(pacing.delay(), MAX_RETRY, "no overflow");
        assert_eq!(pacing.wait_at(start), MAX_RETRY);
        assert_eq!(
            pacing
                .wait_at(start + Duration::from_millis(400))
                .as_millis(),
            600
        );
        assert_eq!(pacing.wait_at(start + MAX_RETRY * 2), Duration::ZERO);
        pacing.record(false, start);
        assert_eq!(pacing.wait_at(start), Duration::ZERO);
    }
}
