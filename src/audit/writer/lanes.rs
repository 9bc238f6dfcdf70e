//! audit::writer::lanes: the sync lanes, a small fixed pool of threads that run `sync_data` for
//! the writer thread, so the next batch is written while the last one's sync is still in flight
//! (one disk does several overlapping syncs a second for each one it does in a row). A lane
//! syncs the file description it is handed and reports the result in the batch's [`SyncSlot`];
//! it knows nothing of batches, files or acknowledgements (that is `pipeline`'s) and never
//! writes.

use std::fs::File;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How many syncs may be in flight at once: on the disks measured, two to three overlapping
/// `fdatasync` calls on one file complete three to five times as many syncs a second as one;
/// a fourth adds nothing.
pub(super) const SYNC_LANES: usize = 3;

/// What a sync ended with and how long it took.
pub(super) type Synced = (std::io::Result<()>, Duration);

/// The result of one sync, filled in once by a lane.
#[derive(Debug, Default)]
pub(super) struct SyncSlot {
    result: Mutex<Option<Synced>>,
    done: Condvar,
}

impl SyncSlot {
    /// A slot for a sync already run (when no lane could take it).
    pub(super) fn completed(synced: Synced) -> Arc<SyncSlot> {
        let slot = Arc::new(SyncSlot::default());
        slot.fill(synced);
        slot
    }

    fn fill(&self, synced: Synced) {
        *self.result.lock().unwrap_or_else(PoisonError::into_inner) = Some(synced);
        self.done.notify_all();
    }

    /// The result, when the sync has completed.
    pub(super) fn take(&self) -> Option<Synced> {
        self.result
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Blocks until the sync has completed. No deadline here: a sync that hangs holds the
    /// writer thread as a hanging `sync_data` on it would, and the appenders' own deadline
    /// (`answer_deadline`) answers their calls meanwhile.
    pub(super) fn wait(&self) -> Synced {
        let mut result = self.result.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(synced) = result.take() {
                return synced;
            }
            result = self
                .done
                .wait(result)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// One sync to run: the description to sync (its own for each slot in flight, see
/// `rotation::Sink::sync_handles`) and where to report.
struct Job {
    file: Arc<File>,
    slot: Arc<SyncSlot>,
}

/// The pool. Dropping it ends the lanes once their syncs are done.
pub(super) struct Lanes {
    jobs: Option<SyncSender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl Lanes {
    /// `count` lanes; `completed` runs after each sync (it wakes the writer thread).
    pub(super) fn start(
        count: usize,
        completed: Arc<dyn Fn() + Send + Sync>,
    ) -> std::io::Result<Lanes> {
        // Bounded: the writer never has more than `count` syncs in flight, so a send never waits.
        let (jobs, receiver) = sync_channel::<Job>(count);
        let receiver = Arc::new(Mutex::new(receiver));
        let mut threads = Vec::with_capacity(count);
        for index in 0..count {
            let receiver = Arc::clone(&receiver);
            let completed = Arc::clone(&completed);
            let thread = std::thread::Builder::new()
                .name(format!("askgate-log-sync-{index}"))
                .spawn(move || run(&receiver, &*completed))?;
            threads.push(thread);
        }
        Ok(Lanes {
            jobs: Some(jobs),
            threads,
        })
    }

    /// Starts syncing `file`; the result goes to the returned slot. `None` when the lanes are
    /// gone (the caller syncs itself).
    pub(super) fn sync(&self, file: Arc<File>) -> Option<Arc<SyncSlot>> {
        let slot = Arc::new(SyncSlot::default());
        let job = Job {
            file,
            slot: Arc::clone(&slot),
        };
        self.jobs.as_ref()?.send(job).ok()?;
        Some(slot)
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        self.jobs = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn run(receiver: &Mutex<Receiver<Job>>, completed: &(dyn Fn() + Send + Sync)) {
    loop {
        let job = receiver
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(job) = job else { return };
        let started = Instant::now();
        let result = job.file.sync_data();
        drop(job.file);
        job.slot.fill((result, started.elapsed()));
        completed();
    }
}
