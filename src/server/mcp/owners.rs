//! server::mcp::owners: which principal opened each MCP session (finding N3). A request, a
//! notification, a `GET` or a `DELETE` naming a session is served only for the principal that
//! opened it; for anyone else the session does not exist (404, as for an unknown one). It also
//! holds the session quotas, per principal and in total, so that one agent cannot take every
//! session. Bounded: an owner is kept only while rmcp still holds its session (entries of
//! sessions rmcp closed are pruned before every count), and no session is admitted past the
//! total cap.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

/// The longest session id taken from the header, in bytes (rmcp's own are UUIDs).
pub const SESSION_ID_BYTES: usize = 128;

/// Why a new session was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionLimit {
    #[error("`{principal}` already has {limit} open MCP sessions (`mcp.max_sessions_per_caller`): close one, or use the stateless 2026-07-28 protocol")]
    PerCaller { principal: String, limit: usize },
    #[error("the service already has {limit} open MCP sessions (`mcp.max_sessions`): try again when one closes")]
    Total { limit: usize },
}

#[derive(Debug)]
pub struct SessionOwners {
    owners: Mutex<HashMap<String, String>>,
    max_total: usize,
    max_per_caller: usize,
}

impl SessionOwners {
    pub fn new(max_total: usize, max_per_caller: usize) -> Self {
        Self {
            owners: Mutex::new(HashMap::new()),
            max_total,
            max_per_caller,
        }
    }

    /// Whether `id` is a session `principal` opened.
    pub fn belongs(&self, id: &str, principal: &str) -> bool {
        self.lock().get(id).is_some_and(|owner| owner == principal)
    }

    /// rmcp opened session `id` for `principal`: admitted under the quotas (counting only the
    /// sessions in `live`), or refused, in which case the caller closes it.
    pub fn opened(
        &self,
        id: &str,
        principal: &str,
        live: &HashSet<String>,
    ) -> Result<(), SessionLimit> {
        let mut owners = self.lock();
        owners.retain(|known, _| live.contains(known));
        if owners.len() >= self.max_total {
            return Err(SessionLimit::Total {
                limit: self.max_total,
            });
        }
        let held = owners.values().filter(|owner| *owner == principal).count();
        if held >= self.max_per_caller {
            return Err(SessionLimit::PerCaller {
                principal: principal.to_string(),
                limit: self.max_per_caller,
            });
        }
        owners.insert(id.to_string(), principal.to_string());
        Ok(())
    }

    /// The session ended (`DELETE`, or it was refused at open).
    pub fn closed(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.owners.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|id| (*id).to_string()).collect()
    }

    #[test]
    fn a_session_belongs_only_to_the_principal_that_opened_it() {
        let owners = SessionOwners::new(10, 10);
        assert_eq!(owners.opened("s1", "agent-one", &live(&["s1"])), Ok(()));
        assert!(owners.belongs("s1", "agent-one"));
        assert!(!owners.belongs("s1", "agent-two"));
        assert!(!owners.belongs("s2", "agent-one"));
        owners.closed("s1");
        assert!(!owners.belongs("s1", "agent-one"));
    }

    #[test]
    fn quotas_count_live_sessions_per_principal_and_in_all() {
        let owners = SessionOwners::new(3, 2);
        let all = live(&["a1", "a2", "a3", "b1", "b2"]);
        assert_eq!(owners.opened("a1", "a", &all), Ok(()));
        assert_eq!(owners.opened("a2", "a", &all), Ok(()));
        assert!(matches!(
            owners.opened("a3", "a", &all),
            Err(SessionLimit::PerCaller { limit: 2, .. })
        ));
        assert_eq!(owners.opened("b1", "b", &all), Ok(()));
        assert_eq!(
            owners.opened("b2", "b", &all),
            Err(SessionLimit::Total { limit: 3 })
        );
        // Sessions rmcp closed by itself no longer count.
        assert_eq!(owners.opened("b2", "b", &live(&["b1", "b2"])), Ok(()));
        assert!(!owners.belongs("a1", "a"));
    }
}
