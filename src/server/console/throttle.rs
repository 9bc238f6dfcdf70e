//! server::console::throttle: failed console sign-ins, per peer (IP address). After
//! [`FREE_FAILURES`] failures an address may try once per [`LOCKOUT`]; a success forgets its
//! failures. The table is bounded. It must not look at tokens: the caller says what happened.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Mutex, MutexGuard, PoisonError};

use time::{Duration, OffsetDateTime};

/// Failed sign-ins an address may make before it has to wait.
pub const FREE_FAILURES: u32 = 5;
/// How long an address waits after each failure past the free ones.
pub const LOCKOUT: Duration = Duration::minutes(1);
/// Failures older than this are forgotten.
pub const FORGET_AFTER: Duration = Duration::minutes(15);
/// Addresses remembered at most.
pub const PEERS: usize = 4_096;

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: OffsetDateTime,
}

/// The failed sign-ins of each address.
// INVARIANT: at most `PEERS` entries: a new address past the bound first drops every entry
// older than `FORGET_AFTER`, then the one whose last failure is oldest.
#[derive(Debug, Default)]
pub struct SignInThrottle {
    by_peer: Mutex<HashMap<IpAddr, Failures>>,
}

/// The address a request without one is counted under (a router served without
/// `server::listen`, as in-process tests do).
pub fn unknown_peer() -> IpAddr {
    IpAddr::V4(Ipv4Addr::UNSPECIFIED)
}

impl SignInThrottle {
    /// `Err(wait)` while `peer` must wait before it may try again.
    pub fn admit(&self, peer: IpAddr, now: OffsetDateTime) -> Result<(), Duration> {
        let by_peer = self.locked();
        let Some(failures) = by_peer.get(&peer) else {
            return Ok(());
        };
        let open_at = failures.last + LOCKOUT;
        if failures.count >= FREE_FAILURES && now < open_at {
            return Err(open_at - now);
        }
        Ok(())
    }

    /// `peer` failed to sign in.
    pub fn failed(&self, peer: IpAddr, now: OffsetDateTime) {
        let mut by_peer = self.locked();
        if !by_peer.contains_key(&peer) && by_peer.len() >= PEERS {
            make_room(&mut by_peer, now);
        }
        let failures = by_peer.entry(peer).or_insert(Failures {
            count: 0,
            last: now,
        });
        if now - failures.last >= FORGET_AFTER {
            failures.count = 0;
        }
        failures.count = failures.count.saturating_add(1);
        failures.last = now;
    }

    /// `peer` signed in: its failures are forgotten.
    pub fn succeeded(&self, peer: IpAddr) {
        self.locked().remove(&peer);
    }

    fn locked(&self) -> MutexGuard<'_, HashMap<IpAddr, Failures>> {
        self.by_peer.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn make_room(by_peer: &mut HashMap<IpAddr, Failures>, now: OffsetDateTime) {
    by_peer.retain(|_, failures| now - failures.last < FORGET_AFTER);
    if by_peer.len() < PEERS {
        return;
    }
    let oldest = by_peer
        .iter()
        .min_by_key(|(_, failures)| failures.last)
        .map(|(peer, _)| *peer);
    if let Some(peer) = oldest {
        by_peer.remove(&peer);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-12-01 10:00 UTC);

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    #[test]
    fn after_the_free_failures_an_address_waits_between_tries() {
        let throttle = SignInThrottle::default();
        for _ in 0..FREE_FAILURES {
            assert!(throttle.admit(ip(2), NOW).is_ok());
            throttle.failed(ip(2), NOW);
        }
        assert_eq!(throttle.admit(ip(2), NOW), Err(LOCKOUT));
        assert!(
            throttle.admit(ip(1), NOW).is_ok(),
            "another address is not held"
        );
        let later = NOW + LOCKOUT;
        assert!(throttle.admit(ip(2), later).is_ok());
        throttle.failed(ip(2), later);
        assert!(
            throttle.admit(ip(2), later).is_err(),
            "one try, then wait again"
        );
        throttle.succeeded(ip(2));
        assert!(throttle.admit(ip(2), later).is_ok());
    }

    #[test]
    fn old_failures_are_forgotten_and_the_table_is_bounded() {
        let throttle = SignInThrottle::default();
        for _ in 0..FREE_FAILURES {
            throttle.failed(ip(2), NOW);
        }
        throttle.failed(ip(2), NOW + FORGET_AFTER);
        assert!(throttle.admit(ip(2), NOW + FORGET_AFTER).is_ok());
        for index in 0..=PEERS as u128 {
            let peer = IpAddr::V6(std::net::Ipv6Addr::from(index));
            let at = NOW + Duration::seconds(i64::try_from(index).unwrap());
            throttle.failed(peer, at);
        }
        assert!(throttle.locked().len() <= PEERS);
    }
}
