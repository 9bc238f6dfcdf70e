//! server::approvals: pending approvals — the call, its card and an expiry — and their life:
//! pending → running (exactly one approver wins) → completed, or refused / expired.

use std::sync::{Arc, Mutex, PoisonError};

use dashmap::DashMap;
use serde::Serialize;
use time::OffsetDateTime;
use tokio::sync::Notify;

use super::error::ApiError;
use crate::authz::{Approval, ApprovalKind};
use crate::call::{DesignCall, ProjectsCall};
use crate::facts::{CallSummary, Session};

/// The call an approval will run.
#[derive(Debug, Clone)]
pub enum ApprovedCall {
    Design(DesignCall),
    Projects(ProjectsCall),
}

#[derive(Debug, Clone)]
pub struct PendingCall {
    pub session_id: String,
    pub session: Session,
    pub call: ApprovedCall,
    pub kinds: Vec<ApprovalKind>,
    pub decision_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Pending,
    Running,
    Completed,
    Refused,
    Expired,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Refused => "refused",
            Self::Expired => "expired",
        }
    }
}

/// What approvers and the asking agent see.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalView {
    pub id: String,
    pub status: ApprovalStatus,
    pub requested_by: String,
    pub session_id: String,
    pub summary: CallSummary,
    pub card: Approval,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
    pub approved_by: Option<String>,
    pub result: Option<serde_json::Value>,
}

#[derive(Debug)]
struct Entry {
    view: Mutex<ApprovalView>,
    call: PendingCall,
    changed: Notify,
}

#[derive(Debug, Default)]
pub struct ApprovalStore {
    entries: DashMap<String, Arc<Entry>>,
}

impl ApprovalStore {
    pub fn create(&self, view: ApprovalView, call: PendingCall) -> ApprovalView {
        let id = view.id.clone();
        let entry = Arc::new(Entry {
            view: Mutex::new(view.clone()),
            call,
            changed: Notify::new(),
        });
        self.entries.insert(id, entry);
        view
    }

    pub fn view(&self, id: &str, now: OffsetDateTime) -> Result<ApprovalView, ApiError> {
        let entry = self.entry(id)?;
        Ok(expire_if_due(&entry, now))
    }

    pub fn pending(&self, now: OffsetDateTime) -> Vec<ApprovalView> {
        let mut views: Vec<ApprovalView> = self
            .entries
            .iter()
            .map(|entry| expire_if_due(entry.value(), now))
            .filter(|view| view.status == ApprovalStatus::Pending)
            .collect();
        views.sort_by_key(|view| view.created_at);
        views
    }

    /// Every approval no longer pending (expiry applied), oldest first.
    pub fn decided(&self, now: OffsetDateTime) -> Vec<ApprovalView> {
        let mut views: Vec<ApprovalView> = self
            .entries
            .iter()
            .map(|entry| expire_if_due(entry.value(), now))
            .filter(|view| view.status != ApprovalStatus::Pending)
            .collect();
        views.sort_by_key(|view| view.created_at);
        views
    }

    pub fn pending_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|entry| status(entry.value()) == ApprovalStatus::Pending)
            .count()
    }

    /// Moves a pending approval to running for `approver`; only one caller ever succeeds.
    pub fn start(
        &self,
        id: &str,
        approver: &str,
        now: OffsetDateTime,
    ) -> Result<PendingCall, ApiError> {
        let entry = self.entry(id)?;
        let mut view = lock(&entry);
        still_pending(&mut view, id, now)?;
        view.status = ApprovalStatus::Running;
        view.approved_by = Some(approver.to_string());
        Ok(entry.call.clone())
    }

    pub fn complete(&self, id: &str, result: serde_json::Value) {
        if let Ok(entry) = self.entry(id) {
            let mut view = lock(&entry);
            view.status = ApprovalStatus::Completed;
            view.result = Some(result);
            drop(view);
            entry.changed.notify_waiters();
        }
    }

    pub fn refuse(&self, id: &str, now: OffsetDateTime) -> Result<ApprovalView, ApiError> {
        let entry = self.entry(id)?;
        let mut view = lock(&entry);
        still_pending(&mut view, id, now)?;
        view.status = ApprovalStatus::Refused;
        let refused = view.clone();
        drop(view);
        entry.changed.notify_waiters();
        Ok(refused)
    }

    /// Waits until the approval leaves pending/running or `timeout` passes.
    pub async fn wait(
        &self,
        id: &str,
        timeout: std::time::Duration,
        now: impl Fn() -> OffsetDateTime,
    ) -> Result<ApprovalView, ApiError> {
        let entry = self.entry(id)?;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = entry.changed.notified();
            let view = expire_if_due(&entry, now());
            if !matches!(
                view.status,
                ApprovalStatus::Pending | ApprovalStatus::Running
            ) {
                return Ok(view);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Ok(expire_if_due(&entry, now()));
            }
        }
    }

    /// The decision an approval belongs to.
    pub fn decision_id(&self, id: &str) -> Option<String> {
        self.entries
            .get(id)
            .map(|entry| entry.call.decision_id.clone())
    }

    fn entry(&self, id: &str) -> Result<Arc<Entry>, ApiError> {
        self.entries
            .get(id)
            .map(|entry| Arc::clone(entry.value()))
            .ok_or_else(|| ApiError::UnknownApproval(id.to_string()))
    }
}

/// Expires a due approval, then fails unless it is still pending.
fn still_pending(view: &mut ApprovalView, id: &str, now: OffsetDateTime) -> Result<(), ApiError> {
    if view.status == ApprovalStatus::Pending && now >= view.expires_at {
        view.status = ApprovalStatus::Expired;
    }
    if view.status != ApprovalStatus::Pending {
        return Err(ApiError::ApprovalClosed {
            id: id.to_string(),
            status: view.status.as_str().to_string(),
        });
    }
    Ok(())
}

fn lock(entry: &Entry) -> std::sync::MutexGuard<'_, ApprovalView> {
    entry.view.lock().unwrap_or_else(PoisonError::into_inner)
}

fn status(entry: &Entry) -> ApprovalStatus {
    lock(entry).status
}

fn expire_if_due(entry: &Entry, now: OffsetDateTime) -> ApprovalView {
    let mut view = lock(entry);
    if view.status == ApprovalStatus::Pending && now >= view.expires_at {
        view.status = ApprovalStatus::Expired;
    }
    view.clone()
}
