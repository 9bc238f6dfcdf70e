//! Approved finalize_plan plans (client-facts §3): registration rules, the 15-minute cap and
//! invalidation. It owns the token → plan map; it must not match calls against plans (policy does
//! that) nor read the clock (`now` is passed in).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use dashmap::DashMap;
use time::OffsetDateTime;

use crate::paths::{normalize, plan_registrable, project_key, PathSet};

/// The longest a registered plan lives, whatever the server says (`c0f`, 900,000 ms).
pub const PLAN_TTL: time::Duration = time::Duration::minutes(15);

/// The most plans one session holds; past it (after dropping expired ones) a registration is
/// refused, so one session cannot grow its store without bound.
pub const MAX_PLANS_PER_SESSION: usize = 256;

/// A plan the user approved: these exact normalized paths may be written or deleted in this
/// project until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovedPlan {
    pub token: String,
    pub project_id: String,
    pub writes: PathSet,
    pub deletes: PathSet,
    pub expires_at: OffsetDateTime,
}

/// Everything the registration rules (§3 `g0f`) look at, gathered by the executor after
/// finalize_plan returned.
#[derive(Debug, Clone, Copy)]
pub struct PlanApproval<'a> {
    pub token: &'a str,
    pub project_id: &'a str,
    pub scope: Option<&'a str>,
    pub writes: &'a [String],
    pub deletes: &'a [String],
    /// `None` when `expires_at` was absent or not a finite number.
    pub server_expiry: Option<OffsetDateTime>,
    pub ask_was_shown: bool,
    pub prompt_reaches_user: bool,
    pub main_agent_without_hook: bool,
    pub result_is_error: bool,
}

/// Why a finalize_plan result was not registered. Refusal is silent towards the model: the token
/// still goes back, but later calls ask every time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanRefusal {
    #[error("the plan approval ask was not shown to the user")]
    AskNotShown,
    #[error("a prompt cannot reach the user in this permission mode")]
    PromptUnreachable,
    #[error("only the main agent without a permission request hook can register a plan")]
    NotMainAgentWithoutHook,
    #[error("finalize_plan returned an error result")]
    ErrorResult,
    #[error("the plan token is empty")]
    EmptyToken,
    #[error("plan scope `project` is no longer supported")]
    ProjectScope,
    #[error("project id `{project_id}` cannot hold an approved plan")]
    ProjectNotRegistrable { project_id: String },
    #[error("the plan's writes or deletes cannot be registered")]
    PathsNotRegistrable,
    #[error("server expiry `{server_expiry}` is not after now")]
    ExpiryPassed { server_expiry: OffsetDateTime },
    #[error("the session already holds {limit} approved plans")]
    TooManyPlans { limit: usize },
    #[error("{limit} sessions already hold approved plans")]
    TooManySessions { limit: usize },
    #[error("approved plans already hold {limit} bytes")]
    TooManyPlanBytes { limit: usize },
}

/// Approved plans keyed by token; every method takes `&self` and is safe from many threads.
#[derive(Debug, Default)]
pub struct PlanStore {
    plans: DashMap<String, ApprovedPlan>,
    /// Held by every change that removes and inserts in more than one step.
    // INVARIANT: after `finalize_approved` returns Ok, its plan is the only one of its project key
    // that was registered through the rules; two concurrent finalizes cannot both survive.
    changes: Mutex<()>,
    /// The bytes (`plan_bytes`) of the plans held, added on every insert and taken back on
    /// every removal and on drop; shared by every session's store (`SessionPlans`).
    held: Arc<AtomicUsize>,
}

impl Drop for PlanStore {
    fn drop(&mut self) {
        let remaining: usize = self.plans.iter().map(|entry| size(entry.value())).sum();
        self.held.fetch_sub(remaining, Ordering::AcqRel);
    }
}

impl PlanStore {
    /// A store whose plans count towards `held`.
    pub fn counted(held: Arc<AtomicUsize>) -> Self {
        Self {
            plans: DashMap::default(),
            changes: Mutex::default(),
            held,
        }
    }

