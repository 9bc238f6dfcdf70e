//! facts::caller: who the call comes from as askgate verified it (never as the call says), and
//! what that caller may claim about its session: the permission modes and the agent kinds its
//! identity allows (SPEC §11). The server computes these once per credential (a static token's
//! configuration today, an IdP token's claims later) and every front door puts them beside the
//! session facts the caller states; the policies (`gates.caller-*`) deny a claim beyond them.
//! It decides nothing.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::session::{AgentKind, Mode};
use crate::authz::context::CallerContext;
use crate::state::usage::UsageFacts;

/// Every permission mode, in the reference's order.
pub const ALL_MODES: [Mode; 6] = [
    Mode::Default,
    Mode::AcceptEdits,
    Mode::Plan,
    Mode::Auto,
    Mode::DontAsk,
    Mode::BypassPermissions,
];

/// Every agent kind.
pub const ALL_AGENTS: [AgentKind; 2] = [AgentKind::Main, AgentKind::Subagent];

/// The verified caller of one call and the claims its identity allows.
///
/// `Default` allows no claim at all, so a front door that forgot to say who called denies every
/// call (`gates.caller-mode-not-allowed`) instead of trusting the session it was sent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerFacts {
    /// The caller's principal as configured (a static token) or as its issuer names it.
    #[serde(default)]
    pub principal: String,
    /// The permission modes the caller may state; a mode that lifts asks (bypassPermissions, or
    /// plan mode with bypass available) needs `bypassPermissions` here.
    pub modes: BTreeSet<Mode>,
    /// The agent kinds the caller may state (`main`, `subagent`).
    pub agents: BTreeSet<AgentKind>,
    /// Who the person behind the caller is, for the policies (`context.caller.groups`,
    /// `context.caller.email`): configured (`callers[].groups`, `email`) or the IdP token's
    /// claims.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub groups: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub email: String,
    /// What this principal did lately (`state::usage`), stamped when the call is prepared.
    #[serde(default, skip_serializing_if = "UsageFacts::is_zero")]
    pub usage: UsageFacts,
    /// The OAuth client the caller's token was issued to (`azp`, `client_id`), or "".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client: String,
    /// The RFC 8693 `act` chain of the caller's token: who acts for the principal, the party
    /// acting now first, each `issuer|subject` (the token's issuer when the actor names none);
    /// empty when the principal acts itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actors: Vec<String>,
    /// The OAuth scopes of the caller's token, or a static caller's configured `scopes`.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub scopes: BTreeSet<String>,
}

impl CallerFacts {
    /// A caller that may claim anything: what a scenario file, `check` and replay of a record
    /// written before the rule existed describe unless they say otherwise.
    pub fn unrestricted() -> Self {
        Self {
            principal: String::new(),
            modes: ALL_MODES.into_iter().collect(),
            agents: ALL_AGENTS.into_iter().collect(),
            groups: BTreeSet::new(),
            email: String::new(),
            usage: UsageFacts::default(),
            client: String::new(),
            actors: Vec::new(),
            scopes: BTreeSet::new(),
        }
    }

    /// Whether the caller may state bypassPermissions (or plan mode with bypass available).
    pub fn may_bypass(&self) -> bool {
        self.modes.contains(&Mode::BypassPermissions)
    }

    pub fn to_context(&self) -> CallerContext {
        CallerContext {
            principal: self.principal.clone(),
            modes: self
                .modes
                .iter()
                .map(|mode| mode.as_str().to_string())
                .collect(),
            agents: self
                .agents
                .iter()
                .map(|agent| agent.as_str().to_string())
                .collect(),
            groups: self.groups.clone(),
            email: self.email.clone(),
            usage: self.usage,
            client: self.client.clone(),
            actor: self.actors.first().cloned().unwrap_or_default(),
            actors: self.actors.clone(),
            scopes: self.scopes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_caller_may_claim_nothing_and_unrestricted_everything() {
        let none = CallerFacts::default();
        assert!(none.modes.is_empty() && none.agents.is_empty() && !none.may_bypass());
        let all = CallerFacts::unrestricted();
        assert_eq!(all.modes.len(), ALL_MODES.len());
        assert!(all.may_bypass());
        let context = all.to_context();
        assert!(context.modes.contains("bypassPermissions"));
        assert!(context.agents.contains("subagent"));
    }
}
