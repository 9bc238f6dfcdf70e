//! server::gateway: the decision pipeline — one call through the service: validate, observe,
//! gather facts, decide on the current snapshot, log, then execute (allow), hold for a human
//! (ask, `server::approving`) or refuse (deny). [`Pipeline`] is the state it needs; the
//! features above it (the HTTP API, MCP, the hook, the console, admin) each hold it beside
//! their own state.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use super::account::Account;
use super::caller::{Caller, Callers};
use super::clock::Clock;
use super::error::ApiError;
use super::execute::{run_projects, DesignRun};
use super::metrics::Metrics;
use super::observe;
use crate::authz::decide::denied_by_gate;
use crate::authz::CallFacts;
use crate::authz::{decide, Decision, Outcome, PolicySnapshot};
use crate::call::{effective_hints, CallError, Catalog, DesignCall, ProjectsCall};
use crate::facts::observations::LocalFileStat;
use crate::facts::{self, DesignObservations, Environment};
use crate::state::SessionKey;
use crate::store::approvals::{ApprovalView, ApprovedCall, ClientWait, Intake};

pub use super::prepared::{Arrival, FrontDoor, Prepared};

/// What deciding and executing a call needs, shared by every front door and feature.
pub struct Inner {
    /// The policy sets in force: live, hook mode, shadow and approving, one generation.
    pub policies: Arc<super::policies::Policies>,
    pub callers: Callers,
    /// Each principal's recent calls, facts of its next decisions (issue 36 §2).
    pub usage: Arc<crate::state::usage::Usage>,
    /// The rate limit per caller (`limits.rate`), if configured.
    pub rate: Option<crate::state::rate::RateLimiter>,
    pub environment: Environment,
    pub clock: Arc<dyn Clock>,
    pub account: Account,
    /// Approvals: the books, the webhook, who may answer (`server::approving`).
    pub approving: super::approving::Desk,
    pub metrics: Metrics,
    pub journal: super::journal::Journal,
}

/// The decision pipeline (validate, observe, gather facts, decide, log, then execute, hold or
/// refuse); cheap to clone. Every feature's state holds it.
#[derive(Clone)]
pub struct Pipeline(pub Arc<Inner>);

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

impl Pipeline {
    pub fn inner(&self) -> &Inner {
        &self.0
    }

    /// Validates the call and gathers its facts. A first decision on the facts known locally
    /// (no upstream observation: consent as cached, no grants, identity, new catalog or project
    /// detail) runs first; when a `@gate` policy denies it, those facts are the call's and
    /// nothing is sent upstream. Otherwise the observations the call needs are fetched and the
    /// facts gathered again with them. `session_key` is the caller's (its principal from the
    /// token); the front door has checked the ids it was built from.
    pub async fn prepare(
        &self,
        session_key: SessionKey,
        session: crate::facts::Session,
        (tool, input): (&str, Value),
        arrival: Arrival,
    ) -> Result<Prepared, ApiError> {
        let generation = self.inner().policies.current();
        let snapshot = generation.live.clone();
        let gathered = self
            .prepare_tool(&session_key, &session, tool, input, &snapshot)
            .instrument(crate::trace::facts_span())
            .await?;
        let (call, mut facts, local_file) = gathered;
        let mut intake = Intake {
            session_key,
            session,
            call,
        };
        self.with_usage(&mut intake, &mut facts);
        let shadow = generation.shadow.clone();
        Ok(Prepared::new(
            intake,
            arrival,
            (facts, local_file),
            snapshot,
            shadow,
        ))
    }

    /// The call of `tool` parsed and its facts gathered (gates first on local facts).
    async fn prepare_tool(
        &self,
        session_key: &SessionKey,
        session: &crate::facts::Session,
        tool: &str,
        input: Value,
        snapshot: &PolicySnapshot,
    ) -> Result<(ApprovedCall, CallFacts, Option<LocalFileStat>), ApiError> {
        Ok(match tool {
            "ClaudeDesign" => {
                let (call, facts) = self
                    .prepare_design(session_key, session, input, snapshot)
                    .await?;
                (call, facts, None)
            }
            "Projects" => self.prepare_projects(session, &input, snapshot).await?,
            other => {
                return Err(ApiError::BadBody(format!(
                    "unknown tool `{other}`: use `ClaudeDesign` or `Projects`"
                )))
            }
        })
    }

