//! server::mcp::link: where a 2026-07-28 client is told to approve. Such a request has no
//! protocol session, so askgate cannot send `elicitation/create` while it holds the call;
//! instead an ask answers `input_required` with a URL elicitation for the approval's console
//! page and a `requestState` sealed with a per-process key (HMAC, rmcp's codec), bound to the
//! principal and a digest of the call, expiring with the approval, and redeemed once
//! (server-side). The client retries with the echoed state; the retry holds the call until an
//! approver decides. Fails closed: a state that does not open, names another principal's or
//! another call's approval, or was redeemed already is refused. The elicitation's answer is
//! never an approval (only the approvals API decides).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, InputRequest, InputRequiredResult, JsonObject,
    RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
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
    #[error("askgate already tracks {0} approval links: try again later")]
    Full(usize),
}

pub struct ApprovalLinks {
    codec: RequestStateCodec,
    /// Redeemed approval ids and until when they matter (their state's expiry).
    redeemed: Mutex<HashMap<String, OffsetDateTime>>,
    /// At most this many redeemed ids are remembered (the open-approvals cap).
    bound: usize,
}

impl ApprovalLinks {
    /// A fresh random key: states sealed by another process (or before a restart) do not open.
    pub fn new(bound: usize) -> Self {
        let key = crate::server::caller::random_token();
        Self {
            codec: RequestStateCodec::new_unchecked(key.into_bytes()),
            redeemed: Mutex::new(HashMap::new()),
            bound,
        }
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
        let sealed = self.codec.seal_json_with(state, &options).ok()?;
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

    /// Opens a retry's state for `principal` and this call, once.
    pub fn redeem(
        &self,
        sealed: &str,
        principal: &str,
        digest: &[u8; 32],
        now: OffsetDateTime,
        valid_until: impl Fn(&str) -> Option<OffsetDateTime>,
    ) -> Result<LinkState, LinkError> {
        let context = associated(principal, digest);
        let state: LinkState = self
            .codec
            .open_json_with(sealed, &context)
            .map_err(|_| LinkError::Unverified)?;
        let mut redeemed = self.redeemed.lock().unwrap_or_else(PoisonError::into_inner);
        redeemed.retain(|_, until| *until > now);
        if redeemed.contains_key(&state.approval) {
            return Err(LinkError::Redeemed(state.approval));
        }
        if redeemed.len() >= self.bound {
            return Err(LinkError::Full(self.bound));
        }
        let until = valid_until(&state.approval).unwrap_or(now + time::Duration::hours(1));
        redeemed.insert(state.approval.clone(), until);
        Ok(state)
    }
}

/// What a call is, for binding its state: the tool and its arguments as sent.
pub fn call_digest(tool: &str, arguments: Option<&JsonObject>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(tool.as_bytes());
    hasher.update([0]);
    if let Some(arguments) = arguments {
        hasher.update(
            serde_json::Value::Object(arguments.clone())
                .to_string()
                .as_bytes(),
        );
    }
    hasher.finalize().into()
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
    #![allow(clippy::unwrap_used, clippy::expect_used)]
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
        assert_eq!(
            links.redeem(&sealed, "agent-two", &digest, NOW, later),
            Err(LinkError::Unverified)
        );
        assert_eq!(
            links.redeem(&sealed, "agent-one", &other, NOW, later),
            Err(LinkError::Unverified)
        );
        let mut altered = sealed.clone();
        altered.push('x');
        assert_eq!(
            links.redeem(&altered, "agent-one", &digest, NOW, later),
            Err(LinkError::Unverified)
        );
        let opened = links
            .redeem(&sealed, "agent-one", &digest, NOW, later)
            .unwrap();
        assert_eq!(opened.approval, "ap_1");
        assert_eq!(
            links.redeem(&sealed, "agent-one", &digest, NOW, later),
            Err(LinkError::Redeemed("ap_1".into()))
        );
        // Another process's key opens nothing.
        let restarted = ApprovalLinks::new(16);
        assert_eq!(
            restarted.redeem(&sealed, "agent-one", &digest, NOW, later),
            Err(LinkError::Unverified)
        );
    }
}
