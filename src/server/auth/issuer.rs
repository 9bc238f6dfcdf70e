//! server::auth::issuer: the `identity.issuers` configuration. Raw serde types as the file
//! writes them ([`RawIdentity`], [`RawIssuer`]) are validated into [`IdentityConfig`] before
//! anything starts. Strict by default: an issuer without an `audience`, an algorithm list with
//! `none` or an HMAC algorithm, or no role mapping refuses to load, naming the field. Fetches
//! nothing (keys are `jwks`) and verifies nothing (`jwt`).

use jsonwebtoken::Algorithm;
use serde::Deserialize;

use crate::server::config::ConfigError;

pub const DEFAULT_CLOCK_SKEW_SECONDS: u64 = 60;
pub const MAX_CLOCK_SKEW_SECONDS: u64 = 300;
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 8 * 1024;
/// The largest `max_token_bytes` accepted: a header line of this size is already unusual.
pub const MAX_MAX_TOKEN_BYTES: usize = 64 * 1024;
const DEFAULT_ALGORITHMS: [Algorithm; 2] = [Algorithm::RS256, Algorithm::ES256];

/// `identity` as written in the configuration file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawIdentity {
    #[serde(default)]
    pub issuers: Vec<RawIssuer>,
}

/// One entry of `identity.issuers` as written. Everything is optional here so a missing key
/// gets a message naming its place (`identity.issuers[1].audience`) rather than serde's.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawIssuer {
    pub issuer: Option<String>,
    pub jwks_uri: Option<String>,
    pub audience: Option<String>,
    pub algorithms: Option<Vec<String>>,
    pub clock_skew_seconds: Option<u64>,
    pub max_token_bytes: Option<usize>,
    pub groups_claim: Option<String>,
    pub email_claim: Option<String>,
    pub client_claim: Option<String>,
    #[serde(default)]
    pub agent_scopes: Vec<String>,
    #[serde(default)]
    pub agent_groups: Vec<String>,
    #[serde(default)]
    pub approver_scopes: Vec<String>,
    #[serde(default)]
    pub approver_groups: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentityConfig {
    pub issuers: Vec<IssuerConfig>,
}

/// Where an issuer's signing keys are published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeysLocation {
    /// `<issuer>/.well-known/openid-configuration`, whose `jwks_uri` names the key set.
    Discovery(String),
    /// A `jwks_uri` from the configuration.
    Jwks(String),
}

/// One validated issuer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerConfig {
    /// Compared exactly with a token's `iss`.
    pub issuer: String,
    pub keys: KeysLocation,
    /// A token's `aud` must contain it (RFC 8707: askgate's own resource URI).
    pub audience: String,
    pub algorithms: Vec<Algorithm>,
    pub clock_skew_seconds: i64,
    pub max_token_bytes: usize,
    pub claims: ClaimNames,
    pub roles: RoleMapping,
}

/// Which claims carry what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimNames {
    pub groups: String,
    pub email: String,
    /// `None`: `azp`, then `client_id`.
    pub client: Option<String>,
}

/// Which scopes and groups make a token an agent's or an approver's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleMapping {
    pub agent_scopes: Vec<String>,
    pub agent_groups: Vec<String>,
    pub approver_scopes: Vec<String>,
    pub approver_groups: Vec<String>,
}

impl IdentityConfig {
    pub fn validate(raw: RawIdentity) -> Result<Self, ConfigError> {
        let mut issuers: Vec<IssuerConfig> = Vec::with_capacity(raw.issuers.len());
        for (index, raw) in raw.issuers.into_iter().enumerate() {
            let place = format!("identity.issuers[{index}]");
            let issuer = IssuerConfig::validate(raw, &place)?;
            if issuers.iter().any(|seen| seen.issuer == issuer.issuer) {
                return Err(error(
                    &place,
                    "issuer",
                    format!("`{}` is configured twice", issuer.issuer),
                ));
            }
            issuers.push(issuer);
        }
        Ok(Self { issuers })
    }
}

