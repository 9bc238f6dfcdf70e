//! server::execute: runs a call the decision allowed (or a human approved) upstream: the
//! consent and grant POSTs an approval implies, the call itself, and the mapping of its answer.
//! Every state change is a follow-up of `state::followups`, asked before and after each step;
//! the policies already decided, so this only carries the call out.

use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::authz::ApprovalKind;
use crate::call::{DesignCall, ProjectsCall};
use crate::executor::design::{DesignError, GrantRecord};
use crate::executor::result::MappedResult;
use crate::facts::observations::LocalFileStat;
use crate::facts::Session;
use crate::state::followups::{Approved, FollowUps};
use crate::state::SessionKey;

use super::account::Account;

/// What an execution came to, as the agent sees it.
pub fn result_json(result: &MappedResult) -> Value {
    json!({"content": result.content, "isError": result.is_error, "notices": result.notices})
}

pub use crate::executor::result::error_json;

/// The approval kinds a human gave, as the follow-ups read them.
pub fn approved(kinds: &[ApprovalKind]) -> Approved {
    Approved {
        consent: kinds.contains(&ApprovalKind::Consent),
        grant: kinds.contains(&ApprovalKind::Grant),
        plan: kinds.contains(&ApprovalKind::Plan),
        batch: kinds.contains(&ApprovalKind::Batch),
    }
}

/// Records the Design consent a human approved: the upstream POST, then the account event.
/// `Err`: the agent's result saying the POST failed (nothing else was sent).
pub async fn record_consent(account: &Account) -> Result<(), Value> {
    if let Err(error) = account.design.record_consent().await {
        return Err(error_json(
            "consent",
            &format!("Couldn't record Design consent ({error})"),
        ));
    }
    if let Err(error) = account
        .record([crate::state::AccountEvent::ConsentGranted])
        .await
    {
        tracing::error!(%error, "a state event after an upstream call was not recorded");
    }
    Ok(())
}

pub struct DesignRun<'a> {
    pub account: &'a Account,
    pub session_key: &'a SessionKey,
    pub session: &'a Session,
    pub call: &'a DesignCall,
    /// The approvals a human gave for this call (empty for an allowed call).
    pub approved: &'a [ApprovalKind],
    pub now: OffsetDateTime,
}

