//! The in-process cache of the `agent_design_projects` consent bit (client-facts §4, `N6n`).
//! It owns the cached state and the generation counter that stops a stale GET from overwriting a
//! later event; it must not talk to the server or decide whether to ask.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// What this process knows about the consent bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsentState {
    /// Never fetched, the fetch failed, or the cache was reset.
    Unknown,
    /// The server said `true`, or a POST recorded consent.
    Granted,
    /// The bit was seeded `false`: the only state that raises a consent ask.
    Refused,
}

/// Proof that a `GET /v1/design/consent` started at a given generation. Deliberately not `Clone`:
/// one GET yields one result.
#[derive(Debug)]
pub struct FetchTicket {
    generation: u64,
}

impl FetchTicket {
    /// The generation the cache had when the GET started.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// State and generation live behind one lock because a fetch result must be compared with the
/// generation and applied in a single step.
#[derive(Debug, Clone, Copy)]
struct ConsentSlot {
    state: ConsentState,
    generation: u64,
}

/// The consent cache; every method takes `&self` and is safe to call from many threads.
#[derive(Debug)]
pub struct ConsentCache {
    slot: Mutex<ConsentSlot>,
}

impl Default for ConsentCache {
    fn default() -> Self {
        Self {
            slot: Mutex::new(ConsentSlot {
                state: ConsentState::Unknown,
                generation: 0,
            }),
        }
    }
}

impl ConsentCache {
    /// The cached consent state.
    pub fn state(&self) -> ConsentState {
        self.locked().state
    }

    /// How many events (recorded, refused, reset) have overwritten the cache so far.
    pub fn generation(&self) -> u64 {
        self.locked().generation
    }

    /// A `GET /v1/design/consent` is starting; the ticket carries the current generation.
    pub fn fetch_started(&self) -> FetchTicket {
        FetchTicket {
            generation: self.locked().generation,
        }
    }

    /// The GET finished. `Some(bool)` seeds Granted or Refused only if no event bumped the
    /// generation since the ticket was issued (a reset in between wins); returns whether it was
    /// applied. `None` (failed request, missing or non-boolean field) changes nothing, because a
    /// failed GET must not raise an ask: the server's 403 drives the flow instead.
    pub fn fetch_finished(&self, ticket: FetchTicket, value: Option<bool>) -> bool {
        match value {
            Some(granted) => self.fetched_at(ticket.generation, granted),
            None => false,
        }
    }

    /// A GET that started at `generation` answered `granted`: seeds the state unless an event
    /// bumped the generation since (the ticket's rule, for a result that travelled through a
    /// store as an event).
    pub fn fetched_at(&self, generation: u64, granted: bool) -> bool {
        let mut slot = self.locked();
        if slot.generation != generation {
            return false;
        }
        slot.state = if granted {
            ConsentState::Granted
        } else {
            ConsentState::Refused
        };
        true
    }

    /// `POST /v1/design/consent` succeeded, or a call that showed the consent ask succeeded.
    pub fn consent_recorded(&self) {
        self.overwritten(ConsentState::Granted);
    }

    /// The bit was seeded `false` (a 403 `needs_consent` that could not be resolved, or a revoke).
    pub fn consent_refused(&self) {
        self.overwritten(ConsentState::Refused);
    }

    /// The cache is forgotten (`S0f`, after any `needs_project_grant`).
    pub fn reset(&self) {
        self.overwritten(ConsentState::Unknown);
    }

    /// Every event bumps the generation so that a GET started before it cannot undo it.
    fn overwritten(&self, state: ConsentState) {
        let mut slot = self.locked();
        slot.state = state;
        slot.generation = slot.generation.wrapping_add(1);
    }

    /// The slot is plain data, so a panic in another thread cannot leave it half-written.
    fn locked(&self) -> MutexGuard<'_, ConsentSlot> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_unknown_at_generation_zero() {
        let cache = ConsentCache::default();
        assert_eq!(cache.state(), ConsentState::Unknown);
        assert_eq!(cache.generation(), 0);
    }

    #[test]
    fn fetch_seeds_true_and_false_without_bumping_the_generation() {
        let cache = ConsentCache::default();
        assert!(cache.fetch_finished(cache.fetch_started(), Some(true)));
        assert_eq!(cache.state(), ConsentState::Granted);
        assert!(cache.fetch_finished(cache.fetch_started(), Some(false)));
        assert_eq!(cache.state(), ConsentState::Refused);
        assert_eq!(cache.generation(), 0);
    }

    #[test]
    fn failed_fetch_changes_nothing() {
        let cache = ConsentCache::default();
        cache.consent_recorded();
        assert!(!cache.fetch_finished(cache.fetch_started(), None));
        assert_eq!(cache.state(), ConsentState::Granted);
        assert_eq!(cache.generation(), 1);
    }

    #[test]
    fn reset_during_fetch_wins_over_the_stale_result() {
        let cache = ConsentCache::default();
        let ticket = cache.fetch_started();
        assert_eq!(ticket.generation(), 0);
        cache.reset();
        assert!(!cache.fetch_finished(ticket, Some(true)));
        assert_eq!(cache.state(), ConsentState::Unknown);
        assert_eq!(cache.generation(), 1);
    }

    #[test]
    fn consent_recorded_during_fetch_is_not_overwritten_by_a_stale_false() {
        let cache = ConsentCache::default();
        let ticket = cache.fetch_started();
        cache.consent_recorded();
        assert!(!cache.fetch_finished(ticket, Some(false)));
        assert_eq!(cache.state(), ConsentState::Granted);
    }

    #[test]
    fn refused_during_fetch_is_not_overwritten_by_a_stale_true() {
        let cache = ConsentCache::default();
        let ticket = cache.fetch_started();
        cache.consent_refused();
        assert!(!cache.fetch_finished(ticket, Some(true)));
        assert_eq!(cache.state(), ConsentState::Refused);
    }

    #[test]
    fn every_event_bumps_the_generation_once() {
        let cache = ConsentCache::default();
        cache.consent_recorded();
        cache.consent_refused();
        cache.reset();
        assert_eq!(cache.generation(), 3);
        assert_eq!(cache.state(), ConsentState::Unknown);
        let ticket = cache.fetch_started();
        assert_eq!(ticket.generation(), 3);
        assert!(cache.fetch_finished(ticket, Some(true)));
    }

    #[test]
    fn state_serializes_in_snake_case() {
        let json = serde_json::to_string(&ConsentState::Granted).unwrap();
        assert_eq!(json, "\"granted\"");
        let back: ConsentState = serde_json::from_str("\"refused\"").unwrap();
        assert_eq!(back, ConsentState::Refused);
        assert!(serde_json::from_str::<ConsentState>("\"Granted\"").is_err());
    }
}
