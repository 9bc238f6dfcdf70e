//! server::gateway: one call through the service — validate, observe, gather facts, decide
//! on the current snapshot, then execute (allow), hold for a human (ask) or refuse (deny).

use std::sync::Arc;
use std::time::Instant;

use arc_swap::ArcSwap;
use serde_json::Value;

use super::account::Account;
use super::approvals::{ApprovalStore, ApprovalView, ApprovedCall};
use super::caller::{Caller, Callers};
use super::clock::Clock;
use super::error::ApiError;
use super::execute::{run_projects, DesignRun};
use super::metrics::Metrics;
use super::observe;
use super::wire::SessionBody;
use crate::authz::{decide, Decision, Outcome, PolicySnapshot};
use crate::call::{DesignCall, ProjectsCall};
use crate::facts::{self, CallFacts, Environment};

pub struct Inner {
    pub snapshot: ArcSwap<PolicySnapshot>,
    /// The hook-mode set (`server::hook`), rebuilt beside the live set on every reload.
    pub hook_snapshot: ArcSwap<PolicySnapshot>,
    pub callers: Callers,
    pub environment: Environment,
    /// The scopes of the upstream credential (Projects needs both project scopes).
    pub scopes: Vec<String>,
    pub clock: Arc<dyn Clock>,
    pub account: Account,
    pub approvals: ApprovalStore,
    pub metrics: Metrics,
    pub approval_ttl: time::Duration,
    /// Evaluated beside the live set on every call; never changes an outcome.
    pub shadow: arc_swap::ArcSwapOption<PolicySnapshot>,
    pub reloader: Option<Arc<super::reload::Reloader>>,
    pub journal: super::journal::Journal,
    /// The MCP front door's settings (`server::mcp`).
    pub mcp: super::mcp::McpSettings,
}

/// The service's shared state; cheap to clone.
#[derive(Clone)]
pub struct AppState(pub Arc<Inner>);

/// A call after validation and fact gathering, ready to decide.
pub struct Prepared {
    pub decision_id: String,
    pub session_id: String,
    pub session: crate::facts::Session,
    pub call: ApprovedCall,
    pub facts: CallFacts,
}

/// What the gateway did with a call.
pub enum Handled {
    Allowed {
        decision: Decision,
        result: Value,
    },
    Asked {
        decision: Decision,
        approval: Box<ApprovalView>,
    },
    Denied {
        decision: Decision,
    },
}

impl AppState {
    pub fn inner(&self) -> &Inner {
        &self.0
    }

    pub async fn prepare(
        &self,
        tool: &str,
        session: &SessionBody,
        input: Value,
    ) -> Result<Prepared, ApiError> {
        if session.id.trim().is_empty() {
            return Err(ApiError::BadBody(
                "`session.id` must not be empty".to_string(),
            ));
        }
        let inner = self.inner();
        let now = inner.clock.now();
        let facts_session = session.facts();
        let (call, facts) = match tool {
            "ClaudeDesign" => {
                let catalog = observe::catalog_for(&inner.account, &input).await;
                let call = DesignCall::parse(input, catalog.as_ref()).map_err(ApiError::BadCall)?;
                let plans = inner.account.plans(&session.id);
                let observed = observe::design(&inner.account, &call, &plans, catalog).await;
                let stores = inner.account.stores(&plans);
                let facts = facts::design::gather(
                    &call,
                    &facts_session,
                    &inner.environment,
                    stores,
                    &observed,
                    now,
                );
                (ApprovedCall::Design(call), facts)
            }
            "Projects" => {
                let call = ProjectsCall::parse(&input).map_err(ApiError::BadCall)?;
                let observed = observe::projects(&inner.account, &call, &inner.scopes).await;
                let facts = facts::projects::gather(
                    &call,
                    &facts_session,
                    &inner.environment,
                    observed.as_ref(),
                    now,
                );
                (ApprovedCall::Projects(call), facts)
            }
            other => {
                return Err(ApiError::BadBody(format!(
                    "unknown tool `{other}`: use `ClaudeDesign` or `Projects`"
                )))
            }
        };
        Ok(Prepared {
            decision_id: uuid::Uuid::new_v4().to_string(),
            session_id: session.id.clone(),
            session: facts_session,
            call,
            facts,
        })
    }

    /// Decides on the snapshot current at this instant (loaded once per call).
    pub fn decide(&self, prepared: &Prepared) -> Decision {
        let started = Instant::now();
        let snapshot = self.inner().snapshot.load();
        let decision = decide(&prepared.facts, &snapshot);
        let summary = &prepared.facts.summary;
        self.inner().metrics.decision_made(
            &summary.tool,
            &summary.operation,
            decision.decision.as_str(),
            started.elapsed(),
        );
        decision
    }

