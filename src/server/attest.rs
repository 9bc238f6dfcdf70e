//! server::attest: hook attestations of MCP calls (issue 19 §3). Claude Code's `PreToolUse`
//! hook fires for askgate's MCP tools too, before the client sends the `tools/call`, and its
//! input carries what MCP cannot: the client's `session_id`, `permission_mode` and, inside a
//! subagent, `agent_id`. The hook endpoint files them here keyed by (the hook caller's
//! principal, the `tool_use_id`); the `tools/call` whose `_meta["claudecode/toolUseId"]`
//! names the same id under the same principal takes them, once. The store is bounded (in total
//! and per principal) and every attestation lives a short while only. It owns the store; it
//! decides nothing (the policies read `context.session.attestation`).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use time::{Duration, OffsetDateTime};

use crate::facts::{AgentKind, Mode, Session};

/// How long an attestation waits for its `tools/call`.
pub const TTL: Duration = Duration::seconds(60);
/// Attestations held at most, in total.
pub const MAX_TOTAL: usize = 4_096;
/// Attestations of one principal held at most.
pub const MAX_PER_PRINCIPAL: usize = 256;

/// What the hook attested for one tool use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestation {
    /// The client's own session id (`session_id` of the hook input).
    pub session_id: String,
    pub mode: Mode,
    /// Set when a subagent made the call.
    pub agent_id: Option<String>,
    pub received_at: OffsetDateTime,
}

impl Attestation {
    /// The session facts the call is decided with: the attested agent and mode over the
    /// caller's configured defaults for what the hook does not say.
    pub fn facts(&self, defaults: &Session) -> Session {
        Session {
            agent: if self.agent_id.is_some() {
                AgentKind::Subagent
            } else {
                AgentKind::Main
            },
            agent_id: self.agent_id.clone(),
            mode: self.mode,
            attestation: crate::facts::Attestation::Attested,
            ..defaults.clone()
        }
    }
}

type Key = (String, String);

#[derive(Default)]
struct Held {
    by_key: HashMap<Key, Attestation>,
    /// Keys in the order they arrived (a key replaced is found again by its time).
    order: VecDeque<(Key, OffsetDateTime)>,
    per_principal: HashMap<String, usize>,
}

impl Held {
    fn remove(&mut self, key: &Key) -> Option<Attestation> {
        let removed = self.by_key.remove(key)?;
        if let Some(count) = self.per_principal.get_mut(&key.0) {
            *count -= 1;
            if *count == 0 {
                self.per_principal.remove(&key.0);
            }
        }
        Some(removed)
    }

    /// Drops the oldest entries while `drop` says so; stale order entries are skipped.
    fn purge(&mut self, mut drop: impl FnMut(&Key, OffsetDateTime) -> bool) {
        while let Some((key, at)) = self.order.front() {
            let live = self.by_key.get(key).map(|held| held.received_at) == Some(*at);
            if live && !drop(key, *at) {
                break;
            }
            if let Some((key, _)) = self.order.pop_front() {
                if live {
                    self.remove(&key);
                }
            }
        }
    }

    /// Forgets the arrival entries of attestations already taken or replaced, so the order
    /// stays as bounded as the store.
    fn compact(&mut self) {
        if self.order.len() > 2 * MAX_TOTAL {
            let by_key = &self.by_key;
            self.order
                .retain(|(key, at)| by_key.get(key).map(|held| held.received_at) == Some(*at));
        }
    }
}

/// Why an attestation was not kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("askgate holds {MAX_TOTAL} hook attestations already")]
pub struct Full;

/// The attestations waiting for their `tools/call`.
#[derive(Default)]
pub struct Attestations {
    held: Mutex<Held>,
}

impl Attestations {
    /// Files what the hook of `principal` attested for `tool_use_id`. A principal past its
    /// quota loses its own oldest attestation; a full store keeps what it has.
    pub fn attest(
        &self,
        principal: &str,
        tool_use_id: &str,
        attestation: Attestation,
    ) -> Result<(), Full> {
        let now = attestation.received_at;
        let mut held = self.lock();
        held.purge(|_, at| now - at >= TTL);
        held.compact();
        let key = (principal.to_string(), tool_use_id.to_string());
        held.remove(&key);
        if held.per_principal.get(principal).copied().unwrap_or(0) >= MAX_PER_PRINCIPAL {
            let oldest = held
                .order
                .iter()
                .find(|(k, at)| {
                    k.0 == principal && held.by_key.get(k).map(|a| a.received_at) == Some(*at)
                })
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                held.remove(&oldest);
            }
        }
        if held.by_key.len() >= MAX_TOTAL {
            return Err(Full);
        }
        *held.per_principal.entry(key.0.clone()).or_default() += 1;
        held.order.push_back((key.clone(), now));
        held.by_key.insert(key, attestation);
        Ok(())
    }

    /// The attestation `principal`'s hook filed for `tool_use_id`, taken (used once); `None`
    /// when there is none, it expired, or another principal filed it.
    pub fn take(
        &self,
        principal: &str,
        tool_use_id: &str,
        now: OffsetDateTime,
    ) -> Option<Attestation> {
        let mut held = self.lock();
        held.purge(|_, at| now - at >= TTL);
        held.remove(&(principal.to_string(), tool_use_id.to_string()))
    }

    /// How many attestations are held (for tests and metrics).
    pub fn len(&self) -> usize {
        self.lock().by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn attested(at: OffsetDateTime) -> Attestation {
        Attestation {
            session_id: "s1".into(),
            mode: Mode::Default,
            agent_id: None,
            received_at: at,
        }
    }

    #[test]
    fn an_attestation_is_taken_once_by_its_own_principal_only() {
        let store = Attestations::default();
        let now = OffsetDateTime::UNIX_EPOCH;
        store.attest("alice", "toolu_1", attested(now)).unwrap();
        assert_eq!(store.take("bob", "toolu_1", now), None);
        assert!(store.take("alice", "toolu_1", now).is_some());
        assert_eq!(store.take("alice", "toolu_1", now), None);
    }

    #[test]
    fn an_attestation_expires_after_its_ttl() {
        let store = Attestations::default();
        let now = OffsetDateTime::UNIX_EPOCH;
        store.attest("alice", "toolu_1", attested(now)).unwrap();
        assert_eq!(store.take("alice", "toolu_1", now + TTL), None);
        assert!(store.is_empty());
    }

    #[test]
    fn a_principal_past_its_quota_loses_its_oldest_and_the_store_stays_bounded() {
        let store = Attestations::default();
        let now = OffsetDateTime::UNIX_EPOCH;
        for n in 0..=MAX_PER_PRINCIPAL {
            store
                .attest("alice", &format!("t{n}"), attested(now))
                .unwrap();
        }
        assert_eq!(store.len(), MAX_PER_PRINCIPAL);
        assert_eq!(store.take("alice", "t0", now), None);
        assert!(store
            .take("alice", &format!("t{MAX_PER_PRINCIPAL}"), now)
            .is_some());
        for p in 0..MAX_TOTAL / MAX_PER_PRINCIPAL + 1 {
            for n in 0..MAX_PER_PRINCIPAL {
                let _ = store.attest(&format!("p{p}"), &format!("t{n}"), attested(now));
            }
        }
        assert_eq!(store.len(), MAX_TOTAL);
        assert_eq!(store.attest("late", "t", attested(now)), Err(Full));
    }
}
