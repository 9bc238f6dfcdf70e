//! audit::writer::batch: the completion every line of one group commit waits on, in two steps:
//! written (handed to the kernel: it survives askgate's crash, not the machine's) and finished
//! (synced in a file the log path names, or failed). The writer thread marks each step once and
//! wakes all the batch's waiters together (one `Notify` for async callers, one condition
//! variable for threads that block), so no line needs a channel, a task or a closure of its
//! own. It must not decide the result.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::LogError;

/// How far a batch has come.
#[derive(Debug, Default)]
struct Progress {
    written: bool,
    result: Option<Result<(), LogError>>,
}

/// What a waiter waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Its line is written (not yet synced); a failed batch answers with its error.
    Written,
    /// Its line is synced in a file the log path names, or the batch failed.
    Synced,
}

impl Progress {
    fn answer(&self, step: Step) -> Option<Result<(), LogError>> {
        match (&self.result, step) {
            (Some(result), _) => Some(result.clone()),
            (None, Step::Written) if self.written => Some(Ok(())),
            (None, _) => None,
        }
    }
}

/// One group commit's progress, shared by every line in it.
#[derive(Debug, Default)]
pub(super) struct Batch {
    progress: Mutex<Progress>,
    changed: Condvar,
    /// Wakes async waiters for [`Step::Written`] (on either step).
    on_written: tokio::sync::Notify,
    /// Wakes async waiters for [`Step::Synced`] (only when finished: no waking twice).
    on_finished: tokio::sync::Notify,
}

impl Batch {
    /// Every line of the batch is written; wakes the waiters for [`Step::Written`].
    pub(super) fn written(&self) {
        self.update(|progress| progress.written = true);
        self.on_written.notify_waiters();
    }

    /// Records the batch's result and wakes every waiter (the first result is kept).
    pub(super) fn finish(&self, result: Result<(), LogError>) {
        self.update(|progress| {
            progress.result.get_or_insert(result);
        });
        self.on_written.notify_waiters();
        self.on_finished.notify_waiters();
    }

    fn update(&self, change: impl FnOnce(&mut Progress)) {
        change(&mut self.progress.lock().unwrap_or_else(PoisonError::into_inner));
        self.changed.notify_all();
    }

    fn answer(&self, step: Step) -> Option<Result<(), LogError>> {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .answer(step)
    }

    /// Waits (asynchronously) until the batch reaches `step`, at most `deadline`.
    pub(super) async fn wait(&self, step: Step, deadline: Duration) -> Result<(), LogError> {
        let notify = match step {
            Step::Written => &self.on_written,
            Step::Synced => &self.on_finished,
        };
        let reached = async {
            loop {
                let notified = notify.notified();
                tokio::pin!(notified);
                // Registered before looking, so a change in between still wakes this wait.
                notified.as_mut().enable();
                if let Some(result) = self.answer(step) {
                    return result;
                }
                notified.await;
            }
        };
        tokio::time::timeout(deadline, reached)
            .await
            .unwrap_or(Err(LogError::Slow { deadline }))
    }

    /// [`Batch::wait`] for threads that may block.
    pub(super) fn wait_blocking(&self, step: Step, deadline: Duration) -> Result<(), LogError> {
        let until = Instant::now() + deadline;
        let mut progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(result) = progress.answer(step) {
                return result;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LogError::Slow { deadline });
            }
            progress = self
                .changed
                .wait_timeout(progress, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_waiter_gets_the_one_result() {
        let batch = Arc::new(Batch::default());
        let waiters: Vec<_> = (0..8)
            .map(|_| {
                let batch = Arc::clone(&batch);
                tokio::spawn(async move { batch.wait(Step::Synced, Duration::from_secs(10)).await })
            })
            .collect();
        let blocking = {
            let batch = Arc::clone(&batch);
            std::thread::spawn(move || batch.wait_blocking(Step::Synced, Duration::from_secs(10)))
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        batch.finish(Err(LogError::Closed));
        batch.finish(Ok(()));
        for waiter in waiters {
            assert_eq!(waiter.await.unwrap(), Err(LogError::Closed));
        }
        assert_eq!(blocking.join().unwrap(), Err(LogError::Closed));
        let late = batch.wait(Step::Written, Duration::ZERO).await;
        assert_eq!(
            late,
            Err(LogError::Closed),
            "a failed batch fails every step"
        );
    }

    #[tokio::test]
    async fn written_answers_before_synced() {
        let batch = Batch::default();
        let deadline = Duration::from_millis(10);
        assert_eq!(
            batch.wait(Step::Written, deadline).await,
            Err(LogError::Slow { deadline }),
            "a batch that never moves fails its waiters at the deadline"
        );
        batch.written();
        assert_eq!(batch.wait(Step::Written, deadline).await, Ok(()));
        assert_eq!(
            batch.wait_blocking(Step::Synced, deadline),
            Err(LogError::Slow { deadline })
        );
        batch.finish(Ok(()));
        assert_eq!(batch.wait_blocking(Step::Synced, deadline), Ok(()));
    }
}
