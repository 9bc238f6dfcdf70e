//! audit::writer::queue: the lines waiting for the writer threads. An appender copies its
//! encoded line into the batch that is filling and joins that batch's completion; a writer
//! thread takes the whole batch when it is free, so the next batch fills while the current one
//! is written and synced (pipelined group commit), and hands the emptied buffers back to be
//! used again. It bounds the bytes waiting and wakes one sleeping writer thread only when none
//! is already on its way. It must not touch files or decide a batch's result.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::batch::Batch;
use super::LogError;

/// The lines of one group commit: their bytes end to end, where each ends, and whom to tell.
#[derive(Debug, Default)]
pub(super) struct Filling {
    pub(super) bytes: Vec<u8>,
    /// The end offset in `bytes` of each line.
    pub(super) ends: Vec<usize>,
    pub(super) batch: Arc<Batch>,
    /// When the first line joined (how long lines wait for the writer).
    pub(super) since: Option<Instant>,
}

impl Filling {
    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.batch = Arc::default();
        self.since = None;
    }
}

#[derive(Debug, Default)]
struct State {
    filling: Filling,
    /// The buffers of the batch last written, emptied, for the next batch to fill.
    spare: Option<Filling>,
    /// Bytes taken by the writers and not yet answered.
    in_flight: usize,
    /// Writer threads asleep waiting for lines.
    sleepers: usize,
    /// One of them was woken and has not looked yet: a line pushed meanwhile wakes no other.
    wake_pending: bool,
    closed: bool,
}

/// Shared by every appender and the writer thread.
#[derive(Debug)]
pub(super) struct Queue {
    state: Mutex<State>,
    wake_writer: Condvar,
    /// The most bytes filling and in flight together.
    limit: usize,
}

impl Queue {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            state: Mutex::default(),
            wake_writer: Condvar::new(),
            limit,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `line` (one encoded record, newline included) to the filling batch and returns
    /// that batch's completion; past the byte bound it fails at once and nothing is added.
    pub(super) fn push(&self, line: &[u8]) -> Result<Arc<Batch>, LogError> {
        let mut state = self.lock();
        if state.closed {
            return Err(LogError::Closed);
        }
        let waiting = state.filling.bytes.len() + state.in_flight;
        if waiting.saturating_add(line.len()) > self.limit {
            return Err(LogError::Full { limit: self.limit });
        }
        let filling = &mut state.filling;
        filling.bytes.extend_from_slice(line);
        filling.ends.push(filling.bytes.len());
        filling.since.get_or_insert_with(Instant::now);
        let batch = Arc::clone(&filling.batch);
        if state.sleepers > 0 && !state.wake_pending {
            state.wake_pending = true;
            self.wake_writer.notify_one();
        }
        Ok(batch)
    }

    /// The next batch: blocks until a line waits; `None` once closed and drained.
    #[cfg(test)]
    pub(super) fn take(&self) -> Option<Filling> {
        loop {
            if !self.wait_for_lines() {
                return None;
            }
            if let Some(filling) = self.try_take() {
                return Some(filling);
            }
        }
    }

    /// Blocks until a line waits (true) or the queue is closed and drained (false). The lines
    /// are taken with [`Queue::try_take`], which another writer thread may do first.
    pub(super) fn wait_for_lines(&self) -> bool {
        let mut state = self.lock();
        loop {
            if !state.filling.ends.is_empty() {
                return true;
            }
            if state.closed {
                return false;
            }
            state.sleepers += 1;
            state = self
                .wake_writer
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.sleepers -= 1;
            state.wake_pending = false;
        }
    }

    /// The lines that filled meanwhile, if any.
    pub(super) fn try_take(&self) -> Option<Filling> {
        let mut state = self.lock();
        if state.filling.ends.is_empty() {
            return None;
        }
        let next = state.spare.take().unwrap_or_default();
        let taken = std::mem::replace(&mut state.filling, next);
        state.in_flight += taken.bytes.len();
        Some(taken)
    }

    /// Gives a written batch's buffers back (its bytes no longer count against the bound).
    pub(super) fn give_back(&self, mut written: Filling) {
        let size = written.bytes.len();
        written.clear();
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(size);
        state.spare = Some(written);
    }

    /// Bytes filling and in flight.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> usize {
        let state = self.lock();
        state.filling.bytes.len() + state.in_flight
    }

    /// No line is accepted from now on; the writers drain what waits, then stop.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.wake_writer.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fill_one_batch_until_the_writer_takes_it() {
        let queue = Queue::new(1024);
        let first = queue.push(b"a\n").unwrap();
        let second = queue.push(b"bc\n").unwrap();
        assert!(Arc::ptr_eq(&first, &second), "one completion per batch");
        let taken = queue.take().unwrap();
        assert_eq!(taken.bytes, b"a\nbc\n");
        assert_eq!(taken.ends, vec![2, 5]);
        let third = queue.push(b"d\n").unwrap();
        assert!(
            !Arc::ptr_eq(&first, &third),
            "the next batch fills meanwhile"
        );
        assert_eq!(queue.waiting(), 7);
        queue.give_back(taken);
        assert_eq!(queue.waiting(), 2);
        assert_eq!(queue.take().unwrap().bytes, b"d\n");
    }

    #[test]
    fn the_bound_counts_lines_in_flight_and_a_closed_queue_drains_then_ends() {
        let queue = Queue::new(4);
        queue.push(b"ab\n").unwrap();
        let taken = queue.take().unwrap();
        assert_eq!(queue.push(b"c\n").err(), Some(LogError::Full { limit: 4 }));
        queue.give_back(taken);
        queue.push(b"c\n").unwrap();
        queue.close();
        assert_eq!(queue.push(b"d\n").err(), Some(LogError::Closed));
        assert_eq!(queue.take().unwrap().bytes, b"c\n");
        assert!(queue.take().is_none());
    }
}
