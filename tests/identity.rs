//! Tests of the JWT verifier (`server::auth`, issue 34) against a real OpenID provider on
//! loopback (`support::oidc`): tokens it issues by client credentials, tokens its current key
//! signs with chosen claims, and tokens an attacker crafts. Each test starts its own provider.

mod console;
mod console_browser;
mod intake;
mod issuers;
mod refused;
mod rotation;
mod stepup;
mod verified;

use askgate::server::auth::{IdentityConfig, Issuers, RawIdentity};
use base64::Engine;
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::support::oidc::Op;

/// askgate's resource URI, the audience its tokens must carry.
pub const RESOURCE: &str = "https://askgate.test/mcp";
/// Another service's resource URI at the same provider.
pub const OTHER_RESOURCE: &str = "https://other.test/api";

/// The console's callback (nothing listens: the flow stops at the redirect).
pub const CALLBACK: &str = "http://127.0.0.1:9/console/callback";

/// The provider's clients: an agent in the design group, an approver (by group), a delegate
/// whose tokens name a user as subject and an agent chain in `act`, and a code-flow client
/// through which `alice` (an approver by group) signs in.
pub fn op_config() -> Value {
    json!({
        "clients": [
            {"client_id": "agent", "client_secret": "agent-secret",
             "claims": {"groups": ["design"], "email": "ci@acme.test"}},
            {"client_id": "approver-bot", "client_secret": "approver-secret",
             "claims": {"groups": ["askgate-approvers"]}},
            {"client_id": "delegate", "client_secret": "delegate-secret",
             "claims": {"sub": "alice", "email": "alice@acme.test",
                        "act": {"sub": "agent-7", "client_id": "delegate",
                                "act": {"sub": "orchestrator", "iss": "https://other-idp.test"}}}},
            {"client_id": "console", "client_secret": "console-secret",
             "redirect_uris": [CALLBACK]}
        ],
        "accounts": {"alice": {"groups": ["askgate-approvers"], "email": "alice@acme.test"}},
        "resources": {
            RESOURCE: {"scope": "askgate:agent askgate:read askgate:write"},
            OTHER_RESOURCE: {"scope": "other:all"}
        },
        "jwks_max_age": 120
    })
}

/// The `identity` section trusting `ops`, with `extra` keys merged into each issuer.
pub fn identity(ops: &[&Op], extra: Value) -> IdentityConfig {
    let issuers: Vec<Value> = ops
        .iter()
        .map(|op| {
            let mut issuer = json!({
                "issuer": op.issuer,
                "audience": RESOURCE,
                "agent_scopes": ["askgate:agent"],
                "approver_groups": ["askgate-approvers"],
            });
            for (key, value) in extra.as_object().unwrap() {
                issuer[key] = value.clone();
            }
            issuer
        })
        .collect();
    let raw: RawIdentity = serde_json::from_value(json!({ "issuers": issuers })).unwrap();
    IdentityConfig::validate(raw).unwrap()
}

pub fn issuers(ops: &[&Op]) -> Issuers {
    Issuers::new(&identity(ops, json!({})), reqwest::Client::new(), 1_000)
}

pub async fn agent_token(op: &Op) -> String {
    op.client_credentials("agent", "agent-secret", RESOURCE, "askgate:agent")
        .await
}

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// Claims of a valid agent token from `op`, for the provider to sign (`Op::mint`).
pub fn claims(op: &Op) -> Value {
    let now = now().unix_timestamp();
    json!({
        "iss": op.issuer, "sub": "agent", "aud": RESOURCE, "client_id": "agent",
        "scope": "askgate:agent", "iat": now, "exp": now + 600,
    })
}

/// A compact JWS from raw parts, as an attacker would write it.
pub fn compact(header: &Value, claims: &Value, signature: &[u8]) -> String {
    let encode = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    format!(
        "{}.{}.{}",
        encode(header.to_string().as_bytes()),
        encode(claims.to_string().as_bytes()),
        encode(signature)
    )
}

/// The `kid` in a token's header.
pub fn kid_of(token: &str) -> String {
    let header = token.split('.').next().unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .unwrap();
    serde_json::from_slice::<Value>(&bytes).unwrap()["kid"]
        .as_str()
        .unwrap()
        .to_string()
}
