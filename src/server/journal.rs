//! server::journal: writes the service's decisions, approvals and outcomes to the decision
//! log. A decision is durable before its call goes upstream; when the log cannot be written
//! the call is refused (unless configured otherwise) and the reason says why. An outcome is
//! logged after its call ran: the answer waits until it is written, not synced. What `/healthz`
//! says about the log is `health`'s, what `/metrics` says is `metrics`'; its configuration
//! (the `log_*` keys) is `settings`'.

mod health;
mod metrics;
pub mod settings;

use time::OffsetDateTime;
use tracing::Instrument;

use super::error::ApiError;
use super::prepared::{FrontDoor, Prepared};
use crate::audit::record::{
    format_time, ApprovalAction, ApprovalRecord, ApprovalRecordKind, DecisionOrigin,
    DecisionRecord, FrontDoorV1, OutcomeKind, OutcomeRecord, OutcomeStatus, PolicySetV1, Record,
    Version,
};
use crate::audit::writer::{DecisionLog, LogError};
use crate::authz::Decision;
use health::FailureStamps;
use metrics::{Answers, Unlogged, UnloggedCounts};

pub use health::{LogHealth, LogState};

/// The account name decisions are logged under (one upstream account per service).
pub const ACCOUNT: &str = "default";

/// One answer to an ask, as its approval record says it.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The ask's decision.
    pub decision_id: &'a str,
    pub approval_id: &'a str,
    pub action: ApprovalAction,
    pub by: &'a str,
    pub note: Option<&'a str>,
    /// The digest of the call the answer was given for (the approval's binding), when known.
    pub call: Option<&'a str>,
}

impl<'a> Answer<'a> {
    pub fn new(
        decision_id: &'a str,
        approval_id: &'a str,
        action: ApprovalAction,
        by: &'a str,
    ) -> Self {
        Self {
            decision_id,
            approval_id,
            action,
            by,
            note: None,
            call: None,
        }
    }

    pub fn note(self, note: Option<&'a str>) -> Self {
        Self { note, ..self }
    }

    /// The answered call's digest, from the approval's binding.
    pub fn bound(self, binding: Option<&'a crate::store::approvals::Binding>) -> Self {
        Self {
            call: binding.map(|binding| binding.call.as_str()),
            ..self
        }
    }
}

pub struct Journal {
    log: Option<DecisionLog>,
    refuse_without_log: bool,
    failures: FailureStamps,
    unlogged: UnloggedCounts,
    /// Approvals' answers logged, by action.
    answers: Answers,
    /// The public key (hex) the log's checkpoints are signed with.
    checkpoint_key: Option<String>,
}

impl Journal {
    pub fn new(log: Option<DecisionLog>, refuse_without_log: bool) -> Self {
        Self {
            log,
            refuse_without_log,
            failures: FailureStamps::default(),
            unlogged: UnloggedCounts::default(),
            answers: Answers::default(),
            checkpoint_key: None,
        }
    }

    /// The journal whose log signs its checkpoints with the key whose public half is `public`.
    pub fn with_checkpoint_key(mut self, public: String) -> Self {
        self.checkpoint_key = Some(public);
        self
    }

    /// The public key (hex) of the log's checkpoints, when there is a log.
    pub fn checkpoint_key(&self) -> Option<&str> {
        self.checkpoint_key.as_deref()
    }

    pub fn disabled() -> Self {
        Self::new(None, false)
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
        let tool_use_id = prepared.arrival.tool_use_id.as_deref();
        let set = PolicySetV1::Live;
        self.record_decision(prepared, decision, shadow, (tool_use_id, set), now)
            .await
    }

    /// A decision that answered a client's hook, with the client's id for the tool call.
    pub async fn hook_decided(
        &self,
        prepared: &Prepared,
        decision: &Decision,
        tool_use_id: &str,
        now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        let set = PolicySetV1::Hook;
        self.record_decision(prepared, decision, None, (Some(tool_use_id), set), now)
            .await
    }

