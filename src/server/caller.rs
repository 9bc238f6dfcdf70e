//! server::caller: who is calling — a bearer token from the configuration or a JWT access
//! token from the organisation's IdP (the one intake, [`Callers::authenticate`]), mapped to a
//! role, a principal and what the caller may claim about its session (the one place that computes
//! it: [`Caller::configured`]; every front door stamps it on the session it decides with,
//! [`Caller::stating`]). Roles are exclusive (SPEC §11): an agent token can never approve,
//! consent, revoke or reload, and an approver token can never ask (so nobody approves their own
//! call). Also the random tokens askgate gives out itself (console sessions, CSRF, link keys).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::auth::{Issuers, ProtectedResource, VerifiedToken};

use super::config::{RawMayClaim, RawSessionDefaults};
use super::error::ApiError;
use crate::facts::caller::{ALL_AGENTS, ALL_MODES};
use crate::facts::{AgentKind, CallerFacts, Mode, Session};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Agent,
    Approver,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub role: Role,
    pub principal: String,
    /// The session facts of this caller's MCP sessions (the caller's configuration, never the
    /// model's).
    pub defaults: SessionDefaults,
    /// What this caller may state about its session, on every front door.
    pub claims: CallerFacts,
    /// The person's attributes the approving policies read (`callers[].groups`, `email`).
    pub person: Person,
}

/// What askgate knows of the person behind a principal, for the approving policies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Person {
    pub groups: Vec<String>,
    pub email: String,
}

impl Caller {
    /// A configured caller: its MCP session facts from `callers[].session` (keys left out take
    /// the `Session` defaults) and what it may claim — `callers[].may_claim` when given, else
    /// derived from `session`: a configured `mode` holds the caller to that mode and a
    /// configured `agent: subagent` to subagent; otherwise every mode but one that lifts asks
    /// and both agent kinds; bypassPermissions only with `bypass_available` (or the configured
    /// mode). A `may_claim` that leaves out the caller's own MCP facts is refused, naming the
    /// keys.
    pub fn configured(
        role: Role,
        principal: String,
        session: RawSessionDefaults,
        may_claim: Option<RawMayClaim>,
    ) -> Result<Self, (&'static str, String)> {
        let base = SessionDefaults::default();
        let defaults = SessionDefaults {
            agent: session.agent.unwrap_or(base.agent),
            mode: session.mode.unwrap_or(base.mode),
            interactive: session.interactive.unwrap_or(base.interactive),
            permission_hook: session.permission_hook.unwrap_or(base.permission_hook),
            bypass_available: session.bypass_available.unwrap_or(base.bypass_available),
        };
        let bypass = defaults.bypass_available || defaults.mode == Mode::BypassPermissions;
        let derived_modes: BTreeSet<Mode> = match session.mode {
            Some(mode) => [mode].into_iter().collect(),
            None => ALL_MODES
                .into_iter()
                .filter(|mode| *mode != Mode::BypassPermissions)
                .collect(),
        };
        let derived_agents: BTreeSet<AgentKind> = match session.agent {
            Some(AgentKind::Subagent) => [AgentKind::Subagent].into_iter().collect(),
            _ => ALL_AGENTS.into_iter().collect(),
        };
        let may_claim = may_claim.unwrap_or_default();
        let mut modes: BTreeSet<Mode> = match may_claim.modes {
            Some(modes) => modes.into_iter().collect(),
            None => derived_modes,
        };
        if bypass {
            modes.insert(Mode::BypassPermissions);
        }
        let agents: BTreeSet<AgentKind> = match may_claim.agents {
            Some(agents) => agents.into_iter().collect(),
            None => derived_agents,
        };
        if !modes.contains(&defaults.mode) {
            return Err((
                "may_claim.modes",
                format!(
                    "leaves out `{}`, this caller's own session.mode",
                    defaults.mode.as_str()
                ),
            ));
        }
        if !agents.contains(&defaults.agent) {
            return Err((
                "may_claim.agents",
                format!(
                    "leaves out `{}`, this caller's own session.agent",
                    defaults.agent.as_str()
                ),
            ));
        }
        Ok(Self {
            role,
            claims: CallerFacts {
                principal: principal.clone(),
                modes,
                agents,
                ..CallerFacts::default()
            },
            principal,
            defaults,
            person: Person::default(),
        })
    }

