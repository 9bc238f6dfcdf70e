//! store::attestations: hook attestations of MCP calls (issue 19 §3), wherever they are kept —
//! [`AttestationBook`], whose events are an attestation filed and taken; [`MemoryAttestations`],
//! the bounded book of this process; `store::postgres` keeps the same book for a fleet, so the
//! hook may post to one replica and the call reach another (issue 32 §3).
//!
//! Claude Code's `PreToolUse` hook fires for askgate's MCP tools too, before the client sends
//! the `tools/call`, and its input carries what MCP cannot: the client's `session_id`,
//! `permission_mode` and, inside a subagent, `agent_id`. The hook endpoint files them keyed by
//! (the hook caller's principal, the `tool_use_id`); the `tools/call` whose
//! `_meta["claudecode/toolUseId"]` names the same id under the same principal takes them, once
//! — and only for the call they were filed for: the tool, one of the server names the client
//! knows askgate by (`mcp.server_names`) and the digest of the input (`call::digest`); anything
//! else is `mismatched`, and an id only another principal's hook filed is `foreign` (A15). The
//! book is bounded (in total and per principal; a full book evicts the oldest attestation of
//! the principal holding the most, so no principal is shut out) and every attestation lives a
//! short while only. It decides nothing (the policies read `context.session.attestation`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use time::{Duration, OffsetDateTime};

use super::StoreError;
use crate::facts::{AgentKind, Mode, Session};

/// How long an attestation waits for its `tools/call`.
pub const TTL: Duration = Duration::seconds(60);
/// Attestations held at most, in total.
pub const MAX_TOTAL: usize = 4_096;
/// Attestations of one principal held at most.
pub const MAX_PER_PRINCIPAL: usize = 256;

/// What the hook attested for one tool use (stored in a fleet as `rows::AttestationV1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestation {
    /// The client's own session id (`session_id` of the hook input).
    pub session_id: String,
    pub mode: Mode,
    /// Set when a subagent made the call.
    pub agent_id: Option<String>,
    /// The call it was filed for: `mcp__<server>__<tool>` and the digest of its input.
    pub server: String,
    pub tool: String,
    pub input_digest: [u8; 32],
    pub received_at: OffsetDateTime,
}

/// The MCP call looking for its attestation.
pub struct AttestedCall<'a> {
    pub tool: &'a str,
    pub input_digest: [u8; 32],
    /// `mcp.server_names`.
    pub server_names: &'a [String],
}

/// What an MCP call found under its tool-use id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// This principal's hook attested this very call.
    Matching(Attestation),
    /// This principal's hook filed the id for another call (taken all the same: used once).
    Mismatched,
    /// Only another principal's hook filed the id: the hook posts with another token (A15).
    Foreign,
    /// Nothing was filed (or it expired).
    Missing,
}

impl Found {
    /// The session fact the policies read.
    pub fn fact(&self) -> crate::facts::Attestation {
        use crate::facts::Attestation as Fact;
        match self {
            Self::Matching(_) => Fact::Attested,
            Self::Mismatched => Fact::Mismatched,
            Self::Foreign => Fact::Foreign,
            Self::Missing => Fact::Unattested,
        }
    }
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
    /// How many principals filed each tool-use id (to tell `foreign` from `missing`).
    per_tool_use: HashMap<String, usize>,
}

fn decrement(counts: &mut HashMap<String, usize>, key: &str) {
    if let Some(count) = counts.get_mut(key) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            counts.remove(key);
        }
    }
}

impl Held {
    fn insert(&mut self, key: Key, attestation: Attestation) {
        *self.per_principal.entry(key.0.clone()).or_default() += 1;
        *self.per_tool_use.entry(key.1.clone()).or_default() += 1;
        self.order.push_back((key.clone(), attestation.received_at));
        self.by_key.insert(key, attestation);
    }

    fn remove(&mut self, key: &Key) -> Option<Attestation> {
        let removed = self.by_key.remove(key)?;
        decrement(&mut self.per_principal, &key.0);
        decrement(&mut self.per_tool_use, &key.1);
        Some(removed)
    }

    /// The oldest live attestation of `principal`.
    fn oldest_of(&self, principal: &str) -> Option<Key> {
        self.order
            .iter()
            .find(|(key, at)| {
                key.0 == principal && self.by_key.get(key).map(|a| a.received_at) == Some(*at)
            })
            .map(|(key, _)| key.clone())
    }

