//! server::mcp::held: the quota on `tools/call`s held open for an approver — at most
//! `mcp.max_held` in all and `mcp.max_held_per_caller` per principal, so one agent cannot
//! take every slot (a held call keeps an HTTP request and a task open). A slot is a permit
//! given back when the held call ends, however it ends. Bounded: a principal's entry goes
//! with its last permit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Why a call was not held.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeldLimit {
    #[error(
        "`mcp.max_held_per_caller`: `{principal}` already has {limit} calls held for approval"
    )]
    PerCaller { principal: String, limit: usize },
    #[error("`mcp.max_held`: askgate already holds {limit} MCP calls for approval")]
    Total { limit: usize },
}

#[derive(Debug, Default)]
struct Counts {
    all: usize,
    by_principal: HashMap<String, usize>,
}

#[derive(Debug)]
pub struct HeldCalls {
    counts: Mutex<Counts>,
    max_total: usize,
    max_per_caller: usize,
}

/// One held call's slot; given back on drop.
#[derive(Debug)]
pub struct HeldPermit {
    calls: Arc<HeldCalls>,
    principal: String,
}

impl HeldCalls {
    pub fn new(max_total: usize, max_per_caller: usize) -> Self {
        Self {
            counts: Mutex::default(),
            max_total,
            max_per_caller,
        }
    }

    /// A slot for one more call of `principal`, or which quota it would pass.
    pub fn try_hold(self: &Arc<Self>, principal: &str) -> Result<HeldPermit, HeldLimit> {
        let mut counts = self.lock();
        if counts.all >= self.max_total {
            return Err(HeldLimit::Total {
                limit: self.max_total,
            });
        }
        let held = counts.by_principal.get(principal).copied().unwrap_or(0);
        if held >= self.max_per_caller {
            return Err(HeldLimit::PerCaller {
                principal: principal.to_string(),
                limit: self.max_per_caller,
            });
        }
        counts.all += 1;
        *counts
            .by_principal
            .entry(principal.to_string())
            .or_default() += 1;
        Ok(HeldPermit {
            calls: Arc::clone(self),
            principal: principal.to_string(),
        })
    }

    /// How many calls are held now.
    pub fn held(&self) -> usize {
        self.lock().all
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for HeldPermit {
    fn drop(&mut self) {
        let mut counts = self.calls.lock();
        counts.all = counts.all.saturating_sub(1);
        if let Some(held) = counts.by_principal.get_mut(&self.principal) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                counts.by_principal.remove(&self.principal);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_principal_cannot_take_every_slot_and_slots_come_back() {
        let calls = Arc::new(HeldCalls::new(3, 2));
        let a1 = calls.try_hold("a");
        let a2 = calls.try_hold("a");
        assert!(a1.is_ok() && a2.is_ok());
        assert!(matches!(
            calls.try_hold("a"),
            Err(HeldLimit::PerCaller { limit: 2, .. })
        ));
        let b1 = calls.try_hold("b");
        assert!(b1.is_ok());
        assert_eq!(
            calls.try_hold("c").err(),
            Some(HeldLimit::Total { limit: 3 })
        );
        drop(a1);
        assert!(calls.try_hold("c").is_ok());
        drop((a2, b1));
        assert_eq!(calls.held(), 0);
        assert!(calls.lock().by_principal.is_empty());
    }
}