    /// This caller with the OAuth scopes its calls present (`callers[].scopes` of a static
    /// token; an IdP token's are its own).
    pub fn with_scopes(self, scopes: &[String]) -> Self {
        let claims = CallerFacts {
            scopes: scopes.iter().cloned().collect(),
            ..self.claims
        };
        Self { claims, ..self }
    }

    /// This caller with the person's attributes (also facts of its calls).
    pub fn with_person(self, person: Person) -> Self {
        let claims = CallerFacts {
            groups: person.groups.iter().cloned().collect(),
            email: person.email.clone(),
            ..self.claims
        };
        Self {
            person,
            claims,
            ..self
        }
    }

    /// The session a call is decided with: what the caller states, beside who the caller is and
    /// what it may claim. Every front door goes through here.
    pub fn stating(&self, session: Session) -> Session {
        Session {
            caller: self.claims.clone(),
            ..session
        }
    }

    /// The caller a verified JWT names (issue 34 §1, §3): principal `iss|sub` (the same `sub`
    /// from two issuers is two people), the role the issuer's mapping gave it, the person's
    /// groups and email from the token's claims, and the session an unconfigured caller may
    /// claim (every mode but one that lifts asks, either agent kind).
    pub fn verified(token: &VerifiedToken) -> Self {
        let principal = token.principal();
        let person = Person {
            groups: token.groups.clone(),
            email: token.email.clone().unwrap_or_default(),
        };
        match token.role {
            Role::Approver => Self::approver(principal).with_person(person),
            Role::Agent => {
                let base = SessionDefaults::default();
                let modes: BTreeSet<Mode> = ALL_MODES
                    .into_iter()
                    .filter(|mode| *mode != Mode::BypassPermissions)
                    .collect();
                Self {
                    role: Role::Agent,
                    claims: CallerFacts {
                        principal: principal.clone(),
                        modes,
                        agents: ALL_AGENTS.into_iter().collect(),
                        client: token.client.clone().unwrap_or_default(),
                        actors: token.actors(),
                        scopes: token.scopes.iter().cloned().collect(),
                        ..CallerFacts::default()
                    },
                    principal,
                    defaults: base,
                    person: Person::default(),
                }
                .with_person(person)
            }
        }
    }

    /// An approver known only by name (a console session): it asks for nothing, so it may
    /// claim nothing.
    pub fn approver(principal: String) -> Self {
        Self {
            role: Role::Approver,
            claims: CallerFacts {
                principal: principal.clone(),
                ..CallerFacts::default()
            },
            principal,
            defaults: SessionDefaults::default(),
            person: Person::default(),
        }
    }
}

/// Per-caller session facts from the configuration file (`callers[].session`), used where the
/// client does not send them itself (MCP). Missing keys take the `Session` defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionDefaults {
    pub agent: crate::facts::AgentKind,
    pub mode: crate::facts::Mode,
    pub interactive: bool,
    pub permission_hook: bool,
    /// bypassPermissions may be entered by this caller's client: with it (or the configured
    /// `mode` bypassPermissions) the caller may claim bypass on any front door; without it a
    /// claim of bypass is denied (`gates.caller-bypass-not-allowed`): the agent token lives in
    /// the client's environment, so whatever can read it can state any session.
    pub bypass_available: bool,
}

impl Default for SessionDefaults {
    fn default() -> Self {
        let session = crate::facts::Session::default();
        Self {
            agent: session.agent,
            mode: session.mode,
            interactive: session.interactive,
            permission_hook: session.permission_hook,
            bypass_available: session.bypass_available,
        }
    }
}

/// The request's `Authorization: Bearer` token.
fn bearer(headers: &HeaderMap) -> Result<&str, ApiError> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .ok_or(ApiError::Unauthenticated("missing bearer token"))?;
    let token = header
        .strip_prefix("Bearer ")
        .ok_or(ApiError::Unauthenticated(
            "the authorization header is not a bearer token",
        ))?;
    Ok(token.trim())
}

/// The request carries exactly `expected` as its bearer token (compared in constant time);
/// used by endpoints guarded by a token of their own (`metrics_token`).
pub fn require_token(headers: &HeaderMap, expected: &str) -> Result<(), ApiError> {
    use subtle::ConstantTimeEq;
    let token = bearer(headers)?;
    if bool::from(token.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::Unauthenticated("unknown bearer token"))
    }
}