    async fn prepare_design(
        &self,
        session_key: &SessionKey,
        session: &crate::facts::Session,
        input: Value,
        snapshot: &PolicySnapshot,
    ) -> Result<(ApprovedCall, CallFacts), ApiError> {
        let inner = self.inner();
        let account = &inner.account;
        let cached = account.catalog();
        let (local, complete) =
            local_design_call(&input, cached.as_deref()).map_err(ApiError::BadCall)?;
        account
            .store
            .ready(session_key, local.plan_token())
            .await
            .map_err(ApiError::Store)?;
        let stores = account.state().stores(session_key);
        let unobserved = DesignObservations {
            server_grants: crate::facts::ServerGrants {
                available: false,
                projects: Default::default(),
            },
            catalog: cached.clone(),
            ..DesignObservations::default()
        };
        let environment = &inner.environment;
        let now = inner.clock.now();
        let local_facts =
            facts::design::gather(&local, session, environment, stores, &unobserved, now);
        if denied_by_gate(&local_facts, snapshot) {
            return Ok((ApprovedCall::Design(local), local_facts));
        }
        let catalog = observe::catalog_for(account, &input).await;
        // Parsed once: again only when the local parse was partial or the catalog changed.
        let same_catalog = match (&cached, &catalog) {
            (None, None) => true,
            (Some(before), Some(now)) => Arc::ptr_eq(before, now),
            _ => false,
        };
        let call = if complete && same_catalog {
            local
        } else {
            DesignCall::parse(input, catalog.as_deref()).map_err(ApiError::BadCall)?
        };
        let observed = observe::design(account, &call, catalog).await;
        let facts = facts::design::gather(&call, session, environment, stores, &observed, now);
        Ok((ApprovedCall::Design(call), facts))
    }

    async fn prepare_projects(
        &self,
        session: &crate::facts::Session,
        input: &Value,
        snapshot: &PolicySnapshot,
    ) -> Result<(ApprovedCall, CallFacts, Option<LocalFileStat>), ApiError> {
        let call = ProjectsCall::parse(input).map_err(ApiError::BadCall)?;
        let (facts, stat) = self.projects_facts(session, &call, snapshot).await;
        Ok((ApprovedCall::Projects(call), facts, stat))
    }

    /// The facts of a parsed Projects call: gates first on what is known locally, then the
    /// project's observations (and the `local_path` file's identity).
    async fn projects_facts(
        &self,
        session: &crate::facts::Session,
        call: &ProjectsCall,
        snapshot: &PolicySnapshot,
    ) -> (CallFacts, Option<LocalFileStat>) {
        let inner = self.inner();
        let (environment, now) = (&inner.environment, inner.clock.now());
        let local = observe::projects_local(&inner.account, call).await;
        let local_facts = facts::projects::gather(call, session, environment, local.as_ref(), now);
        if denied_by_gate(&local_facts, snapshot) {
            return (local_facts, None);
        }
        let observed = observe::projects(&inner.account, call, local).await;
        let facts = facts::projects::gather(call, session, environment, observed.as_ref(), now);
        (facts, observed.and_then(|observed| observed.local_file))
    }

    /// A held call's intake ready to decide again at this moment (an approval re-decides on
    /// the policies current now), its facts gathered gates first as for a new call: nothing
    /// goes upstream when a gate now denies. Fails, giving the intake back, when the shared
    /// state cannot be read fit to decide on.
    pub async fn prepare_again(&self, intake: Intake) -> Result<Prepared, (Intake, ApiError)> {
        let generation = self.inner().policies.current();
        let snapshot = generation.live.clone();
        let gathered = self
            .gather_again(
                &intake.session_key,
                &intake.session,
                &intake.call,
                &snapshot,
            )
            .instrument(crate::trace::facts_span())
            .await;
        match gathered {
            Ok(gathered) => {
                let shadow = generation.shadow.clone();
                Ok(Prepared::new(
                    intake,
                    Arrival::again(),
                    gathered,
                    snapshot,
                    shadow,
                ))
            }
            Err(error) => Err((intake, error)),
        }
    }

