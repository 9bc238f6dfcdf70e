//! server::listen::peers: who holds the front door's connections (N6). It counts the open
//! connections of each peer (IP address) against the per-peer limit, and remembers the peers
//! that completed a request head recently: only those may take a reserved connection. It must
//! not decide anything else about a connection (pools and deadlines are `listen`'s).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// How long a completed head counts: a peer that sent one within this window is "known".
pub const KNOWN_FOR: Duration = Duration::from_secs(600);
/// How many peers without an open connection are remembered as known at most.
pub const KNOWN_PEERS: usize = 4_096;

#[derive(Debug, Default)]
struct Peer {
    open: usize,
    /// When this peer last completed a request head, if it ever did.
    head_at: Option<Instant>,
}

impl Peer {
    fn known(&self, now: Instant) -> bool {
        self.head_at
            .is_some_and(|at| now.saturating_duration_since(at) < KNOWN_FOR)
    }
}

/// The table of peers.
// INVARIANT: an entry exists while its peer holds a connection (at most `max_connections +
// reserved_connections` such entries, since every connection holds a pool permit) or while it
// is remembered as known; past `open_bound + KNOWN_PEERS` entries, a new peer first drops
// every forgotten entry and then the oldest remembered one, so the table never grows past it.
#[derive(Debug)]
pub struct PeerTable {
    per_peer: usize,
    capacity: usize,
    peers: Mutex<HashMap<IpAddr, Peer>>,
}

impl PeerTable {
    /// A table for at most `open_bound` connections at once, `per_peer` of them per peer.
    pub fn new(per_peer: usize, open_bound: usize) -> Self {
        Self {
            per_peer,
            capacity: open_bound.saturating_add(KNOWN_PEERS),
            peers: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a new connection of `peer`, or refuses it (false) at the per-peer limit.
    pub fn opened(&self, peer: IpAddr, now: Instant) -> bool {
        let mut peers = self.locked();
        if !peers.contains_key(&peer) && peers.len() >= self.capacity {
            make_room(&mut peers, now);
        }
        let entry = peers.entry(peer).or_default();
        if entry.open >= self.per_peer {
            return false;
        }
        entry.open += 1;
        true
    }

    /// One connection of `peer` ended.
    pub fn closed(&self, peer: IpAddr, now: Instant) {
        let mut peers = self.locked();
        let Some(entry) = peers.get_mut(&peer) else {
            return;
        };
        entry.open = entry.open.saturating_sub(1);
        if entry.open == 0 && !entry.known(now) {
            peers.remove(&peer);
        }
    }

    /// `peer` completed a request head.
    pub fn completed_head(&self, peer: IpAddr, now: Instant) {
        if let Some(entry) = self.locked().get_mut(&peer) {
            entry.head_at = Some(now);
        }
    }

    /// Whether `peer` completed a request head within [`KNOWN_FOR`].
    pub fn known(&self, peer: IpAddr, now: Instant) -> bool {
        self.locked()
            .get(&peer)
            .is_some_and(|entry| entry.known(now))
    }

    fn locked(&self) -> MutexGuard<'_, HashMap<IpAddr, Peer>> {
        self.peers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Drops the entries no longer needed, then, if none was, the oldest remembered one.
fn make_room(peers: &mut HashMap<IpAddr, Peer>, now: Instant) {
    let before = peers.len();
    peers.retain(|_, entry| entry.open > 0 || entry.known(now));
    if peers.len() < before {
        return;
    }
    let oldest = peers
        .iter()
        .filter(|(_, entry)| entry.open == 0)
        .min_by_key(|(_, entry)| entry.head_at)
        .map(|(peer, _)| *peer);
    if let Some(peer) = oldest {
        peers.remove(&peer);
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    #[test]
    fn a_peer_holds_at_most_its_limit_and_gets_slots_back() {
        let now = Instant::now();
        let table = PeerTable::new(2, 8);
        assert!(table.opened(ip(2), now));
        assert!(table.opened(ip(2), now));
        assert!(!table.opened(ip(2), now));
        assert!(table.opened(ip(1), now), "another peer has its own limit");
        table.closed(ip(2), now);
        assert!(table.opened(ip(2), now));
        assert!(!table.opened(ip(2), now));
    }

    #[test]
    fn a_peer_is_known_after_a_complete_head_for_a_while() {
        let now = Instant::now();
        let table = PeerTable::new(4, 8);
        assert!(table.opened(ip(1), now));
        assert!(!table.known(ip(1), now));
        table.completed_head(ip(1), now);
        table.closed(ip(1), now);
        assert!(
            table.known(ip(1), now),
            "remembered after its connection ended"
        );
        assert!(!table.known(ip(1), now + KNOWN_FOR));
        // A peer that never completed a head is forgotten with its last connection.
        assert!(table.opened(ip(2), now));
        table.closed(ip(2), now);
        assert_eq!(table.locked().len(), 1);
    }

    #[test]
    fn the_table_is_bounded_and_forgets_the_oldest_known_peer() {
        let start = Instant::now();
        let table = PeerTable::new(1, 0);
        for index in 0..=KNOWN_PEERS {
            let peer = IpAddr::V6(std::net::Ipv6Addr::from(index as u128));
            let now = start + Duration::from_millis(index as u64);
            assert!(table.opened(peer, now));
            table.completed_head(peer, now);
            table.closed(peer, now);
        }
        assert_eq!(table.locked().len(), KNOWN_PEERS);
        let first = IpAddr::V6(std::net::Ipv6Addr::from(0u128));
        assert!(!table.known(first, start), "the oldest went first");
    }
}
