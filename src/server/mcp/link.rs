//! server::mcp::link: where a 2026-07-28 client is told to approve. Such a request has no
//! protocol session, so askgate cannot send `elicitation/create` while it holds the call;
//! instead an ask answers `input_required` with a URL elicitation for the approval's console
//! page and a `requestState` sealed (HMAC, rmcp's codec) with a per-process key, or in a fleet
//! with the fleet's key from the store (rotated daily; the previous key still opens, so any
//! replica opens a state another sealed, issue 32 §3), bound to the principal and a digest of
//! the call, expiring with the approval, and redeemed once per replica (server-side; the
//! approved call itself runs once, by the approval's state in the store). The client retries
//! with the echoed state; the retry holds the call until an approver decides. Fails closed: a
//! state that does not open, names another principal's or another call's approval, or was
//! redeemed already is refused. The elicitation's answer is never an approval (only the
//! approvals API decides).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, InputRequest, InputRequiredResult, JsonObject,
    RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// The key of askgate's one input request.
pub const INPUT_KEY: &str = "askgate_approval";

/// What the sealed state carries (signed, not secret: ids only).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LinkState {
    pub approval: String,
    pub decision: String,
}

/// Why a retry's `requestState` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("its `requestState` does not verify for this caller and this call (forged, altered, expired, or another call's)")]
    Unverified,
    #[error(
        "its `requestState` for approval `{0}` was already used: make the call again to ask again"
    )]
    Redeemed(String),
    #[error("askgate is answering {0} retries of approval links at once: try again later")]
    Full(usize),
}

pub struct ApprovalLinks {
    keys: LinkKeys,
    redeemed: Mutex<Redemptions>,
    /// At most this many redeemed ids are remembered (the open-approvals cap, and at least one
    /// more than the held-call cap, so the retries being held never fill it).
    bound: usize,
}

/// Redeemed approval ids. A retry holds its entry open while it is answered; once it has
/// answered (or its client went away) the entry only guards against a replay, and such entries
/// are the first forgotten when the table is full (P2): one agent's finished retries can never
/// refuse another agent's. Open entries are bounded by the held calls (`mcp.max_held`, per
/// principal `mcp.max_held_per_caller`): a retry that is not held closes its entry at once.
#[derive(Debug, Default)]
struct Redemptions {
    entries: HashMap<String, Redemption>,
    next: u64,
}

#[derive(Debug, Clone, Copy)]
struct Redemption {
    /// Until when it matters (its state's expiry).
    until: OffsetDateTime,
    /// A retry on it is still being answered.
    open: bool,
    /// Order of redemption (the oldest closed one is forgotten first).
    seq: u64,
}

impl Redemptions {
    /// Room for one more: the expired go, then (when still full) the oldest closed one.
    fn make_room(&mut self, now: OffsetDateTime, bound: usize) -> bool {
        self.entries.retain(|_, entry| entry.until > now);
        if self.entries.len() < bound {
            return true;
        }
        let oldest = self
            .entries
            .iter()
            .filter(|(_, entry)| !entry.open)
            .min_by_key(|(_, entry)| entry.seq)
            .map(|(id, _)| id.clone());
        oldest.is_some_and(|id| self.entries.remove(&id).is_some())
    }
}

/// A redeemed state's hold on its entry while the retry is answered. Dropped however the
/// retry ends (answered, refused, or its client gone), it closes the entry.
pub struct Redeemed<'a> {
    links: &'a ApprovalLinks,
    pub state: LinkState,
}

impl Drop for Redeemed<'_> {
    fn drop(&mut self) {
        let mut redeemed = self.links.lock();
        if let Some(entry) = redeemed.entries.get_mut(&self.state.approval) {
            entry.open = false;
        }
    }
}

/// Where the sealing keys come from.
enum LinkKeys {
    /// A random key of this process: states sealed elsewhere (or before a restart) do not open.
    Process(RequestStateCodec),
    /// The fleet's keys, newest first (`Fleet::link_keys`).
    Fleet(std::sync::Arc<crate::store::postgres::Fleet>),
}

