//! server::auth::error: [`TokenError`], every reason a bearer JWT is refused. Messages name the
//! claim or key that failed and never contain the token; values taken from an unverified
//! token (`iss`, `kid`, `alg`) are cut short and stripped of control characters.

use time::OffsetDateTime;

/// Why a token was refused. One enum for the whole verifier (key lookup included), so the
/// authentication layer maps it to one answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token is {size} bytes, more than the {limit} allowed")]
    TooLarge { size: usize, limit: usize },
    #[error("the token is not a signed JWT: {0}")]
    Malformed(&'static str),
    #[error("the token's issuer `{0}` is not a configured issuer")]
    UnknownIssuer(String),
    #[error("the token's header has no `kid`")]
    MissingKeyId,
    #[error("the algorithm `{alg}` is not allowed for issuer `{issuer}`")]
    AlgorithmNotAllowed { alg: String, issuer: String },
    #[error("the token names critical header extensions (`crit`), which are not supported")]
    CriticalHeader,
    #[error("issuer `{issuer}` publishes no key `{kid}`")]
    UnknownKey { kid: String, issuer: String },
    #[error("key `{kid}` of issuer `{issuer}` cannot verify `{alg}`: {why}")]
    KeyMismatch {
        kid: String,
        issuer: String,
        alg: String,
        why: &'static str,
    },
    #[error("the keys of issuer `{issuer}` are unavailable: {reason}")]
    KeysUnavailable { issuer: String, reason: String },
    #[error("the token's signature does not verify")]
    BadSignature,
    #[error("the token has no `{0}` claim")]
    MissingClaim(&'static str),
    #[error("the token's `{0}` claim is malformed")]
    BadClaim(String),
    #[error("the token's issuer `{found}` is not `{expected}`")]
    WrongIssuer { expected: String, found: String },
    #[error("the token is not for this service: its audience does not include `{expected}`")]
    WrongAudience { expected: String },
    #[error("the token expired at {0}")]
    Expired(OffsetDateTime),
    #[error("the token is not valid before {0}")]
    NotYetValid(OffsetDateTime),
    #[error("the token was issued in the future ({0})")]
    IssuedInFuture(OffsetDateTime),
    #[error(
        "the token's `{0}` claim was replaced by an overage reference (`_claim_names`): \
         the IdP left the caller's groups out of the token, so its roles cannot be known"
    )]
    GroupOverage(String),
    #[error("the token's `act` chain is deeper than {0}")]
    ActorChainTooDeep(usize),
    #[error("the token grants neither the agent nor the approver role")]
    NoRole,
    #[error("the token grants both the agent and the approver role, which exclude each other")]
    BothRoles,
}

/// A value taken from an unverified token, fit for an error message: at most 80 characters,
/// control characters dropped.
pub(crate) fn shown(value: &str) -> String {
    const LIMIT: usize = 80;
    let mut out: String = value
        .chars()
        .filter(|c| !c.is_control())
        .take(LIMIT)
        .collect();
    if value.chars().count() > LIMIT {
        out.push('…');
    }
    out
}