    async fn record_decision(
        &self,
        prepared: &Prepared,
        decision: &Decision,
        shadow: Option<&Decision>,
        (tool_use_id, set): (Option<&str>, PolicySetV1),
        now: OffsetDateTime,
    ) -> Result<(), ApiError> {
        if !self.is_enabled() {
            return Ok(());
        }
        let origin = DecisionOrigin {
            id: prepared.decision_id.clone(),
            time: now,
            account: ACCOUNT.to_string(),
            session: prepared.intake.session_key.id.clone(),
            tool_use_id: tool_use_id.map(str::to_string),
        };
        let mut record = match DecisionRecord::new(origin, &prepared.facts, decision) {
            Ok(record) => record.decided_on(set, prepared.arrival.front_door.map(door)),
            Err(error) => {
                return self.not_written(&LogError::Encode(error.to_string()), Unlogged::Decision)
            }
        };
        if let Some(shadow) = shadow {
            record = record.with_shadow(shadow);
        }
        self.append(Record::Decision(Box::new(record)), now)
            .await
            .or_else(|error| self.not_written(&error, Unlogged::Decision))
    }

    /// Logs an approver's (or the sweeper's) answer to an ask, under the ask's decision.
    pub async fn approval(&self, answer: Answer<'_>, now: OffsetDateTime) -> Result<(), ApiError> {
        let record = ApprovalRecord {
            v: Version::CURRENT,
            kind: ApprovalRecordKind,
            id: uuid::Uuid::new_v4().to_string(),
            time: format_time(now),
            decision_id: answer.decision_id.to_string(),
            approval_id: answer.approval_id.to_string(),
            action: answer.action,
            by: answer.by.to_string(),
            note: answer.note.map(str::to_string),
            call: answer.call.map(str::to_string),
        };
        let action = record.action;
        self.append(Record::Approval(record), now)
            .await
            .or_else(|error| self.not_written(&error, Unlogged::Approval))?;
        self.answers.count(action);
        Ok(())
    }

    /// Links an execution's outcome to its decision. Best effort: the call already ran, so its
    /// answer waits only until the record is written (it survives askgate's crash and is synced
    /// with its batch right after; a batch whose sync fails takes it back).
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
            v: Version::CURRENT,
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
        let record = Record::Outcome(record);
        export(&record);
        let Some(log) = &self.log else { return };
        let result = log.append_written(&record).await;
        if let Err(error) = result {
            self.stamp_failure(log, now);
            self.unlogged.count(Unlogged::Outcome);
            tracing::warn!(%error, "outcome not logged");
        }
    }

    /// The log's state now; `None` when no log is configured. Once the writer reports a write
    /// that succeeded, it is `ok` again.
    pub fn health(&self, now: OffsetDateTime) -> Option<LogHealth> {
        let log = self.log.as_ref()?;
        Some(self.failures.health(log.failure().as_ref(), now))
    }

    /// Adds the approvals' answers and the log's metrics to this scrape's `registry` (the
    /// log's: none when no log is configured).
    pub fn scraped(&self, registry: &mut prometheus_client::registry::Registry) {
        registry.register_collector(Box::new(self.answers.read()));
        if let Some(log) = &self.log {
            registry.register_collector(Box::new(self.unlogged.read(log.stats())));
        }
    }

    /// Appends `record` and waits until it is synced.
    async fn append(&self, record: Record, now: OffsetDateTime) -> Result<(), LogError> {
        export(&record);
        let Some(log) = &self.log else { return Ok(()) };
        let span = crate::trace::log_sync_span(record_kind(&record));
        let result = log.append(&record).instrument(span).await;
        if result.is_err() {
            self.stamp_failure(log, now);
        }
        result
    }

    /// Stamped at the failing write, not at the next `/healthz`, so `since` is when writes
    /// began to fail.
    fn stamp_failure(&self, log: &DecisionLog, now: OffsetDateTime) {
        if let Some(failure) = log.failure() {
            self.failures.since(&failure, now);
        }
    }

    /// A record that could not be written: the call is refused unless configured otherwise,
    /// and then counted as unlogged.
    fn not_written(&self, error: &LogError, kind: Unlogged) -> Result<(), ApiError> {
        if self.refuse_without_log {
            return Err(ApiError::Unavailable(format!(
                "the decision log cannot be written ({error}); the call is refused"
            )));
        }
        self.unlogged.count(kind);
        tracing::error!(%error, "decision log write failed; continuing as configured (log_failure = allow)");
        Ok(())
    }
}

/// The front door as the log writes it.
fn door(door: FrontDoor) -> FrontDoorV1 {
    match door {
        FrontDoor::Http => FrontDoorV1::Http,
        FrontDoor::Mcp => FrontDoorV1::Mcp,
        FrontDoor::Hook => FrontDoorV1::Hook,
    }
}

