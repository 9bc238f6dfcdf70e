//! server::execute: runs a call the decision allowed (or a human approved) upstream, performs
//! the approval's follow-up exactly once (record consent, record a grant, register a plan),
//! and applies the state events the result implies (client-facts §3–§5, §8 table). Thin: the
//! policies already decided; this only carries the call out and keeps the books.

use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::authz::ApprovalKind;
use crate::call::{DesignCall, ProjectsCall};
use crate::executor::design::{DesignError, GrantRecord};
use crate::executor::result::MappedResult;
use crate::facts::{AgentKind, Mode, Session};
use crate::state::{PlanApproval, PlanStore, MEMBERSHIP_OR_SHARING_OPERATIONS};

use super::account::Account;

/// Whether approving in this session may mint consent, grants or plans (SPEC §5): the main
/// agent without a permission-request hook, with a prompt that reaches a human.
pub fn session_mints(session: &Session) -> bool {
    let bypass = session.mode == Mode::BypassPermissions
        || (session.mode == Mode::Plan && session.bypass_available);
    session.agent == AgentKind::Main && !session.permission_hook && session.interactive && !bypass
}

/// What an execution came to, as the agent sees it.
pub fn result_json(result: &MappedResult) -> Value {
    json!({"content": result.content, "isError": result.is_error, "notices": result.notices})
}

pub fn error_json(kind: &str, message: &str) -> Value {
    json!({"content": [{"type": "text", "text": message}], "isError": true, "error": kind})
}

pub struct DesignRun<'a> {
    pub account: &'a Account,
    pub plans: &'a PlanStore,
    pub session: &'a Session,
    pub call: &'a DesignCall,
    /// The approvals a human gave for this call (empty for an allowed call).
    pub approved: &'a [ApprovalKind],
    pub now: OffsetDateTime,
}

impl DesignRun<'_> {
    pub async fn run(&self) -> Value {
        if self.call.operation == "list" {
            return self.list().await;
        }
        let mints = session_mints(self.session);
        if self.approved.contains(&ApprovalKind::Consent) && mints {
            if let Err(error) = self.account.design.record_consent().await {
                return error_json(
                    "consent",
                    &format!("Couldn't record Design consent ({error})"),
                );
            }
            self.account.consent.consent_recorded();
        }
        let is_finalize = self.call.operation == "finalize_plan";
        if is_finalize && self.approved.contains(&ApprovalKind::Plan) {
            if let Some(project_id) = self.call.project_id() {
                self.plans.finalize_started(project_id);
            }
        }
        let outcome = self.call_with_grant_followup(mints).await;
        match outcome {
            Ok(result) => {
                self.after_success(&result, mints);
                result_json(&result)
            }
            Err(error) => self.after_failure(&error),
        }
    }

    async fn call_with_grant_followup(&self, mints: bool) -> Result<MappedResult, DesignError> {
        let arguments = Value::Object(self.call.arguments.clone());
        let first = self
            .account
            .design
            .call_tool(&self.call.operation, &arguments)
            .await;
        let Err(DesignError::NeedsProjectGrant { project_id }) = &first else {
            return first;
        };
        let own_project = self.call.project_id() == Some(project_id.as_str());
        if !(self.approved.contains(&ApprovalKind::Grant) && mints && own_project) {
            return first;
        }
        match self.account.design.record_grant(project_id).await? {
            GrantRecord::Recorded => self.account.grants.grant_recorded(project_id),
            GrantRecord::NotEligible => {
                self.account.grants.grant_refused_not_found(project_id);
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

    fn after_success(&self, result: &MappedResult, mints: bool) {
        let project_id = self.call.project_id().unwrap_or("");
        if result.is_error {
            return;
        }
        if MEMBERSHIP_OR_SHARING_OPERATIONS.contains(&self.call.operation.as_str())
            && !project_id.is_empty()
        {
            self.account.membership_or_sharing_changed(project_id);
        }
        let tokenless_write = matches!(
            self.call.operation.as_str(),
            "write_files" | "create_support_js"
        ) && self.call.is_tokenless();
        if tokenless_write && !project_id.is_empty() {
            if self.approved.contains(&ApprovalKind::Grant) && mints {
                // The human re-approved the identity card (a recard, the server grant still
                // held): trust the project again, or every later write would show the card.
                self.account.grants.grant_recorded(project_id);
            } else {
                // A write that went through tokenless proves the server holds the grant.
                self.account.grants.server_grant_observed(project_id);
            }
        }
        if self.call.operation == "finalize_plan" && self.approved.contains(&ApprovalKind::Plan) {
            self.register_plan(result, mints);
        }
    }

    /// client-facts §3: registration after an approved finalize_plan (silent refusal).
    fn register_plan(&self, result: &MappedResult, mints: bool) {
        let Some(text) = result
            .content
            .first()
            .and_then(|block| block.get("text"))
            .and_then(Value::as_str)
        else {
            return;
        };
        let Ok(body) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let Some(token) = body.get("plan_token").and_then(Value::as_str) else {
            return;
        };
        let server_expiry = body
            .get("expires_at")
            .and_then(Value::as_f64)
            .filter(|seconds| seconds.is_finite())
            .and_then(|seconds| {
                OffsetDateTime::from_unix_timestamp_nanos((seconds * 1e9) as i128).ok()
            });
        let list = |key: &str| -> Vec<String> {
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
        };
        let (writes, deletes) = (list("writes"), list("deletes"));
        let approval = PlanApproval {
            token,
            project_id: self.call.project_id().unwrap_or(""),
            scope: self.call.string_argument("scope"),
            writes: &writes,
            deletes: &deletes,
            server_expiry,
            ask_was_shown: true,
            prompt_reaches_user: mints,
            main_agent_without_hook: self.session.agent == AgentKind::Main
                && !self.session.permission_hook,
            result_is_error: result.is_error,
        };
        if let Err(refusal) = self.plans.finalize_approved(approval, self.now) {
            tracing::info!(%refusal, "plan not registered");
        }
    }

    fn after_failure(&self, error: &DesignError) -> Value {
        match error {
            DesignError::NeedsConsent { .. } => {
                self.account.consent_withdrawn();
                let message = if session_mints(self.session) {
                    "Claude Design needs your consent: the user hasn't granted this yet — ask them to retry (the prompt will show on the next call) or run /design consent."
                } else {
                    "Claude Design needs your consent: run /design consent to grant it (it can't be approved automatically in this permission mode)."
                };
                error_json("needs_consent", message)
            }
            DesignError::NeedsProjectGrant { project_id } => {
                self.account.project_grant_demanded(project_id);
                let message = if !session_mints(self.session)
                    && self.approved.contains(&ApprovalKind::Grant)
                {
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
                };
                error_json("needs_project_grant", &message)
            }
            other => error_json("upstream", &other.to_string()),
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

pub async fn run_projects(account: &Account, call: &ProjectsCall) -> Value {
    let Some(executor) = account.projects.as_ref() else {
        return error_json("projects", "No project attached to this session");
    };
    match executor.execute(call).await {
        Ok(result) => {
            json!({"content": [{"type": "text", "text": result.to_string()}], "isError": false, "result": result})
        }
        Err(error) => error_json("projects", &error.to_string()),
    }
}
