//! server::auth::claims: a verified token's claims as askgate's caller — [`VerifiedToken`]
//! (issuer-namespaced subject, audience, scopes, groups, email, client, the RFC 8693 `act`
//! chain) and the role the issuer's mapping gives it. Runs only on claims whose signature and
//! registered claims `jwt` already checked. Fails closed on a group overage (Entra).

use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::error::TokenError;
use super::issuer::IssuerConfig;
use crate::server::caller::Role;

/// The deepest `act` chain accepted.
pub const MAX_ACTOR_DEPTH: usize = 8;

/// Who a verified token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedToken {
    pub issuer: String,
    pub subject: String,
    pub audience: Vec<String>,
    pub expires_at: OffsetDateTime,
    pub scopes: Vec<String>,
    pub groups: Vec<String>,
    pub email: Option<String>,
    /// The OAuth client the token was issued to (`azp`, else `client_id`, or the configured claim).
    pub client: Option<String>,
    /// The RFC 8693 `act` chain: the party acting for the subject first, then who it acts for
    /// in turn (`act.act`), outermost first.
    pub act: Vec<Actor>,
    /// From the issuer's role mapping; roles exclude each other.
    pub role: Role,
}

/// One acting party of an `act` chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub issuer: Option<String>,
    pub subject: String,
    pub client: Option<String>,
}

impl VerifiedToken {
    /// The stable identity `iss|sub`: the same `sub` from two issuers is two people. The
    /// issuer cannot hold `|` (the configuration refuses it), so the split is unambiguous.
    pub fn principal(&self) -> String {
        format!("{}|{}", self.issuer, self.subject)
    }

    /// The `act` chain as principals, the party acting now first: each actor's `iss|sub`, in
    /// the token's issuer's namespace when the actor names no issuer (RFC 8693 §4.1).
    pub fn actors(&self) -> Vec<String> {
        self.act
            .iter()
            .map(|actor| {
                let issuer = actor.issuer.as_deref().unwrap_or(&self.issuer);
                format!("{issuer}|{}", actor.subject)
            })
            .collect()
    }
}

/// The caller of verified `claims` (`exp` already read as `expires_at`).
pub fn map(
    claims: &Map<String, Value>,
    config: &IssuerConfig,
    expires_at: OffsetDateTime,
) -> Result<VerifiedToken, TokenError> {
    let scopes = scopes(claims)?;
    let groups = groups(claims, &config.claims.groups)?;
    let role = role(config, &scopes, &groups)?;
    Ok(VerifiedToken {
        issuer: config.issuer.clone(),
        subject: string(claims, "sub")?.unwrap_or_default(),
        audience: strings(claims, "aud")?,
        expires_at,
        scopes,
        groups,
        email: string(claims, &config.claims.email)?,
        client: match &config.claims.client {
            Some(name) => string(claims, name)?,
            None => string(claims, "azp")?.or(string(claims, "client_id")?),
        },
        act: actors(claims.get("act"))?,
        role,
    })
}

fn string(claims: &Map<String, Value>, name: &str) -> Result<Option<String>, TokenError> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(TokenError::BadClaim(name.into())),
    }
}

/// A claim holding one string or an array of strings.
fn strings(claims: &Map<String, Value>, name: &str) -> Result<Vec<String>, TokenError> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(one)) => Ok(vec![one.clone()]),
        Some(Value::Array(many)) => many
            .iter()
            .map(|item| item.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| TokenError::BadClaim(name.into())),
        Some(_) => Err(TokenError::BadClaim(name.into())),
    }
}

/// `scope` (RFC 9068, space-separated), else `scp` (Entra: a string; Okta: an array).
fn scopes(claims: &Map<String, Value>) -> Result<Vec<String>, TokenError> {
    let name = if claims.contains_key("scope") {
        "scope"
    } else {
        "scp"
    };
    Ok(strings(claims, name)?
        .iter()
        .flat_map(|scope| scope.split_whitespace())
        .map(str::to_string)
        .collect())
}

/// The groups claim. Entra leaves it out when a user is in too many groups and points to
/// Graph instead (`_claim_names`, or `hasgroups` in implicit flows): the groups are then
/// unknown, and a role mapping reading them would be silently wrong, so it is an error.
fn groups(claims: &Map<String, Value>, name: &str) -> Result<Vec<String>, TokenError> {
    if !claims.contains_key(name) {
        let overage = claims
            .get("_claim_names")
            .and_then(Value::as_object)
            .is_some_and(|names| names.contains_key(name))
            || claims.get("hasgroups") == Some(&Value::Bool(true));
        if overage {
            return Err(TokenError::GroupOverage(name.to_string()));
        }
    }
    strings(claims, name)
}

fn actors(mut act: Option<&Value>) -> Result<Vec<Actor>, TokenError> {
    let mut chain = Vec::new();
    while let Some(value) = act {
        if chain.len() == MAX_ACTOR_DEPTH {
            return Err(TokenError::ActorChainTooDeep(MAX_ACTOR_DEPTH));
        }
        let object = value
            .as_object()
            .ok_or_else(|| TokenError::BadClaim("act".into()))?;
        chain.push(Actor {
            issuer: string(object, "iss")?,
            subject: string(object, "sub")?
                .filter(|sub| !sub.is_empty())
                .ok_or_else(|| TokenError::BadClaim("act.sub".into()))?,
            client: string(object, "client_id")?,
        });
        act = object.get("act");
    }
    Ok(chain)
}

fn role(config: &IssuerConfig, scopes: &[String], groups: &[String]) -> Result<Role, TokenError> {
    let mapping = &config.roles;
    let any = |wanted: &[String], held: &[String]| held.iter().any(|item| wanted.contains(item));
    let agent = any(&mapping.agent_scopes, scopes) || any(&mapping.agent_groups, groups);
    let approver = any(&mapping.approver_scopes, scopes) || any(&mapping.approver_groups, groups);
    match (agent, approver) {
        (true, false) => Ok(Role::Agent),
        (false, true) => Ok(Role::Approver),
        (true, true) => Err(TokenError::BothRoles),
        (false, false) => Err(TokenError::NoRole),
    }
}

#[cfg(test)]
mod tests;