    /// Inserts `plan`, counting its bytes (and no longer those of a plan it replaces).
    fn inserted(&self, plan: ApprovedPlan) {
        self.held.fetch_add(size(&plan), Ordering::AcqRel);
        if let Some(replaced) = self.plans.insert(plan.token.clone(), plan) {
            self.held.fetch_sub(size(&replaced), Ordering::AcqRel);
        }
    }

    fn released(&self, plan: &ApprovedPlan) {
        self.held.fetch_sub(size(plan), Ordering::AcqRel);
    }

    /// finalize_plan is about to execute for `project_id` (§3 `IBt`): a new finalize replaces
    /// earlier approvals even if it fails, so its plans go now.
    pub fn finalize_started(&self, project_id: &str) {
        self.project_invalidated(project_id);
    }

    /// finalize_plan succeeded (§3 `g0f`). Same-project plans are cleared first, so even a refused
    /// registration leaves no older approval behind; then each rule is checked in order.
    pub fn finalize_approved(
        &self,
        approval: PlanApproval<'_>,
        now: OffsetDateTime,
    ) -> Result<ApprovedPlan, PlanRefusal> {
        let _changes = self.changes_locked();
        self.project_removed(approval.project_id);
        registration_rules_checked(&approval)?;
        if self.plans.len() >= MAX_PLANS_PER_SESSION {
            self.expired_removed(now);
        }
        if self.plans.len() >= MAX_PLANS_PER_SESSION {
            return Err(PlanRefusal::TooManyPlans {
                limit: MAX_PLANS_PER_SESSION,
            });
        }
        let plan = registered_plan(&approval, now)?;
        self.inserted(plan.clone());
        Ok(plan)
    }

    /// Restores a plan exactly as given (scenario files, tests): no rules apply, but paths are
    /// normalized so matching sees the same shape as for a registered plan.
    pub fn restore(&self, plan: ApprovedPlan) {
        let plan = ApprovedPlan {
            writes: normalized(plan.writes.iter()),
            deletes: normalized(plan.deletes.iter()),
            ..plan
        };
        let _changes = self.changes_locked();
        self.inserted(plan);
    }

    /// The plan registered under `token`, if any. Expired plans are returned too: expiry is
    /// judged by policy against the call's own time.
    pub fn get(&self, token: &str) -> Option<ApprovedPlan> {
        self.plans.get(token).map(|entry| entry.value().clone())
    }

    /// Drops plans whose `expires_at` ≤ `now`; returns how many were dropped.
    pub fn expired_removed(&self, now: OffsetDateTime) -> usize {
        let expired: Vec<String> = self
            .plans
            .iter()
            .filter(|entry| entry.expires_at <= now)
            .map(|entry| entry.key().clone())
            .collect();
        // Re-checked on removal: the token may have been re-registered in between.
        expired
            .iter()
            .filter(|token| {
                let removed = self
                    .plans
                    .remove_if(token.as_str(), |_, plan| plan.expires_at <= now);
                removed.map(|(_, plan)| self.released(&plan)).is_some()
            })
            .count()
    }

    /// Sharing or membership changed, or a finalize started: every plan whose project id has the
    /// same key as `project_id` is dropped.
    pub fn project_invalidated(&self, project_id: &str) {
        let _changes = self.changes_locked();
        self.project_removed(project_id);
    }

    /// Consent was seeded false or revoked: every plan is dropped.
    pub fn all_cleared(&self) {
        let _changes = self.changes_locked();
        self.plans.retain(|_, plan| {
            self.released(plan);
            false
        });
    }

    /// The bytes counted in this store's `held` (every store sharing it).
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    pub fn len(&self) -> usize {
        self.plans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }

    /// Every plan, sorted by token, for logs and tests.
    pub fn snapshot(&self) -> Vec<ApprovedPlan> {
        let mut plans: Vec<ApprovedPlan> = self.plans.iter().map(|entry| entry.clone()).collect();
        plans.sort_by(|left, right| left.token.cmp(&right.token));
        plans
    }