    async fn gather_again(
        &self,
        session_key: &SessionKey,
        session: &crate::facts::Session,
        call: &ApprovedCall,
        snapshot: &PolicySnapshot,
    ) -> Result<(CallFacts, Option<LocalFileStat>), ApiError> {
        let call = match call {
            ApprovedCall::Design(call) => call,
            ApprovedCall::Projects(call) => {
                return Ok(self.projects_facts(session, call, snapshot).await)
            }
        };
        let inner = self.inner();
        let account = &inner.account;
        account
            .store
            .ready(session_key, call.plan_token())
            .await
            .map_err(ApiError::Store)?;
        let stores = account.state().stores(session_key);
        let cached = account.catalog();
        let unobserved = DesignObservations {
            server_grants: crate::facts::ServerGrants {
                available: false,
                projects: Default::default(),
            },
            catalog: cached.clone(),
            ..DesignObservations::default()
        };
        let (environment, now) = (&inner.environment, inner.clock.now());
        let local_facts =
            facts::design::gather(call, session, environment, stores, &unobserved, now);
        if denied_by_gate(&local_facts, snapshot) {
            return Ok((local_facts, None));
        }
        let observed = observe::design(account, call, cached).await;
        let facts = facts::design::gather(call, session, environment, stores, &observed, now);
        Ok((facts, None))
    }

    /// The caller's recent usage (issue 36 §2) stamped on the session and the call's context:
    /// facts of this decision (and of its re-decision when approved), before it is counted.
    pub(super) fn with_usage(&self, intake: &mut Intake, facts: &mut CallFacts) {
        let shape = call_shape(&intake.call);
        let now = self.inner().clock.now().unix_timestamp();
        let operation = call_operation(&intake.call);
        let key = &intake.session_key;
        let who = who(intake, &operation);
        let mut usage = self.inner().usage.facts_for(&who, shape, now);
        if let Some(wait) = self
            .inner()
            .rate
            .as_ref()
            .and_then(|rate| rate.over(&key.principal))
        {
            usage.rate_limited = true;
            usage.retry_after_seconds = wait;
        }
        intake.session.caller.usage = usage;
        std::sync::Arc::make_mut(&mut facts.context).caller.usage = usage;
    }

    /// Counts a new call's decision in its principal's usage (not a re-decision, not a
    /// probe): every front door that decides a call the agent made calls this once.
    pub fn count_usage(&self, prepared: &Prepared, decision: &Decision) {
        let summary = &prepared.facts.summary;
        let deleted_paths = match summary.operation.as_str() {
            "delete_files" => i64::try_from(summary.targets.len()).unwrap_or(i64::MAX),
            "project_delete" => 1,
            _ => 0,
        };
        let local_file = prepared.local_file.as_ref().map(|file| file.bytes);
        let counted = crate::state::usage::Counted {
            writes: summary.writes,
            deleted_paths,
            asked: decision.decision == Outcome::Ask,
            denied: decision.decision == Outcome::Deny,
            uploaded_bytes: prepared.intake.call.uploaded_bytes(local_file),
            shape: call_shape(&prepared.intake.call),
        };
        let now = self.inner().clock.now().unix_timestamp();
        let operation = call_operation(&prepared.intake.call);
        self.inner()
            .usage
            .count_for(&who(&prepared.intake, &operation), counted, now);
    }

    /// Decides on the call's snapshot (the one its gates were checked on) and counts the
    /// decision in the metrics.
    pub fn decide(&self, prepared: &Prepared) -> Decision {
        let started = Instant::now();
        let mut decision = decide(&prepared.facts, &prepared.snapshot);
        if decision.rate_limited {
            let wait = retry_after(prepared);
            decision.reason = format!("{}: try again in {wait} s", decision.reason);
        }
        let summary = &prepared.facts.summary;
        self.inner().metrics.decision_made(
            &summary.tool,
            &summary.operation,
            decision.decision.as_str(),
            started.elapsed(),
        );
        (self.inner().metrics).decided_by(&decision.policies, decision.decision.as_str());
        let span = tracing::Span::current();
        let caller = &prepared.intake.session.caller;
        let attestation = prepared.intake.session.attestation.as_str();
        crate::trace::record_caller(&span, &caller.principal, &caller.email, attestation);
        crate::trace::record_decision(
            &span,
            &crate::trace::Decided {
                decision_id: &prepared.decision_id,
                operation: &summary.operation,
                outcome: decision.decision.as_str(),
                policies: &decision.policies,
                policy_set: prepared.snapshot.hash(),
            },
        );
        decision
    }

    /// The shadow set's decision for the same facts, counted as agreement or not: the shadow
    /// set of the generation the call's live set came from.
    pub fn shadow_decide(&self, prepared: &Prepared, live: &Decision) -> Option<Decision> {
        let shadow = prepared.shadow.as_ref()?;
        let decision = decide(&prepared.facts, shadow);
        let agreed = decision.decision == live.decision
            && decision.approval.as_ref().map(|a| a.kind())
                == live.approval.as_ref().map(|a| a.kind());
        self.inner().metrics.shadow_compared(agreed);
        if decision.decision != live.decision {
            (self.inner().metrics)
                .shadow_flipped(live.decision.as_str(), decision.decision.as_str());
        }
        Some(decision)
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
        self.handle_for(caller, prepared, ClientWait::Polls).await
    }