/// The record as an OTLP log record, when `telemetry.decision_records` exports them: its JSON
/// line as the file log has it (the same redaction: the record holds no token).
fn export(record: &Record) {
    if tracing::enabled!(target: "askgate::decision_record", tracing::Level::INFO) {
        if let Ok(line) = serde_json::to_string(record) {
            let kind = record_kind(record);
            tracing::info!(target: "askgate::decision_record", { "askgate.record" = kind }, "{line}");
        }
    }
}

fn record_kind(record: &Record) -> &'static str {
    match record {
        Record::Decision(_) => "decision",
        Record::Approval(_) => "approval",
        Record::Outcome(_) => "outcome",
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::audit::writer::{Durability, LogOptions};

    /// The service clock of these tests: the epoch, then five minutes on.
    const FIRST: OffsetDateTime = OffsetDateTime::UNIX_EPOCH;
    const LATER: OffsetDateTime = FIRST.saturating_add(time::Duration::minutes(5));

    /// A journal whose every write after the first lists its directory (one line per file), so
    /// replacing the directory with a file makes writes fail until it is put back.
    fn journal(logs: &Path, refuse_without_log: bool) -> Journal {
        let options = LogOptions {
            max_file_bytes: 1,
            durability: Durability::None,
            // Every write is tried, so a test sees recovery on the first write after it.
            first_retry: std::time::Duration::ZERO,
            ..LogOptions::default()
        };
        Journal::new(
            Some(DecisionLog::open(logs, options).unwrap()),
            refuse_without_log,
        )
    }

    async fn write(journal: &Journal, now: OffsetDateTime) -> Result<(), ApiError> {
        journal
            .approval(
                Answer::new("d", "a", ApprovalAction::Approved, "approver"),
                now,
            )
            .await
    }

    fn block(logs: &Path) -> PathBuf {
        let aside = logs.with_extension("aside");
        std::fs::rename(logs, &aside).unwrap();
        std::fs::write(logs, "").unwrap();
        aside
    }

    fn unblock(logs: &Path, aside: &Path) {
        std::fs::remove_file(logs).unwrap();
        std::fs::rename(aside, logs).unwrap();
    }

    fn ok() -> Option<LogHealth> {
        Some(LogHealth {
            state: LogState::Ok,
            error: None,
            since: None,
        })
    }

    #[test]
    fn no_log_has_no_health() {
        assert_eq!(Journal::disabled().health(FIRST), None);
    }

    #[tokio::test]
    async fn a_failing_log_is_reported_from_its_first_failure_until_a_write_succeeds() {
        let work = tempfile::tempdir().unwrap();
        let logs = work.path().join("logs");
        let journal = journal(&logs, true);
        assert_eq!(journal.health(FIRST), ok(), "nothing written yet");
        write(&journal, FIRST).await.unwrap();
        assert_eq!(journal.health(FIRST), ok());

        let aside = block(&logs);
        let refused = write(&journal, FIRST).await.unwrap_err();
        assert!(refused.to_string().contains("decision log"), "{refused}");
        write(&journal, LATER).await.unwrap_err();
        let health = journal.health(LATER).unwrap();
        assert!(health.is_failing());
        assert_eq!(health.since.as_deref(), Some("1970-01-01T00:00:00.000Z"));
        let error = health.error.unwrap();
        assert!(error.contains(&logs.display().to_string()), "{error}");

        unblock(&logs, &aside);
        assert!(journal.health(LATER).unwrap().is_failing(), "until a write");
        write(&journal, LATER).await.unwrap();
        assert_eq!(journal.health(LATER), ok());

        block(&logs);
        write(&journal, LATER).await.unwrap_err();
        let again = journal.health(LATER).unwrap();
        assert_eq!(again.since.as_deref(), Some("1970-01-01T00:05:00.000Z"));
    }

    #[tokio::test]
    async fn a_failing_log_is_reported_even_when_calls_go_on() {
        let work = tempfile::tempdir().unwrap();
        let logs = work.path().join("logs");
        let journal = journal(&logs, false);
        write(&journal, FIRST).await.unwrap();
        block(&logs);
        write(&journal, FIRST).await.unwrap();
        assert!(journal.health(LATER).unwrap().is_failing());
    }
}