impl LinkKeys {
    /// The codecs to open with, newest (the one to seal with) first.
    fn codecs(&self) -> Vec<std::borrow::Cow<'_, RequestStateCodec>> {
        match self {
            Self::Process(codec) => vec![std::borrow::Cow::Borrowed(codec)],
            Self::Fleet(fleet) => fleet
                .link_keys()
                .iter()
                .map(|key| std::borrow::Cow::Owned(RequestStateCodec::new_unchecked(key.clone())))
                .collect(),
        }
    }
}

impl ApprovalLinks {
    /// A fresh random key: states sealed by another process (or before a restart) do not open.
    pub fn new(bound: usize) -> Self {
        let key = crate::server::caller::random_token();
        Self::with_keys(
            LinkKeys::Process(RequestStateCodec::new_unchecked(key.into_bytes())),
            bound,
        )
    }

    /// The fleet's keys: any replica opens what another sealed.
    pub fn for_fleet(fleet: std::sync::Arc<crate::store::postgres::Fleet>, bound: usize) -> Self {
        Self::with_keys(LinkKeys::Fleet(fleet), bound)
    }

    fn with_keys(keys: LinkKeys, bound: usize) -> Self {
        Self {
            keys,
            redeemed: Mutex::new(Redemptions::default()),
            bound: bound.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Redemptions> {
        self.redeemed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The `input_required` answer for a held ask: open `url`, then retry with the state.
    pub fn offer(
        &self,
        state: &LinkState,
        principal: &str,
        digest: &[u8; 32],
        url: &str,
        ttl: Duration,
    ) -> Option<InputRequiredResult> {
        let context = associated(principal, digest);
        let options = SealOptions::new().associated_data(&context).ttl(ttl);
        let codecs = self.keys.codecs();
        let sealed = codecs.first()?.seal_json_with(state, &options).ok()?;
        let message = format!(
            "askgate is holding this call until a person approves it: approval `{}` is at {url}",
            state.approval
        );
        let elicitation = ElicitRequest::new(ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message,
            url: url.to_string(),
            elicitation_id: state.approval.clone(),
        });
        let requests = BTreeMap::from([(
            INPUT_KEY.to_string(),
            InputRequest::Elicitation(elicitation),
        )]);
        Some(InputRequiredResult::new(Some(requests), Some(sealed)))
    }

    /// Opens a retry's state for `principal` and this call, once. Its entry stays open while
    /// the returned hold lives.
    pub fn redeem(
        &self,
        sealed: &str,
        principal: &str,
        digest: &[u8; 32],
        now: OffsetDateTime,
        valid_until: impl Fn(&str) -> Option<OffsetDateTime>,
    ) -> Result<Redeemed<'_>, LinkError> {
        let context = associated(principal, digest);
        let state: LinkState = self
            .keys
            .codecs()
            .iter()
            .find_map(|codec| codec.open_json_with(sealed, &context).ok())
            .ok_or(LinkError::Unverified)?;
        let mut redeemed = self.lock();
        redeemed.entries.retain(|_, entry| entry.until > now);
        if redeemed.entries.contains_key(&state.approval) {
            return Err(LinkError::Redeemed(state.approval));
        }
        if !redeemed.make_room(now, self.bound) {
            return Err(LinkError::Full(self.bound));
        }
        let until = valid_until(&state.approval).unwrap_or(now + time::Duration::hours(1));
        let seq = redeemed.next;
        redeemed.next += 1;
        let entry = Redemption {
            until,
            open: true,
            seq,
        };
        redeemed.entries.insert(state.approval.clone(), entry);
        drop(redeemed);
        Ok(Redeemed { links: self, state })
    }
}

/// What a call is, for binding its state: the tool and its arguments as sent.
pub fn call_digest(tool: &str, arguments: Option<&JsonObject>) -> [u8; 32] {
    // Canonical (concern 6): a retry whose arguments carry the same keys in another order is
    // the same call.
    let arguments = serde_json::Value::Object(arguments.cloned().unwrap_or_default());
    crate::call::digest::call_digest(tool, &arguments)
}

fn associated(principal: &str, digest: &[u8; 32]) -> Vec<u8> {
    let mut context = Vec::with_capacity(principal.len() + 33);
    context.extend_from_slice(principal.as_bytes());
    context.push(0);
    context.extend_from_slice(digest);
    context
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: OffsetDateTime = time::macros::datetime!(2026-12-01 12:00 UTC);

    fn offered(links: &ApprovalLinks, principal: &str, digest: &[u8; 32]) -> String {
        let state = LinkState {
            approval: "ap_1".into(),
            decision: "d1".into(),
        };
        let url = "http://127.0.0.1:8080/console/approvals/ap_1";
        let result = links
            .offer(&state, principal, digest, url, Duration::from_secs(60))
            .unwrap();
        result.request_state.unwrap()
    }

    #[test]
    fn a_state_opens_once_for_its_principal_and_its_call_only() {
        let links = ApprovalLinks::new(16);
        let digest = call_digest("ClaudeDesign", None);
        let sealed = offered(&links, "agent-one", &digest);
        let other = call_digest("Projects", None);
        let later = |_: &str| Some(NOW + time::Duration::minutes(5));
        let refused = |sealed: &str, principal: &str, digest: &[u8; 32]| {
            links.redeem(sealed, principal, digest, NOW, later).err()
        };
        assert_eq!(
            refused(&sealed, "agent-two", &digest),
            Some(LinkError::Unverified)
        );
        assert_eq!(
            refused(&sealed, "agent-one", &other),
            Some(LinkError::Unverified)
        );
        let mut altered = sealed.clone();
        altered.push('x');
        assert_eq!(
            refused(&altered, "agent-one", &digest),
            Some(LinkError::Unverified)
        );
        let opened = links
            .redeem(&sealed, "agent-one", &digest, NOW, later)
            .unwrap();
        assert_eq!(opened.state.approval, "ap_1");
        assert_eq!(
            refused(&sealed, "agent-one", &digest),
            Some(LinkError::Redeemed("ap_1".into()))
        );
        drop(opened);
        assert_eq!(
            refused(&sealed, "agent-one", &digest),
            Some(LinkError::Redeemed("ap_1".into())),
            "an answered retry still cannot be replayed while the table has room"
        );
        // Another process's key opens nothing.
        let restarted = ApprovalLinks::new(16);
        assert_eq!(
            restarted
                .redeem(&sealed, "agent-one", &digest, NOW, later)
                .err(),
            Some(LinkError::Unverified)
        );
    }

    fn sealed_for(links: &ApprovalLinks, approval: &str, principal: &str) -> String {
        let state = LinkState {
            approval: approval.into(),
            decision: "d".into(),
        };
        let digest = call_digest("ClaudeDesign", None);
        let url = format!("http://127.0.0.1:8080/console/approvals/{approval}");
        let offered = links.offer(&state, principal, &digest, &url, Duration::from_secs(300));
        offered.unwrap().request_state.unwrap()
    }

    /// P2: one agent redeems (and answers, or drops) as many states as the table holds; another
    /// agent's retry is still taken, the oldest answered entry making room. Only retries being
    /// answered at once can fill the table.
    #[test]
    fn p2_one_agents_answered_retries_never_refuse_another_agents_retry() {
        let links = ApprovalLinks::new(4);
        let digest = call_digest("ClaudeDesign", None);
        let later = |_: &str| Some(NOW + time::Duration::minutes(5));
        for n in 0..4 {
            let sealed = sealed_for(&links, &format!("ap_two_{n}"), "agent-two");
            let redeemed = links.redeem(&sealed, "agent-two", &digest, NOW, later);
            assert!(redeemed.is_ok(), "redemption {n}");
        }
        let sealed = sealed_for(&links, "ap_one", "agent-one");
        let opened = links.redeem(&sealed, "agent-one", &digest, NOW, later);
        assert_eq!(opened.unwrap().state.approval, "ap_one");
        // Four retries held open at once fill it; the next waits for one of them to answer.
        let held: Vec<Redeemed<'_>> = (0..4)
            .map(|n| {
                let sealed = sealed_for(&links, &format!("ap_held_{n}"), "agent-two");
                links
                    .redeem(&sealed, "agent-two", &digest, NOW, later)
                    .unwrap()
            })
            .collect();
        let sealed = sealed_for(&links, "ap_one_more", "agent-one");
        assert_eq!(
            links
                .redeem(&sealed, "agent-one", &digest, NOW, later)
                .err(),
            Some(LinkError::Full(4))
        );
        drop(held);
        assert!(links
            .redeem(&sealed, "agent-one", &digest, NOW, later)
            .is_ok());
    }
}