impl DesignRun<'_> {
    /// The call's follow-ups, reading the session facts exactly as the decision saw them.
    fn followups(&self) -> FollowUps<'_> {
        let session = self.session.to_context();
        FollowUps {
            state: self.account.state(),
            session: self.session_key,
            call: self.call,
            approved: approved(self.approved),
            may_record: session.may_record,
            main_without_hook: session.agent == "main" && !session.permission_hook,
        }
    }

    pub async fn run(&self) -> Value {
        if self.call.operation == "list" {
            return self.list().await;
        }
        let followups = self.followups();
        if followups.records_consent() {
            if let Err(failure) = record_consent(self.account).await {
                return failure;
            }
        }
        // Recorded before the call goes upstream: if the store cannot take it, nothing goes.
        if let Err(error) = self.account.record(followups.before_call()).await {
            return error_json("store", &error.to_string());
        }
        match self.call_with_grant_followup(&followups).await {
            Ok(result) => {
                let text = result
                    .content
                    .first()
                    .and_then(|block| block.get("text"))
                    .and_then(Value::as_str);
                let succeeded = followups.succeeded(text, result.is_error, self.now);
                self.recorded(succeeded.events).await;
                if let Some(plan) = succeeded.plan {
                    self.plan_registered(plan).await;
                }
                result_json(&result)
            }
            Err(error) => self.after_failure(&followups, &error).await,
        }
    }

    /// Records events that follow what already happened upstream; a store that cannot take
    /// them is logged (the call's result stands: it already ran).
    async fn recorded(&self, events: impl IntoIterator<Item = crate::state::AccountEvent>) {
        if let Err(error) = self.account.record(events).await {
            tracing::error!(%error, "a state event after an upstream call was not recorded");
        }
    }

    async fn plan_registered(&self, plan: crate::state::PlanRegistration) {
        match self.account.store.plan_registered(plan).await {
            Ok(Ok(_)) => {}
            Ok(Err(refusal)) => tracing::info!(%refusal, "plan not registered"),
            Err(error) => tracing::warn!(%error, "plan not registered"),
        }
    }

    async fn call_with_grant_followup(
        &self,
        followups: &FollowUps<'_>,
    ) -> Result<MappedResult, DesignError> {
        let arguments = Value::Object(self.call.arguments.clone());
        let first = self
            .account
            .design
            .call_tool(&self.call.operation, &arguments)
            .await;
        let Err(DesignError::NeedsProjectGrant { project_id }) = &first else {
            return first;
        };
        if !followups.records_grant_for(project_id) {
            return first;
        }
        match self.account.design.record_grant(project_id).await? {
            GrantRecord::Recorded => {
                self.recorded([followups.grant_answered(project_id, true)])
                    .await
            }
            GrantRecord::NotEligible => {
                self.recorded([followups.grant_answered(project_id, false)])
                    .await;
                return Err(DesignError::Http {
                    operation: "grant".to_string(),
                    status: 404,
                    body: "this project can't hold a durable write grant for this account (it may be shared from another organization or not viewable): use finalize_plan and a plan_token".to_string(),
                });
            }
        }
        self.account
            .design
            .call_tool(&self.call.operation, &arguments)
            .await
    }

    async fn after_failure(&self, followups: &FollowUps<'_>, error: &DesignError) -> Value {
        match error {
            DesignError::NeedsConsent { .. } => {
                self.recorded([followups.needs_consent()]).await;
                let message = if followups.may_record {
                    "Claude Design needs your consent: the user hasn't granted this yet — ask them to retry (the prompt will show on the next call) or run /design consent."
                } else {
                    "Claude Design needs your consent: run /design consent to grant it (it can't be approved automatically in this permission mode)."
                };
                error_json("needs_consent", message)
            }
            DesignError::NeedsProjectGrant { project_id } => {
                self.recorded([followups.needs_project_grant(project_id)])
                    .await;
                error_json("needs_project_grant", &self.grant_message(followups))
            }
            other => error_json("upstream", &other.to_string()),
        }
    }

    fn grant_message(&self, followups: &FollowUps<'_>) -> String {
        if !followups.may_record && followups.approved.grant {
            "the project write grant can't be granted in this permission mode: use finalize_plan and a plan_token".to_string()
        } else if matches!(
            self.call.operation.as_str(),
            "write_files" | "create_support_js"
        ) {
            if self.session.interactive {
                "the project write grant isn't active: retry the write to see the approval"
                    .to_string()
            } else {
                "the project write grant isn't active: use finalize_plan and a plan_token"
                    .to_string()
            }
        } else {
            format!(
                "Design {} needs a plan_token here: call finalize_plan first",
                self.call.operation
            )
        }
    }

    /// The local `list` pseudo-operation: discovery with the per-agent catalog-hash dedup.
    async fn list(&self) -> Value {
        let tools = match self.account.design.discover().await {
            Ok(tools) => tools,
            Err(error) => return error_json("discovery", &error.to_string()),
        };
        let catalog = crate::call::Catalog::parse(&tools);
        let hash = catalog.hash();
        self.account.catalog_discovered(catalog.clone());
        let full = self.call.arguments.get("full").is_some_and(|value| {
            !matches!(value, Value::Null | Value::Bool(false))
                && value != "false"
                && value != 0
                && value != ""
        });
        let agent = self.session.agent_id.as_deref().filter(|id| !id.is_empty());
        let repeated = agent.is_some_and(|agent| self.account.catalog_served(agent, &hash));
        let text = if repeated && !full {
            let operations: Vec<Value> = catalog.tools().iter().map(|tool| json!({"name": tool.name, "summary": summary(tool.description.as_deref())})).collect();
            json!({"catalog_unchanged": true, "catalog_hash": hash, "note": "The catalog is unchanged since your earlier list result; call with arguments {full: true} for the full catalog.", "operations": operations}).to_string()
        } else {
            tools.to_string()
        };
        json!({"content": [{"type": "text", "text": text}], "isError": false, "notices": []})
    }
}

/// The description's first sentence, capped at 140 characters (client-facts §1.2).
fn summary(description: Option<&str>) -> String {
    let text = description.unwrap_or("");
    let sentence = text.split(". ").next().unwrap_or(text);
    if sentence.chars().count() > 140 {
        let cut: String = sentence.chars().take(139).collect();
        format!("{cut}…")
    } else {
        sentence.to_string()
    }
}

/// Runs an allowed Projects call; a `local_path` write reads only the file the decision saw.
pub async fn run_projects(
    account: &Account,
    call: &ProjectsCall,
    decided: Option<LocalFileStat>,
) -> Value {
    let Some(executor) = account.projects.as_ref() else {
        return error_json("projects", "No project attached to this session");
    };
    match executor.execute_decided(call, decided).await {
        Ok(result) => {
            json!({"content": [{"type": "text", "text": result.to_string()}], "isError": false, "result": result})
        }
        Err(error) => error_json("projects", &error.to_string()),
    }
}