    /// [`Self::handle`] for a request that holds an asked call open (MCP), now
    /// ([`ClientWait::Waiting`]) or once its client comes back with a retry
    /// ([`ClientWait::NotYet`]): its approval is withdrawn if this process goes away, since
    /// nobody would receive the result, and runs only while a client waits.
    pub async fn handle_for(
        &self,
        caller: &Caller,
        prepared: Prepared,
        client: ClientWait,
    ) -> Result<Handled, ApiError> {
        let decision = self.decide_and_record(&prepared).await?;
        self.count_usage(&prepared, &decision);
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
                self.hold(&caller.principal, prepared, decision, client)
                    .await?
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
        self.run_decided(
            &prepared.intake.session_key,
            &prepared.intake.session,
            &prepared.intake.call,
            approved,
            prepared.local_file,
        )
        .await
    }

    /// Runs a held call; its `local_path` is read without a decision-time identity to hold it
    /// to (the approval re-decides and should pass one to [`Self::run_decided`]).
    pub async fn run(
        &self,
        session_key: &SessionKey,
        session: &crate::facts::Session,
        call: &ApprovedCall,
        approved: &[crate::authz::ApprovalKind],
    ) -> Value {
        self.run_decided(session_key, session, call, approved, None)
            .await
    }

    pub async fn run_decided(
        &self,
        session_key: &SessionKey,
        session: &crate::facts::Session,
        call: &ApprovedCall,
        approved: &[crate::authz::ApprovalKind],
        local_file: Option<LocalFileStat>,
    ) -> Value {
        let inner = self.inner();
        let started = Instant::now();
        let result = match call {
            ApprovedCall::Design(call) => {
                DesignRun {
                    account: &inner.account,
                    session_key,
                    session,
                    call,
                    approved,
                    now: inner.clock.now(),
                }
                .run()
                .await
            }
            ApprovedCall::Projects(call) => run_projects(&inner.account, call, local_file).await,
        };
        inner.metrics.upstream_latency.observe(started.elapsed());
        if let Some(kind) = result.get("error").and_then(Value::as_str) {
            inner.metrics.upstream_failed(kind);
        }
        result
    }
}

/// The call as far as it can be validated without asking the upstream, and whether that is
/// its whole validation. An operation outside the static table and the cached catalog is taken
/// as the unknown (destructive) operation it is until discovery: its name and arguments
/// suffice for the gates.
fn local_design_call(
    input: &Value,
    catalog: Option<&Catalog>,
) -> Result<(DesignCall, bool), CallError> {
    let operation = input.get("operation").and_then(Value::as_str);
    let known = operation.is_some_and(|name| {
        crate::call::static_operation(name).is_some()
            || catalog.is_some_and(|catalog| catalog.tool(name).is_some())
    });
    if known || operation.is_none() {
        return DesignCall::parse(input.clone(), catalog).map(|call| (call, true));
    }
    let operation = operation.unwrap_or_default().to_string();
    let partial = DesignCall {
        hints: effective_hints(&operation, None),
        arguments: input
            .get("arguments")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        operation,
    };
    Ok((partial, false))
}

/// The call's tool and operation (`ClaudeDesign/write_files`, `Projects/project_write`).
/// Whom `intake`'s call counts for (`state::usage::Who`): its principal, `operation`, the
/// person behind the caller and the session.
fn who<'a>(intake: &'a Intake, operation: &'a str) -> crate::state::usage::Who<'a> {
    crate::state::usage::Who {
        principal: &intake.session_key.principal,
        operation,
        person: &intake.session.caller.email,
        session: &intake.session_key.id,
    }
}

fn call_operation(call: &ApprovedCall) -> String {
    match call {
        ApprovedCall::Design(call) => format!("ClaudeDesign/{}", call.operation),
        ApprovedCall::Projects(call) => format!("Projects/{}", call.method.as_str()),
    }
}

/// The call's shape for "identical calls" (`state::usage::shape`): its stored JSON form.
fn call_shape(call: &ApprovedCall) -> u64 {
    crate::state::usage::shape(&serde_json::to_vec(call).unwrap_or_default())
}

/// Whole seconds until the caller of `prepared` may call again (its rate limit; at least 1).
pub fn retry_after(prepared: &Prepared) -> i64 {
    prepared
        .facts
        .context
        .caller
        .usage
        .retry_after_seconds
        .max(1)
}
