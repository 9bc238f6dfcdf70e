//! server::journal: writes the service's decisions, approvals and outcomes to the decision
//! log. A decision is durable before its call goes upstream; when the log cannot be written
//! the call is refused (unless configured otherwise) and the reason says why.

use time::OffsetDateTime;

use super::error::ApiError;
use super::gateway::Prepared;
use crate::audit::record::{
    format_time, ApprovalAction, ApprovalRecord, ApprovalRecordKind, DecisionOrigin,
    DecisionRecord, OutcomeKind, OutcomeRecord, OutcomeStatus, Record, Version,
};
use crate::audit::writer::DecisionLog;
use crate::authz::Decision;

/// The account name decisions are logged under (one upstream account per service).
pub const ACCOUNT: &str = "default";

pub struct Journal {
    log: Option<DecisionLog>,
    refuse_without_log: bool,
}

impl Journal {
    pub fn new(log: Option<DecisionLog>, refuse_without_log: bool) -> Self {
        Self {
            log,
            refuse_without_log,
        }
    }

    pub fn disabled() -> Self {
        Self {
            log: None,
            refuse_without_log: false,
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.log.is_some()
    }

    /// Appends the decision (with the shadow set's, if any) and waits until it is durable.
    pub async fn decided(
        &self,
        prepared: &Prepared,
        decision: &Decision,
        shadow: Option<&Decision>,
        now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        let origin = DecisionOrigin {
            id: prepared.decision_id.clone(),
            time: now,
            account: ACCOUNT.to_string(),
            session: prepared.session_id.clone(),
        };
        let mut record = DecisionRecord::new(origin, &prepared.facts, decision);
        if let Some(shadow) = shadow {
            record = record.with_shadow(shadow);
        }
        self.append(Record::Decision(Box::new(record))).await
    }

    pub async fn approval(
        &self,
        decision_id: &str,
        approval_id: &str,
        action: ApprovalAction,
        by: &str,
        now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        let record = ApprovalRecord {
            v: Version,
            kind: ApprovalRecordKind,
            id: uuid::Uuid::new_v4().to_string(),
            time: format_time(now),
            decision_id: decision_id.to_string(),
            approval_id: approval_id.to_string(),
            action,
            by: by.to_string(),
        };
        self.append(Record::Approval(record)).await
    }

    /// Links an execution's outcome to its decision. Best effort: the call already ran.
    pub async fn outcome(
        &self,
        decision_id: &str,
        result: &serde_json::Value,
        now: OffsetDateTime,
    ) {
        let error_kind = result
            .get("error")
            .and_then(|kind| kind.as_str())
            .map(str::to_string);
        let record = OutcomeRecord {
            v: Version,
            kind: OutcomeKind,
            id: uuid::Uuid::new_v4().to_string(),
            time: format_time(now),
            decision_id: decision_id.to_string(),
            status: if error_kind.is_some() {
                OutcomeStatus::Error
            } else {
                OutcomeStatus::Ok
            },
            error_kind,
        };
        if let Err(error) = self.append(Record::Outcome(record)).await {
            tracing::warn!(%error, "outcome not logged");
        }
    }

    async fn append(&self, record: Record) -> Result<(), ApiError> {
        let Some(log) = &self.log else { return Ok(()) };
        match log.append(&record).await {
            Ok(()) => Ok(()),
            Err(error) if self.refuse_without_log => Err(ApiError::Unavailable(format!(
                "the decision log cannot be written ({error}); the call is refused"
            ))),
            Err(error) => {
                tracing::error!(%error, "decision log write failed; continuing as configured (log_failure = allow)");
                Ok(())
            }
        }
    }
}
