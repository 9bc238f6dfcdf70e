//! Owns the one test seam of the `local_path` reader (client-facts §10.3): an end-to-end test
//! arms a one-shot action for one exact path and stage, so it can swap the file at a known
//! moment between the check and the read. Inert unless a test arms it; it must not change what
//! the reader checks, and production code must never arm it.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Where the reader is when an armed action runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalPathStage {
    /// The location passed the lexical and realpath checks; the file is not opened yet.
    Checked,
    /// The open descriptor passed verification; nothing has been read from it yet.
    Verified,
}

/// One armed action: runs once when `path` reaches `stage`.
struct ArmedAction {
    stage: LocalPathStage,
    path: PathBuf,
    action: Box<dyn FnOnce() + Send>,
}

/// Empty in production; only [`arm_for_tests`] adds to it.
static ARMED: Mutex<Vec<ArmedAction>> = Mutex::new(Vec::new());

/// FOR TESTS ONLY: runs `action` once, on the reader's thread, the next time a `local_path`
/// whose absolute, lexically normalized path is `path` reaches `stage`. Keyed by path so tests
/// running in parallel (each in its own temporary directory) never see each other's actions.
pub fn arm_for_tests(stage: LocalPathStage, path: PathBuf, action: impl FnOnce() + Send + 'static) {
    let mut armed = ARMED.lock().unwrap_or_else(PoisonError::into_inner);
    armed.push(ArmedAction {
        stage,
        path,
        action: Box::new(action),
    });
}

/// Called by the reader at each stage: takes the matching action, if any, and runs it after
/// the lock is released (the action may touch the file system for as long as it likes).
pub(crate) fn reach(stage: LocalPathStage, path: &Path) {
    let taken = {
        let mut armed = ARMED.lock().unwrap_or_else(PoisonError::into_inner);
        armed
            .iter()
            .position(|entry| entry.stage == stage && entry.path == path)
            .map(|index| armed.swap_remove(index))
    };
    if let Some(entry) = taken {
        (entry.action)();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use super::*;

    fn counting(path: &Path, stage: LocalPathStage) -> Arc<AtomicU32> {
        let runs = Arc::new(AtomicU32::new(0));
        let counter = Arc::clone(&runs);
        arm_for_tests(stage, path.to_path_buf(), move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        runs
    }

    #[test]
    fn an_armed_action_runs_once_at_its_stage_and_path_only() {
        let path = PathBuf::from("/nonexistent/test-seam/a.md");
        let runs = counting(&path, LocalPathStage::Verified);
        reach(LocalPathStage::Checked, &path);
        reach(
            LocalPathStage::Verified,
            Path::new("/nonexistent/test-seam/b.md"),
        );
        assert_eq!(runs.load(Ordering::SeqCst), 0);
        reach(LocalPathStage::Verified, &path);
        reach(LocalPathStage::Verified, &path);
        assert_eq!(runs.load(Ordering::SeqCst), 1, "one shot");
    }

    #[test]
    fn nothing_armed_is_a_no_op() {
        reach(
            LocalPathStage::Checked,
            Path::new("/nonexistent/test-seam/none.md"),
        );
    }
}