    /// The principal holding the most attestations (ties: the smallest name, so it is stable).
    fn largest_holder(&self) -> Option<String> {
        self.per_principal
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
            .map(|(principal, _)| principal.clone())
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

/// An attestation evicted to make room for another principal's (the store was full).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evicted {
    /// Whose attestation was dropped: the principal that held the most.
    pub principal: String,
}

/// The attestations waiting for their `tools/call`, wherever they are kept.
#[async_trait]
pub trait AttestationBook: Send + Sync {
    /// Files what the hook of `principal` attested for `tool_use_id` (see
    /// [`MemoryAttestations::attest`] for the bounds).
    async fn attest(
        &self,
        principal: &str,
        tool_use_id: &str,
        attestation: Attestation,
    ) -> Result<Option<Evicted>, StoreError>;
    /// What `principal`'s hook filed for `tool_use_id`, taken (see [`MemoryAttestations::take`]).
    async fn take(
        &self,
        principal: &str,
        tool_use_id: &str,
        call: &AttestedCall<'_>,
        now: OffsetDateTime,
    ) -> Result<Found, StoreError>;
}

/// Compares what was filed with the call that takes it.
pub fn found(attestation: Attestation, call: &AttestedCall<'_>) -> Found {
    let same = attestation.tool == call.tool
        && attestation.input_digest == call.input_digest
        && call.server_names.contains(&attestation.server);
    if same {
        Found::Matching(attestation)
    } else {
        Found::Mismatched
    }
}

/// The service's attestations; cheap to clone.
#[derive(Clone)]
pub struct Attestations(Arc<dyn AttestationBook>);

impl Default for Attestations {
    fn default() -> Self {
        Self(Arc::new(MemoryAttestations::default()))
    }
}

impl Attestations {
    pub fn new(book: Arc<dyn AttestationBook>) -> Self {
        Self(book)
    }

    pub async fn attest(
        &self,
        principal: &str,
        tool_use_id: &str,
        attestation: Attestation,
    ) -> Result<Option<Evicted>, StoreError> {
        self.0.attest(principal, tool_use_id, attestation).await
    }

    pub async fn take(
        &self,
        principal: &str,
        tool_use_id: &str,
        call: &AttestedCall<'_>,
        now: OffsetDateTime,
    ) -> Result<Found, StoreError> {
        self.0.take(principal, tool_use_id, call, now).await
    }
}

#[async_trait]
impl AttestationBook for MemoryAttestations {
    async fn attest(
        &self,
        principal: &str,
        tool_use_id: &str,
        attestation: Attestation,
    ) -> Result<Option<Evicted>, StoreError> {
        Ok(MemoryAttestations::attest(
            self,
            principal,
            tool_use_id,
            attestation,
        ))
    }

    async fn take(
        &self,
        principal: &str,
        tool_use_id: &str,
        call: &AttestedCall<'_>,
        now: OffsetDateTime,
    ) -> Result<Found, StoreError> {
        Ok(MemoryAttestations::take(
            self,
            principal,
            tool_use_id,
            call,
            now,
        ))
    }
}

/// The attestations of this process.
#[derive(Default)]
pub struct MemoryAttestations {
    held: Mutex<Held>,
}

impl MemoryAttestations {
    /// Files what the hook of `principal` attested for `tool_use_id`. A principal past its
    /// quota loses its own oldest attestation; a full store drops the oldest attestation of the
    /// principal holding the most (said in the answer, for the caller to log), so a new
    /// principal's attestation is always kept.
    pub fn attest(
        &self,
        principal: &str,
        tool_use_id: &str,
        attestation: Attestation,
    ) -> Option<Evicted> {
        let now = attestation.received_at;
        let mut held = self.lock();
        held.purge(|_, at| now - at >= TTL);
        held.compact();
        let key = (principal.to_string(), tool_use_id.to_string());
        held.remove(&key);
        if held.per_principal.get(principal).copied().unwrap_or(0) >= MAX_PER_PRINCIPAL {
            if let Some(oldest) = held.oldest_of(principal) {
                held.remove(&oldest);
            }
        }
        let mut evicted = None;
        if held.by_key.len() >= MAX_TOTAL {
            let victim = held
                .largest_holder()
                .and_then(|holder| held.oldest_of(&holder));
            if let Some(victim) = victim {
                held.remove(&victim);
                evicted = Some(Evicted {
                    principal: victim.0,
                });
            }
        }
        held.insert(key, attestation);
        evicted
    }

