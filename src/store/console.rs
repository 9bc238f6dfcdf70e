//! store::console: the seam of console sessions — [`ConsoleBook`], whose methods are the events
//! of a session's life (signed in, read, signed out), the [`ConsoleSession`] it keeps, and
//! [`MemoryConsole`], the bounded book of this process (`store::postgres` keeps the same book for
//! a fleet). Tokens, cookies and CSRF checks are `server::console::session`'s.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;

/// The most console sessions kept at once; past it the oldest is signed out.
pub const MAX_SESSIONS: usize = 1_024;

/// One signed-in approver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleSession {
    pub principal: String,
    /// The person's groups and email as the IdP named them at sign-in (empty for an approver
    /// token: its person comes from `callers`).
    pub groups: Vec<String>,
    pub email: String,
    pub csrf: String,
    pub expires_at: OffsetDateTime,
}

/// The console's sessions, wherever they are kept: the events of a session's life.
#[async_trait]
pub trait ConsoleBook: Send + Sync {
    /// Keeps `session` under `token`, the oldest signed out past [`MAX_SESSIONS`].
    async fn signed_in(
        &self,
        token: &str,
        session: &ConsoleSession,
        now: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// The live session under `token`; an expired one is forgotten.
    async fn current(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ConsoleSession>, StoreError>;
    async fn signed_out(&self, token: &str) -> Result<(), StoreError>;
}

/// Console sessions in this process.
#[derive(Debug, Default)]
pub struct MemoryConsole {
    by_token: Mutex<HashMap<String, ConsoleSession>>,
}

#[async_trait]
impl ConsoleBook for MemoryConsole {
    async fn signed_in(
        &self,
        token: &str,
        session: &ConsoleSession,
        now: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.insert(token, session, now);
        Ok(())
    }

    async fn current(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ConsoleSession>, StoreError> {
        Ok(self.live(token, now))
    }

    async fn signed_out(&self, token: &str) -> Result<(), StoreError> {
        self.locked().remove(token);
        Ok(())
    }
}

impl MemoryConsole {
    fn insert(&self, token: &str, session: &ConsoleSession, now: OffsetDateTime) {
        let mut sessions = self.locked();
        sessions.retain(|_, known| known.expires_at > now);
        while sessions.len() >= MAX_SESSIONS {
            let oldest = sessions
                .iter()
                .min_by_key(|(_, known)| known.expires_at)
                .map(|(token, _)| token.clone());
            match oldest {
                Some(token) => sessions.remove(&token),
                None => break,
            };
        }
        sessions.insert(token.to_string(), session.clone());
    }

    fn live(&self, token: &str, now: OffsetDateTime) -> Option<ConsoleSession> {
        let mut sessions = self.locked();
        match sessions.get(token) {
            Some(session) if session.expires_at > now => Some(session.clone()),
            Some(_) => {
                sessions.remove(token);
                None
            }
            None => None,
        }
    }

    pub fn len(&self) -> usize {
        self.locked().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, ConsoleSession>> {
        self.by_token.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
