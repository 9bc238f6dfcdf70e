//! The state events that follow a Design call (client-facts §3–§5, the §8 table): what an
//! approval records, what a success or a `needs_consent` / `needs_project_grant` answer changes.
//! It reads the facts the call was decided on (`may_record`, the approved kinds) and calls the
//! [`DesignState`] events; it must not talk to the network or decide whether a call runs.
//!
//! The executor performs the upstream half (POST consent, POST grant, the call itself) and asks
//! this module before and after each step, so every book-keeping rule lives here once.

use serde_json::Value;
use time::OffsetDateTime;

use super::{DesignState, PlanApproval, PlanRefusal, SessionKey, MEMBERSHIP_OR_SHARING_OPERATIONS};
use crate::call::DesignCall;

/// The approval kinds a human gave for this call (all false for an allowed call).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Approved {
    pub consent: bool,
    pub grant: bool,
    pub plan: bool,
    pub batch: bool,
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
    pub fn consent_recorded(&self) {
        self.state.consent_granted();
    }

    /// Before the call goes upstream: an approved finalize_plan replaces the session's earlier
    /// plans for the project even if it then fails (§3 `IBt`), whether its ask was a plan or,
    /// where no plan can be kept, this call only.
    pub fn before_call(&self) {
        let approved = self.approved.plan || self.approved.batch;
        if self.call.operation == "finalize_plan" && approved {
            if let Some(project_id) = self.call.project_id() {
                self.state.plan_finalize_started(self.session, project_id);
            }
        }
    }

    /// Whether a `needs_project_grant` for `project_id` may be answered by POSTing the grant the
    /// human approved: only for the call's own project, only where approvals may record.
    pub fn records_grant_for(&self, project_id: &str) -> bool {
        self.approved.grant && self.may_record && self.call.project_id() == Some(project_id)
    }

    /// The grant POST answered: recorded (2xx) or not eligible (404).
    pub fn grant_answered(&self, project_id: &str, eligible: bool) {
        if eligible {
            self.state.grant_verified(project_id);
        } else {
            self.state.grant_not_eligible(project_id);
        }
    }

    /// The call came back. An error result changes nothing; a success applies the membership,
    /// grant and plan events it implies. `text` is the result's first text block.
    pub fn succeeded(&self, text: Option<&str>, is_error: bool, now: OffsetDateTime) {
        if is_error {
            return;
        }
        let project_id = self.call.project_id().unwrap_or("");
        let operation = self.call.operation.as_str();
        if MEMBERSHIP_OR_SHARING_OPERATIONS.contains(&operation) && !project_id.is_empty() {
            self.state.membership_or_sharing_changed(project_id);
        }
        if self.is_tokenless_write() && !project_id.is_empty() {
            if self.approved.grant && self.may_record {
                // The human re-approved the identity card (a recard, the server grant still
                // held): trust the project again, or every later write would show the card.
                self.state.grant_verified(project_id);
            } else {
                // A write that went through tokenless proves the server holds the grant.
                self.state.server_grant_observed(project_id);
            }
        }
        if operation == "finalize_plan" && self.approved.plan {
            if let Err(refusal) = self.plan_registered(text, now) {
                tracing::info!(%refusal, "plan not registered");
            }
        }
    }

    /// The server answered 403 `needs_consent`: consent is seeded false (§4 `OOe`).
    pub fn needs_consent(&self) {
        self.state.consent_seeded_refused();
    }

    /// The server answered `needs_project_grant` for `project_id` (§5.6).
    pub fn needs_project_grant(&self, project_id: &str) {
        self.state.project_grant_demanded(project_id);
    }

    pub fn is_tokenless_write(&self) -> bool {
        matches!(
            self.call.operation.as_str(),
            "write_files" | "create_support_js"
        ) && self.call.is_tokenless()
    }

    /// §3: registration after an approved finalize_plan; a refusal is silent towards the model.
    fn plan_registered(&self, text: Option<&str>, now: OffsetDateTime) -> Result<(), PlanRefusal> {
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
        let (writes, deletes) = (self.listed("writes"), self.listed("deletes"));
        let approval = PlanApproval {
            token,
            project_id: self.call.project_id().unwrap_or(""),
            scope: self.call.string_argument("scope"),
            writes: &writes,
            deletes: &deletes,
            server_expiry,
            ask_was_shown: true,
            prompt_reaches_user: self.may_record,
            main_agent_without_hook: self.main_without_hook,
            result_is_error: false,
        };
        self.state
            .plan_registered(self.session, approval, now)
            .map(drop)
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
