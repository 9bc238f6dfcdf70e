//! The state events that follow a Design call (client-facts §3–§5, the §8 table): what an
//! approval records, what a success or a `needs_consent` / `needs_project_grant` answer changes.
//! It reads the facts the call was decided on (`may_record`, the approved kinds) and the state,
//! and says which [`AccountEvent`]s follow (the caller records them in its store); it must not
//! talk to the network, change state or decide whether a call runs.
//!
//! The executor performs the upstream half (POST consent, POST grant, the call itself) and asks
//! this module before and after each step, so every book-keeping rule lives here once.

use serde_json::Value;
use time::OffsetDateTime;

use super::{
    AccountEvent, DesignState, PlanRefusal, PlanRegistration, SessionKey,
    MEMBERSHIP_OR_SHARING_OPERATIONS,
};
use crate::call::DesignCall;

/// The approval kinds a human gave for this call (all false for an allowed call).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Approved {
    pub consent: bool,
    pub grant: bool,
    pub plan: bool,
    pub batch: bool,
}

/// What a successful call changes: events in order, then a plan to register.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Succeeded {
    pub events: Vec<AccountEvent>,
    pub plan: Option<PlanRegistration>,
}

/// One call's follow-ups, over the state of its account and session.
#[derive(Debug, Clone, Copy)]
pub struct FollowUps<'a> {
    pub state: &'a DesignState,
    pub session: &'a SessionKey,
    pub call: &'a DesignCall,
    pub approved: Approved,
    /// The decision's `session.may_record` fact: approvals here may record consent, grants and
    /// plans (SPEC §5). Read from the context, never recomputed.
    pub may_record: bool,
    /// The main agent without a permission-request hook (`F6n`), from the same context.
    pub main_without_hook: bool,
}

impl FollowUps<'_> {
    /// Whether the approved consent must be POSTed before the call.
    pub fn records_consent(&self) -> bool {
        self.approved.consent && self.may_record
    }

    /// The consent POST succeeded.
    pub fn consent_recorded(&self) -> AccountEvent {
        AccountEvent::ConsentGranted
    }

    /// Before the call goes upstream: an approved finalize_plan replaces the session's earlier
    /// plans for the project even if it then fails (§3 `IBt`), whether its ask was a plan or,
    /// where no plan can be kept, this call only.
    pub fn before_call(&self) -> Option<AccountEvent> {
        let approved = self.approved.plan || self.approved.batch;
        if self.call.operation != "finalize_plan" || !approved {
            return None;
        }
        let project_id = self.call.project_id()?;
        Some(AccountEvent::PlanFinalizeStarted {
            session: self.session.clone(),
            project_id: project_id.to_string(),
        })
    }

    /// Whether a `needs_project_grant` for `project_id` may be answered by POSTing the grant the
    /// human approved: only for the call's own project, only where approvals may record.
    pub fn records_grant_for(&self, project_id: &str) -> bool {
        self.approved.grant && self.may_record && self.call.project_id() == Some(project_id)
    }

    /// The grant POST answered: recorded (2xx) or not eligible (404).
    pub fn grant_answered(&self, project_id: &str, eligible: bool) -> AccountEvent {
        let project_id = project_id.to_string();
        if eligible {
            AccountEvent::GrantVerified { project_id }
        } else {
            AccountEvent::GrantNotEligible { project_id }
        }
    }

    /// The call came back. An error result changes nothing; a success applies the membership,
    /// grant and plan events it implies. `text` is the result's first text block.
    pub fn succeeded(&self, text: Option<&str>, is_error: bool, now: OffsetDateTime) -> Succeeded {
        let mut out = Succeeded::default();
        if is_error {
            return out;
        }
        let project_id = self.call.project_id().unwrap_or("").to_string();
        let operation = self.call.operation.as_str();
        if MEMBERSHIP_OR_SHARING_OPERATIONS.contains(&operation) && !project_id.is_empty() {
            let project_id = project_id.clone();
            out.events
                .push(AccountEvent::MembershipOrSharingChanged { project_id });
        }
        if self.is_tokenless_write() && !project_id.is_empty() {
            let project_id = project_id.clone();
            out.events.push(if self.approved.grant && self.may_record {
                // The human re-approved the identity card (a recard, the server grant still
                // held): trust the project again, or every later write would show the card.
                AccountEvent::GrantVerified { project_id }
            } else {
                // A write that went through tokenless proves the server holds the grant.
                AccountEvent::ServerGrantObserved { project_id }
            });
        }
        if operation == "finalize_plan" && self.approved.plan {
            match self.plan_registration(text, now) {
                Ok(plan) => out.plan = Some(plan),
                Err(refusal) => tracing::info!(%refusal, "plan not registered"),
            }
        }
        out
    }

    /// The server answered 403 `needs_consent`: consent is seeded false (§4 `OOe`).
    pub fn needs_consent(&self) -> AccountEvent {
        AccountEvent::ConsentSeededRefused
    }

    /// The server answered `needs_project_grant` for `project_id` (§5.6).
    pub fn needs_project_grant(&self, project_id: &str) -> AccountEvent {
        AccountEvent::ProjectGrantDemanded {
            project_id: project_id.to_string(),
        }
    }

    /// The state the follow-ups read (a replica's cache, or the in-memory store).
    pub fn state(&self) -> &DesignState {
        self.state
    }

    pub fn is_tokenless_write(&self) -> bool {
        matches!(
            self.call.operation.as_str(),
            "write_files" | "create_support_js"
        ) && self.call.is_tokenless()
    }

    /// §3: registration after an approved finalize_plan; a refusal is silent towards the model.
    fn plan_registration(
        &self,
        text: Option<&str>,
        now: OffsetDateTime,
    ) -> Result<PlanRegistration, PlanRefusal> {
        let body = text.and_then(|text| serde_json::from_str::<Value>(text).ok());
        let Some(token) = body
            .as_ref()
            .and_then(|body| body.get("plan_token"))
            .and_then(Value::as_str)
        else {
            return Err(PlanRefusal::EmptyToken);
        };
        let server_expiry = body
            .as_ref()
            .and_then(|body| body.get("expires_at"))
            .and_then(Value::as_f64)
            .filter(|seconds| seconds.is_finite())
            .and_then(|seconds| {
                OffsetDateTime::from_unix_timestamp_nanos((seconds * 1e9) as i128).ok()
            });
        Ok(PlanRegistration {
            session: self.session.clone(),
            token: token.to_string(),
            project_id: self.call.project_id().unwrap_or("").to_string(),
            scope: self.call.string_argument("scope").map(str::to_string),
            writes: self.listed("writes"),
            deletes: self.listed("deletes"),
            server_expiry,
            prompt_reaches_user: self.may_record,
            main_agent_without_hook: self.main_without_hook,
            now,
        })
    }

    fn listed(&self, key: &str) -> Vec<String> {
        self.call
            .arguments
            .get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
#[path = "followups_tests.rs"]
mod tests;