/// The one intake of every door (issue 34 §5): the configured bearer tokens, then the
/// organisation's JWT access tokens (`identity.issuers`, verified by `server::auth`). Tokens
/// are compared whole and never logged.
#[derive(Debug, Clone, Default)]
pub struct Callers {
    by_token: HashMap<String, Caller>,
    issuers: Option<Arc<Issuers>>,
    resource: Option<Arc<ProtectedResource>>,
}

impl Callers {
    pub fn new(entries: impl IntoIterator<Item = (String, Caller)>) -> Self {
        Self {
            by_token: entries.into_iter().collect(),
            issuers: None,
            resource: None,
        }
    }

    /// These callers, also taking the JWT access tokens `issuers` verifies for `resource`.
    pub fn with_issuers(self, issuers: Arc<Issuers>, resource: Option<ProtectedResource>) -> Self {
        Self {
            issuers: Some(issuers),
            resource: resource.map(Arc::new),
            ..self
        }
    }

    /// The IdPs' verifier, when issuers are configured (the console's sign-in verifies ID
    /// tokens with it).
    pub fn issuers(&self) -> Option<&Issuers> {
        self.issuers.as_deref()
    }

    /// askgate as an OAuth protected resource, when issuers are configured.
    pub fn resource(&self) -> Option<&ProtectedResource> {
        self.resource.as_deref()
    }

    /// The caller a token names (the console's sign-in form).
    pub fn by_token(&self, token: &str) -> Option<Caller> {
        self.by_token.get(token).cloned()
    }

    /// What askgate knows of the person `principal` as an approver: the groups of every
    /// approver token configured with that principal, and the first email given.
    pub fn person(&self, principal: &str) -> Person {
        let mut person = Person::default();
        let mut approvers: Vec<&Caller> = self
            .by_token
            .values()
            .filter(|caller| caller.role == Role::Approver && caller.principal == principal)
            .collect();
        approvers.sort_by(|a, b| a.person.email.cmp(&b.person.email));
        for caller in approvers {
            for group in &caller.person.groups {
                if !person.groups.contains(group) {
                    person.groups.push(group.clone());
                }
            }
            if person.email.is_empty() {
                person.email.clone_from(&caller.person.email);
            }
        }
        person.groups.sort();
        person
    }

    /// The caller behind the request's `Authorization: Bearer` header at `now`: a configured
    /// token, else (when issuers are configured) a JWT access token they verify. A JWT that
    /// fails is 401 with the verifier's reason (which never holds the token).
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        now: OffsetDateTime,
    ) -> Result<Caller, ApiError> {
        let token = bearer(headers)?;
        if let Some(caller) = self.by_token.get(token) {
            return Ok(caller.clone());
        }
        let Some(issuers) = &self.issuers else {
            return Err(ApiError::Unauthenticated("unknown bearer token"));
        };
        let verified = issuers
            .verify(token, now)
            .await
            .map_err(|error| ApiError::BadToken(error.to_string()))?;
        Ok(Caller::verified(&verified))
    }

    /// Whether JWT access tokens are taken (`identity.issuers` is configured).
    pub fn takes_jwts(&self) -> bool {
        self.issuers
            .as_ref()
            .is_some_and(|issuers| !issuers.is_empty())
    }

    /// The caller, if its role is `role`; the other role is 403.
    pub async fn require(
        &self,
        headers: &HeaderMap,
        role: Role,
        now: OffsetDateTime,
    ) -> Result<Caller, ApiError> {
        let caller = self.authenticate(headers, now).await?;
        match (role, caller.role) {
            (Role::Agent, Role::Agent) | (Role::Approver, Role::Approver) => Ok(caller),
            (Role::Approver, Role::Agent) => {
                Err(ApiError::Forbidden("only an approver can do this"))
            }
            (Role::Agent, Role::Approver) => Err(ApiError::Forbidden(
                "an approver token cannot ask for calls: use an agent token",
            )),
        }
    }
}

/// 256 random bits from the operating system, hex-encoded.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness means no safe token: a uuid v4 from a seeded CSPRNG is the fallback.
        return format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