impl IssuerConfig {
    fn validate(raw: RawIssuer, place: &str) -> Result<Self, ConfigError> {
        let issuer = raw
            .issuer
            .ok_or_else(|| error(place, "issuer", "is required".into()))?;
        check_url(&issuer).map_err(|why| error(place, "issuer", why))?;
        if issuer.contains('|') {
            // `iss|sub` is the principal's stable identity: the issuer may not hold the separator.
            return Err(error(place, "issuer", format!("`{issuer}` contains `|`")));
        }
        let keys = match raw.jwks_uri {
            Some(uri) => {
                check_url(&uri).map_err(|why| error(place, "jwks_uri", why))?;
                KeysLocation::Jwks(uri)
            }
            None => KeysLocation::Discovery(format!(
                "{}/.well-known/openid-configuration",
                issuer.trim_end_matches('/')
            )),
        };
        let audience = match raw.audience.map(|audience| audience.trim().to_string()) {
            Some(audience) if !audience.is_empty() => audience,
            _ => {
                return Err(error(
                    place,
                    "audience",
                    format!(
                        "is required for issuer `{issuer}` (askgate's resource URI): without it \
                         a token the IdP issued for any other service would be accepted"
                    ),
                ))
            }
        };
        Ok(Self {
            algorithms: algorithms(raw.algorithms, place)?,
            clock_skew_seconds: clock_skew(raw.clock_skew_seconds, place)?,
            max_token_bytes: max_token_bytes(raw.max_token_bytes, place)?,
            claims: ClaimNames {
                groups: claim_name(raw.groups_claim, "groups", place, "groups_claim")?,
                email: claim_name(raw.email_claim, "email", place, "email_claim")?,
                client: match raw.client_claim {
                    None => None,
                    some => Some(claim_name(some, "", place, "client_claim")?),
                },
            },
            roles: roles(
                raw.agent_scopes,
                raw.agent_groups,
                raw.approver_scopes,
                raw.approver_groups,
                place,
            )?,
            issuer,
            keys,
            audience,
        })
    }
}

fn error(place: &str, key: &str, message: String) -> ConfigError {
    ConfigError {
        field: format!("{place}.{key}"),
        message,
    }
}

/// https, or plain http to a loopback host (a test IdP, a sidecar).
pub(crate) fn check_url(text: &str) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|why| format!("`{text}` is not a URL: {why}"))?;
    let loopback = match url.host() {
        Some(url::Host::Domain(domain)) => domain == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "`{text}` must be an https URL (plain http only to a loopback host)"
        )),
    }
}

fn algorithms(raw: Option<Vec<String>>, place: &str) -> Result<Vec<Algorithm>, ConfigError> {
    let Some(names) = raw else {
        return Ok(DEFAULT_ALGORITHMS.to_vec());
    };
    if names.is_empty() {
        return Err(error(place, "algorithms", "is empty".into()));
    }
    names
        .iter()
        .map(|name| match name.parse::<Algorithm>() {
            Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) => Err(format!(
                "`{name}` is an HMAC algorithm: keys from a JWKS are public, never shared secrets"
            )),
            Ok(algorithm) => Ok(algorithm),
            Err(_) if name.eq_ignore_ascii_case("none") => {
                Err("`none` (an unsigned token) is never allowed".to_string())
            }
            Err(_) => Err(format!(
                "`{name}` is not one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA"
            )),
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| error(place, "algorithms", why))
}

fn clock_skew(raw: Option<u64>, place: &str) -> Result<i64, ConfigError> {
    let seconds = raw.unwrap_or(DEFAULT_CLOCK_SKEW_SECONDS);
    if seconds > MAX_CLOCK_SKEW_SECONDS {
        return Err(error(
            place,
            "clock_skew_seconds",
            format!("{seconds} is more than {MAX_CLOCK_SKEW_SECONDS}"),
        ));
    }
    i64::try_from(seconds).map_err(|_| error(place, "clock_skew_seconds", "is too large".into()))
}

fn max_token_bytes(raw: Option<usize>, place: &str) -> Result<usize, ConfigError> {
    let bytes = raw.unwrap_or(DEFAULT_MAX_TOKEN_BYTES);
    if !(256..=MAX_MAX_TOKEN_BYTES).contains(&bytes) {
        return Err(error(
            place,
            "max_token_bytes",
            format!("{bytes} is not between 256 and {MAX_MAX_TOKEN_BYTES}"),
        ));
    }
    Ok(bytes)
}

fn claim_name(
    raw: Option<String>,
    default: &str,
    place: &str,
    key: &str,
) -> Result<String, ConfigError> {
    let name = raw.unwrap_or_else(|| default.to_string());
    if name.trim().is_empty() {
        return Err(error(place, key, "is empty".into()));
    }
    Ok(name)
}

fn roles(
    agent_scopes: Vec<String>,
    agent_groups: Vec<String>,
    approver_scopes: Vec<String>,
    approver_groups: Vec<String>,
    place: &str,
) -> Result<RoleMapping, ConfigError> {
    let mapping = RoleMapping {
        agent_scopes,
        agent_groups,
        approver_scopes,
        approver_groups,
    };
    let both = |agent: &[String], approver: &[String]| {
        agent.iter().find(|name| approver.contains(name)).cloned()
    };
    if let Some(name) = both(&mapping.agent_scopes, &mapping.approver_scopes)
        .or_else(|| both(&mapping.agent_groups, &mapping.approver_groups))
    {
        return Err(error(
            place,
            "approver_scopes",
            format!(
                "`{name}` maps to both the agent and the approver role, which exclude each other"
            ),
        ));
    }
    if mapping == RoleMapping::default() {
        return Err(error(
            place,
            "agent_scopes",
            "no role mapping: set at least one of `agent_scopes`, `agent_groups`, \
             `approver_scopes`, `approver_groups`"
                .into(),
        ));
    }
    Ok(mapping)
}

#[cfg(test)]
mod tests;
