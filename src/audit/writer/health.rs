//! audit::writer::health: whether the decision log can be written, as the writer thread last
//! found it. The thread records each batch's result in the order it wrote them, so a late
//! acknowledgement of an old failure can never hide a later success. It holds no clock: when a
//! failure began is for the caller to stamp, by its period number.

use std::sync::{Mutex, PoisonError};

use super::LogError;

/// The log is failing: the last batch the writer tried could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFailure {
    /// Why the last batch failed (the latest cause, which may differ from the first).
    pub error: LogError,
    /// Which failure period this is since the log opened, from 1: it changes only when the log
    /// fails again after a written batch, so a caller can tell a new period from one it saw.
    pub period: u64,
}

/// The writer thread's record of the current failure, shared with the log's handle.
#[derive(Debug, Default)]
pub(super) struct FailureState {
    inner: Mutex<Periods>,
}

#[derive(Debug, Default)]
struct Periods {
    current: Option<LogFailure>,
    started: u64,
}

impl FailureState {
    /// Records the result of one batch: a failure starts or continues a period, a written batch
    /// ends it.
    pub(super) fn record(&self, result: &Result<(), LogError>) {
        let mut periods = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        match result {
            Ok(()) => periods.current = None,
            Err(error) => {
                let period = match &periods.current {
                    Some(failure) => failure.period,
                    None => periods.started.saturating_add(1),
                };
                periods.started = period;
                periods.current = Some(LogFailure {
                    error: error.clone(),
                    period,
                });
            }
        }
    }

    pub(super) fn current(&self) -> Option<LogFailure> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .current
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(message: &str) -> Result<(), LogError> {
        Err(LogError::Io {
            path: "logs".to_string(),
            message: message.to_string(),
        })
    }

    #[test]
    fn healthy_until_a_batch_fails() {
        let state = FailureState::default();
        assert_eq!(state.current(), None);
        state.record(&Ok(()));
        assert_eq!(state.current(), None);
    }

    #[test]
    fn a_period_keeps_its_number_and_reports_the_latest_cause() {
        let state = FailureState::default();
        state.record(&io("disk full"));
        state.record(&io("not a directory"));
        let failure = state.current().unwrap();
        assert_eq!(failure.period, 1);
        assert_eq!(failure.error, io("not a directory").unwrap_err());
    }

    #[test]
    fn one_written_batch_ends_a_period_and_the_next_failure_starts_another() {
        let state = FailureState::default();
        state.record(&io("disk full"));
        state.record(&Ok(()));
        assert_eq!(state.current(), None);
        state.record(&io("disk full"));
        assert_eq!(state.current().unwrap().period, 2);
    }
}
