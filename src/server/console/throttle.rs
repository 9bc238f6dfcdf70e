//! server::console::throttle: failed console sign-ins, per (peer address, what was tried) and
//! per peer address. After [`FREE_FAILURES`] failures of one token from one address, that
//! token may be tried from there once per [`LOCKOUT`]; after [`PEER_FREE_FAILURES`] failures of
//! any tokens, so may anything from the address. So approvers behind one proxy share an
//! address without one mistyped token locking the others out (§4), and guessing from one
//! address still slows down. A success forgets its failures. The table is bounded. It never
//! sees a token: the caller passes [`Attempt`], a digest of what was tried.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Mutex, MutexGuard, PoisonError};

use time::{Duration, OffsetDateTime};

/// Failed sign-ins with one token an address may make before that token has to wait.
pub const FREE_FAILURES: u32 = 5;
/// Failed sign-ins with any tokens an address may make before everything from it has to wait.
pub const PEER_FREE_FAILURES: u32 = 50;
/// How long an address waits after each failure past the free ones.
pub const LOCKOUT: Duration = Duration::minutes(1);
/// Failures older than this are forgotten.
pub const FORGET_AFTER: Duration = Duration::minutes(15);
/// Entries (address, or address and attempt) remembered at most.
pub const PEERS: usize = 4_096;

/// What a sign-in tried, as the throttle keys it: a digest, never the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attempt([u8; 16]);

impl Attempt {
    pub fn of(token: &str) -> Self {
        use sha2::{Digest, Sha256};
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut prefix = [0u8; 16];
        prefix.copy_from_slice(digest.get(..16).unwrap_or(&[0u8; 16]));
        Self(prefix)
    }
}

/// One counter: an address, or an address and what it tried.
type Key = (IpAddr, Option<Attempt>);

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: OffsetDateTime,
}

/// The failed sign-ins of each address, and of each address and attempt.
// INVARIANT: at most `PEERS` entries: a new key past the bound first drops every entry older
// than `FORGET_AFTER`, then the one whose last failure is oldest.
#[derive(Debug, Default)]
pub struct SignInThrottle {
    by_peer: Mutex<HashMap<Key, Failures>>,
}

/// The address a request without one is counted under (a router served without
/// `server::listen`, as in-process tests do).
pub fn unknown_peer() -> IpAddr {
    IpAddr::V4(Ipv4Addr::UNSPECIFIED)
}

impl SignInThrottle {
    /// `Err(wait)` while `peer` must wait before it may try `attempt` again.
    pub fn admit(
        &self,
        peer: IpAddr,
        attempt: Attempt,
        now: OffsetDateTime,
    ) -> Result<(), Duration> {
        let by_peer = self.locked();
        let wait = |key: &Key, free: u32| {
            let failures = by_peer.get(key)?;
            let open_at = failures.last + LOCKOUT;
            (failures.count >= free && now < open_at).then_some(open_at - now)
        };
        match (
            wait(&(peer, Some(attempt)), FREE_FAILURES),
            wait(&(peer, None), PEER_FREE_FAILURES),
        ) {
            (None, None) => Ok(()),
            (Some(a), Some(b)) => Err(a.max(b)),
            (Some(wait), None) | (None, Some(wait)) => Err(wait),
        }
    }

    /// `peer` failed to sign in with `attempt`.
    pub fn failed(&self, peer: IpAddr, attempt: Attempt, now: OffsetDateTime) {
        let mut by_peer = self.locked();
        for key in [(peer, Some(attempt)), (peer, None)] {
            if !by_peer.contains_key(&key) && by_peer.len() >= PEERS {
                make_room(&mut by_peer, now);
            }
            let failures = by_peer.entry(key).or_insert(Failures {
                count: 0,
                last: now,
            });
            if now - failures.last >= FORGET_AFTER {
                failures.count = 0;
            }
            failures.count = failures.count.saturating_add(1);
            failures.last = now;
        }
    }

    /// `peer` signed in with `attempt`: its failures are forgotten.
    pub fn succeeded(&self, peer: IpAddr, attempt: Attempt) {
        let mut by_peer = self.locked();
        by_peer.remove(&(peer, Some(attempt)));
        by_peer.remove(&(peer, None));
    }

    fn locked(&self) -> MutexGuard<'_, HashMap<Key, Failures>> {
        self.by_peer.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn make_room(by_peer: &mut HashMap<Key, Failures>, now: OffsetDateTime) {
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
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-12-01 10:00 UTC);

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    fn attempt(n: u32) -> Attempt {
        Attempt::of(&format!("token-{n}"))
    }

    #[test]
    fn after_the_free_failures_a_token_waits_between_tries_from_that_address() {
        let throttle = SignInThrottle::default();
        for _ in 0..FREE_FAILURES {
            assert!(throttle.admit(ip(2), attempt(1), NOW).is_ok());
            throttle.failed(ip(2), attempt(1), NOW);
        }
        assert_eq!(throttle.admit(ip(2), attempt(1), NOW), Err(LOCKOUT));
        assert!(
            throttle.admit(ip(2), attempt(2), NOW).is_ok(),
            "another token from the same address is not held (§4)"
        );
        assert!(
            throttle.admit(ip(1), attempt(1), NOW).is_ok(),
            "another address is not held"
        );
        let later = NOW + LOCKOUT;
        assert!(throttle.admit(ip(2), attempt(1), later).is_ok());
        throttle.failed(ip(2), attempt(1), later);
        assert!(
            throttle.admit(ip(2), attempt(1), later).is_err(),
            "one try, then wait again"
        );
        throttle.succeeded(ip(2), attempt(1));
        assert!(throttle.admit(ip(2), attempt(1), later).is_ok());
    }

    #[test]
    fn many_guesses_from_one_address_hold_everything_from_it() {
        let throttle = SignInThrottle::default();
        for n in 0..PEER_FREE_FAILURES {
            throttle.failed(ip(3), attempt(n), NOW);
        }
        assert_eq!(throttle.admit(ip(3), attempt(999), NOW), Err(LOCKOUT));
        assert!(throttle.admit(ip(4), attempt(999), NOW).is_ok());
    }

    #[test]
    fn old_failures_are_forgotten_and_the_table_is_bounded() {
        let throttle = SignInThrottle::default();
        for _ in 0..FREE_FAILURES {
            throttle.failed(ip(2), attempt(1), NOW);
        }
        throttle.failed(ip(2), attempt(1), NOW + FORGET_AFTER);
        assert!(throttle
            .admit(ip(2), attempt(1), NOW + FORGET_AFTER)
            .is_ok());
        for index in 0..=PEERS as u128 {
            let peer = IpAddr::V6(std::net::Ipv6Addr::from(index));
            let at = NOW + Duration::seconds(i64::try_from(index).unwrap());
            throttle.failed(peer, attempt(1), at);
        }
        assert!(throttle.locked().len() <= PEERS);
    }
}