    /// What `principal`'s hook filed for `tool_use_id`, taken (used once) when it is there; an
    /// attestation filed for another tool, server name or input is taken too, as `Mismatched`.
    pub fn take(
        &self,
        principal: &str,
        tool_use_id: &str,
        call: &AttestedCall<'_>,
        now: OffsetDateTime,
    ) -> Found {
        let mut held = self.lock();
        held.purge(|_, at| now - at >= TTL);
        match held.remove(&(principal.to_string(), tool_use_id.to_string())) {
            Some(attestation) => found(attestation, call),
            None if held.per_tool_use.contains_key(tool_use_id) => Found::Foreign,
            None => Found::Missing,
        }
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
    use super::*;

    const NAMES: &[String] = &[];

    fn names() -> Vec<String> {
        vec!["askgate".to_string()]
    }

    fn attested(at: OffsetDateTime) -> Attestation {
        Attestation {
            session_id: "s1".into(),
            mode: Mode::Default,
            agent_id: None,
            server: "askgate".into(),
            tool: "ClaudeDesign".into(),
            input_digest: [7; 32],
            received_at: at,
        }
    }

    fn call<'a>(names: &'a [String], tool: &'a str, digest: u8) -> AttestedCall<'a> {
        AttestedCall {
            tool,
            input_digest: [digest; 32],
            server_names: names,
        }
    }

    fn matching(found: &Found) -> bool {
        matches!(found, Found::Matching(_))
    }

    #[test]
    fn an_attestation_is_taken_once_by_its_own_principal_only() {
        let store = MemoryAttestations::default();
        let now = OffsetDateTime::UNIX_EPOCH;
        let names = names();
        let design = call(&names, "ClaudeDesign", 7);
        assert_eq!(store.attest("alice", "toolu_1", attested(now)), None);
        assert_eq!(store.take("bob", "toolu_1", &design, now), Found::Foreign);
        assert!(matching(&store.take("alice", "toolu_1", &design, now)));
        assert_eq!(store.take("alice", "toolu_1", &design, now), Found::Missing);
    }

    #[test]
    fn concern_2_an_attestation_counts_only_for_its_tool_server_and_input() {
        let store = MemoryAttestations::default();
        let now = OffsetDateTime::UNIX_EPOCH;
        let names = names();
        for (id, other) in [
            ("t-tool", call(&names, "Projects", 7)),
            ("t-input", call(&names, "ClaudeDesign", 8)),
            ("t-server", call(NAMES, "ClaudeDesign", 7)),
        ] {
            store.attest("alice", id, attested(now));
            assert_eq!(
                store.take("alice", id, &other, now),
                Found::Mismatched,
                "{id}"
            );
            assert_eq!(store.take("alice", id, &other, now), Found::Missing, "{id}");
        }
    }

    #[test]
    fn an_attestation_expires_after_its_ttl() {
        let store = MemoryAttestations::default();
        let now = OffsetDateTime::UNIX_EPOCH;
        let names = names();
        store.attest("alice", "toolu_1", attested(now));
        let design = call(&names, "ClaudeDesign", 7);
        assert_eq!(
            store.take("alice", "toolu_1", &design, now + TTL),
            Found::Missing
        );
        assert!(store.is_empty());
    }

    #[test]
    fn concern_4_a_full_store_evicts_fairly_and_keeps_a_new_principals_attestation() {
        let store = MemoryAttestations::default();
        let now = OffsetDateTime::UNIX_EPOCH;
        let names = names();
        let design = call(&names, "ClaudeDesign", 7);
        for n in 0..=MAX_PER_PRINCIPAL {
            store.attest("alice", &format!("t{n}"), attested(now));
        }
        assert_eq!(store.len(), MAX_PER_PRINCIPAL);
        assert_eq!(store.take("alice", "t0", &design, now), Found::Missing);
        assert!(matching(&store.take(
            "alice",
            &format!("t{MAX_PER_PRINCIPAL}"),
            &design,
            now
        )));
        for p in 0..MAX_TOTAL / MAX_PER_PRINCIPAL {
            for n in 0..MAX_PER_PRINCIPAL {
                store.attest(&format!("p{p:02}"), &format!("t{n}"), attested(now));
            }
        }
        assert!(store.len() <= MAX_TOTAL);
        let evicted = store.attest("late", "t", attested(now));
        assert!(evicted.is_some(), "the store was full");
        assert_eq!(store.len(), MAX_TOTAL);
        assert!(matching(&store.take("late", "t", &design, now)));
    }
}