    /// Callers hold `changes`.
    fn project_removed(&self, project_id: &str) {
        let key = project_key(project_id);
        self.plans.retain(|_, plan| {
            let kept = project_key(&plan.project_id) != key;
            if !kept {
                self.released(plan);
            }
            kept
        });
    }

    /// `()` behind the lock cannot be left inconsistent by a panicking holder.
    fn changes_locked(&self) -> MutexGuard<'_, ()> {
        self.changes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The plan `approval` registers at `now` under the rules of §3 `g0f` (the store's bounds are
/// the store's), or the first rule it breaks. Pure: every store registers through it.
pub fn registered_plan(
    approval: &PlanApproval<'_>,
    now: OffsetDateTime,
) -> Result<ApprovedPlan, PlanRefusal> {
    registration_rules_checked(approval)?;
    Ok(ApprovedPlan {
        token: approval.token.to_owned(),
        project_id: approval.project_id.to_owned(),
        writes: normalized(approval.writes.iter()),
        deletes: normalized(approval.deletes.iter()),
        expires_at: plan_expiry(approval.server_expiry, now)?,
    })
}

/// What `plan` costs against the plan byte budget.
pub fn approved_plan_bytes(plan: &ApprovedPlan) -> usize {
    size(plan)
}

/// Fails with the first registration rule the approval breaks, in the order of §3 `g0f`
/// (expiry is checked separately, last).
fn registration_rules_checked(approval: &PlanApproval<'_>) -> Result<(), PlanRefusal> {
    if !approval.ask_was_shown {
        return Err(PlanRefusal::AskNotShown);
    }
    if !approval.prompt_reaches_user {
        return Err(PlanRefusal::PromptUnreachable);
    }
    if !approval.main_agent_without_hook {
        return Err(PlanRefusal::NotMainAgentWithoutHook);
    }
    if approval.result_is_error {
        return Err(PlanRefusal::ErrorResult);
    }
    if approval.token.is_empty() {
        return Err(PlanRefusal::EmptyToken);
    }
    if approval.scope == Some("project") {
        return Err(PlanRefusal::ProjectScope);
    }
    // With no paths the path rules cannot fail, so this isolates the project id rule.
    if !plan_registrable(approval.project_id, &[], &[]) {
        return Err(PlanRefusal::ProjectNotRegistrable {
            project_id: approval.project_id.to_owned(),
        });
    }
    if !plan_registrable(approval.project_id, approval.writes, approval.deletes) {
        return Err(PlanRefusal::PathsNotRegistrable);
    }
    Ok(())
}

/// `min(server expiry, now + 15 min)`, or `now + 15 min` when the server gave none. Saturating:
/// a `now` at the end of the representable range must not panic.
fn plan_expiry(
    server_expiry: Option<OffsetDateTime>,
    now: OffsetDateTime,
) -> Result<OffsetDateTime, PlanRefusal> {
    let local_limit = now.saturating_add(PLAN_TTL);
    match server_expiry {
        None => Ok(local_limit),
        Some(server_expiry) if server_expiry <= now => {
            Err(PlanRefusal::ExpiryPassed { server_expiry })
        }
        Some(server_expiry) => Ok(server_expiry.min(local_limit)),
    }
}

fn size(plan: &ApprovedPlan) -> usize {
    let paths = plan.writes.iter().chain(plan.deletes.iter());
    plan_bytes(&plan.token, &plan.project_id, paths)
}

/// What one plan costs in memory, about: its strings, an entry per path and the map's slot.
pub fn plan_bytes<'a>(
    token: &str,
    project_id: &str,
    paths: impl Iterator<Item = &'a String>,
) -> usize {
    const PLAN_ENTRY_BYTES: usize = 256;
    const PATH_ENTRY_BYTES: usize = 48;
    let paths: usize = paths.map(|path| path.len() + PATH_ENTRY_BYTES).sum();
    PLAN_ENTRY_BYTES + 2 * token.len() + project_id.len() + paths
}

fn normalized<'a>(paths: impl Iterator<Item = &'a String>) -> PathSet {
    PathSet::new(paths.map(|path| normalize(path)).collect())
}

#[cfg(test)]
#[path = "plans_tests.rs"]
mod tests;