    /// The shadow set's decision for the same facts, counted as agreement or not.
    pub fn shadow_decide(&self, prepared: &Prepared, live: &Decision) -> Option<Decision> {
        let shadow = self.inner().shadow.load_full()?;
        let decision = decide(&prepared.facts, &shadow);
        let agreed = decision.decision == live.decision
            && decision.approval.as_ref().map(|a| a.kind())
                == live.approval.as_ref().map(|a| a.kind());
        self.inner().metrics.shadow_compared(agreed);
        Some(decision)
    }

    /// Rebuilds the policy snapshots from their directories and swaps them if valid.
    pub async fn reload(&self) -> super::reload::ReloadReport {
        let inner = self.inner();
        let Some(reloader) = inner.reloader.clone() else {
            let snapshot = inner.snapshot.load();
            return super::reload::ReloadReport {
                reloaded: false,
                snapshot: snapshot.hash().to_string(),
                problems: vec!["reload is not configured".to_string()],
            };
        };
        let mut report = reloader
            .reload(
                |live| inner.snapshot.store(Arc::new(live)),
                |shadow| inner.shadow.store(Some(Arc::new(shadow))),
            )
            .await;
        if report.problems.is_empty() {
            report.problems.extend(self.reload_hook(&reloader).await);
        }
        report
    }

    /// Rebuilds the hook-mode set from the live set's directories; keeps the running one (and
    /// says why) when it does not load.
    async fn reload_hook(&self, reloader: &super::reload::Reloader) -> Vec<String> {
        let args = reloader.live_args().clone();
        let built =
            tokio::task::spawn_blocking(move || crate::cli::sources::load_hook(&args)).await;
        match built {
            Ok(Ok(snapshot)) => {
                self.inner().hook_snapshot.store(Arc::new(snapshot));
                Vec::new()
            }
            Ok(Err(error)) => error
                .problems
                .iter()
                .map(|problem| format!("hook: {problem}"))
                .collect(),
            Err(join) => vec![format!("hook: {join}")],
        }
    }

    /// Decides and logs (durably, before anything goes upstream); also the shadow decision.
    pub async fn decide_and_record(&self, prepared: &Prepared) -> Result<Decision, ApiError> {
        let decision = self.decide(prepared);
        let shadow = self.shadow_decide(prepared, &decision);
        let now = self.inner().clock.now();
        self.inner()
            .journal
            .decided(prepared, &decision, shadow.as_ref(), now)
            .await?;
        Ok(decision)
    }

    /// Decide, then execute, hold or refuse.
    pub async fn handle(&self, caller: &Caller, prepared: Prepared) -> Result<Handled, ApiError> {
        let decision = self.decide_and_record(&prepared).await?;
        Ok(match decision.decision {
            Outcome::Allow => {
                let result = self.execute(&prepared, &[]).await;
                self.inner()
                    .journal
                    .outcome(&prepared.decision_id, &result, self.inner().clock.now())
                    .await;
                Handled::Allowed { decision, result }
            }
            Outcome::Ask => {
                let approval = self.hold(caller, &prepared, &decision);
                Handled::Asked {
                    decision,
                    approval: Box::new(approval),
                }
            }
            Outcome::Deny => Handled::Denied { decision },
        })
    }

    /// Runs an allowed or approved call upstream.
    pub async fn execute(
        &self,
        prepared: &Prepared,
        approved: &[crate::authz::ApprovalKind],
    ) -> Value {
        self.run(
            &prepared.session_id,
            &prepared.session,
            &prepared.call,
            approved,
        )
        .await
    }

    pub async fn run(
        &self,
        session_id: &str,
        session: &crate::facts::Session,
        call: &ApprovedCall,
        approved: &[crate::authz::ApprovalKind],
    ) -> Value {
        let inner = self.inner();
        let started = Instant::now();
        let result = match call {
            ApprovedCall::Design(call) => {
                let plans = inner.account.plans(session_id);
                DesignRun {
                    account: &inner.account,
                    plans: &plans,
                    session,
                    call,
                    approved,
                    now: inner.clock.now(),
                }
                .run()
                .await
            }
            ApprovedCall::Projects(call) => run_projects(&inner.account, call).await,
        };
        inner.metrics.upstream_latency.observe(started.elapsed());
        if let Some(kind) = result.get("error").and_then(Value::as_str) {
            inner.metrics.upstream_failed(kind);
        }
        result
    }
}
