//! server::journal::health: the decision log's state as `/healthz` shows it — `ok`, or
//! `failing` with the latest cause and since when. The writer says whether the last write
//! failed and numbers each failure period; this module stamps a period with the service's clock
//! the first time it is seen, so `since` stays put until a write succeeds again. It must not
//! write to the log or decide whether calls are refused.

use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use time::OffsetDateTime;

use crate::audit::record::format_time;
use crate::audit::writer::LogFailure;

/// The decision log's state in `/healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogHealth {
    pub state: LogState,
    /// Why the last write failed; `None` while `ok`.
    pub error: Option<String>,
    /// When the service first saw the current failure (RFC 3339); `None` while `ok`.
    pub since: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogState {
    /// Nothing written yet, or the last write succeeded.
    Ok,
    /// The last write failed; calls are refused under `log_failure = refuse`.
    Failing,
}

impl LogHealth {
    pub fn is_failing(&self) -> bool {
        self.state == LogState::Failing
    }
}

/// When the service first saw the log's current failure period: `(period, time)`.
#[derive(Debug, Default)]
pub(super) struct FailureStamps {
    current: Mutex<Option<(u64, OffsetDateTime)>>,
}

impl FailureStamps {
    /// When `failure`'s period was first seen; `now` (and remembered) when this is the first
    /// time, or when a new period replaced an older one.
    pub(super) fn since(&self, failure: &LogFailure, now: OffsetDateTime) -> OffsetDateTime {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        match *current {
            Some((period, time)) if period == failure.period => time,
            _ => {
                *current = Some((failure.period, now));
                now
            }
        }
    }

    /// The health of a log whose writer reports `failure` (`None`: the last write succeeded).
    pub(super) fn health(&self, failure: Option<&LogFailure>, now: OffsetDateTime) -> LogHealth {
        match failure {
            None => LogHealth {
                state: LogState::Ok,
                error: None,
                since: None,
            },
            Some(failure) => LogHealth {
                state: LogState::Failing,
                error: Some(failure.error.to_string()),
                since: Some(format_time(self.since(failure, now))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use time::macros::datetime;

    use super::*;
    use crate::audit::writer::LogError;

    const FIRST: OffsetDateTime = datetime!(2026-11-30 10:00:00 UTC);
    const LATER: OffsetDateTime = datetime!(2026-11-30 10:05:00.250 UTC);

    fn failure(period: u64, message: &str) -> LogFailure {
        LogFailure {
            error: LogError::Io {
                path: "logs/decisions-000001.jsonl".to_string(),
                message: message.to_string(),
            },
            period,
        }
    }

    #[test]
    fn a_period_keeps_the_time_it_was_first_seen() {
        let stamps = FailureStamps::default();
        assert_eq!(stamps.since(&failure(1, "disk full"), FIRST), FIRST);
        assert_eq!(stamps.since(&failure(1, "not a directory"), LATER), FIRST);
        assert_eq!(stamps.since(&failure(2, "disk full"), LATER), LATER);
        assert_eq!(stamps.since(&failure(2, "disk full"), FIRST), LATER);
    }

    #[test]
    fn failing_health_shows_the_latest_cause_and_since_when() {
        let stamps = FailureStamps::default();
        stamps.since(&failure(1, "disk full"), FIRST);
        let health = stamps.health(Some(&failure(1, "not a directory")), LATER);
        assert!(health.is_failing());
        assert_eq!(
            serde_json::to_value(&health).unwrap(),
            json!({
                "state": "failing",
                "error": "cannot write the decision log `logs/decisions-000001.jsonl`: not a directory",
                "since": "2026-11-30T10:00:00.000Z",
            })
        );
    }

    #[test]
    fn healthy_is_ok_without_error_or_since() {
        let health = FailureStamps::default().health(None, LATER);
        assert!(!health.is_failing());
        assert_eq!(
            serde_json::to_value(&health).unwrap(),
            json!({"state": "ok", "error": null, "since": null})
        );
    }
}
