//! server::console::session: who is signed in to the console. A session is a random token in an
//! `HttpOnly`, `Secure`, `SameSite=Strict` cookie scoped to `/console`, with an expiry and its
//! own CSRF token; the store is bounded (the oldest session goes first) and expired sessions
//! are dropped when met. Approver tokens sign in; agent tokens never do. The sessions are kept
//! behind [`ConsoleBook`] (in this process, or in the fleet's store, so that an approver signed
//! in through one replica is signed in on all).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use axum::http::HeaderMap;
use subtle::ConstantTimeEq;
use time::{Duration, OffsetDateTime};

/// The session cookie.
pub const COOKIE: &str = "askgate_console";
/// The sign-in form's CSRF cookie (double submit: the form's hidden field must match it).
pub const SIGN_IN_COOKIE: &str = "askgate_console_sign_in";
/// How long a console session lasts.
pub const SESSION_TTL: Duration = Duration::hours(8);
/// The most console sessions kept at once; past it the oldest is signed out.
pub const MAX_SESSIONS: usize = 1_024;

/// One signed-in approver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleSession {
    pub principal: String,
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
    ) -> Result<(), crate::store::StoreError>;
    /// The live session under `token`; an expired one is forgotten.
    async fn current(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ConsoleSession>, crate::store::StoreError>;
    async fn signed_out(&self, token: &str) -> Result<(), crate::store::StoreError>;
}

/// Who is signed in. A store that cannot answer signs nobody in (the page asks to sign in
/// again) and says why in the service's log. The sign-in throttle is this process's own.
pub struct ConsoleSessions {
    book: Arc<dyn ConsoleBook>,
    /// Who failed to sign in lately, and must wait before trying again.
    pub sign_ins: super::throttle::SignInThrottle,
}

impl Default for ConsoleSessions {
    fn default() -> Self {
        Self::new(Arc::new(MemoryConsole::default()))
    }
}

impl ConsoleSessions {
    pub fn new(book: Arc<dyn ConsoleBook>) -> Self {
        Self {
            book,
            sign_ins: super::throttle::SignInThrottle::default(),
        }
    }

    /// Signs `principal` in; returns the cookie token and the session.
    pub async fn signed_in(
        &self,
        principal: &str,
        now: OffsetDateTime,
    ) -> Result<(String, ConsoleSession), crate::store::StoreError> {
        let token = random_token();
        let session = ConsoleSession {
            principal: principal.to_string(),
            csrf: random_token(),
            expires_at: now + SESSION_TTL,
        };
        self.book.signed_in(&token, &session, now).await?;
        Ok((token, session))
    }

    /// The live session behind the request's cookie, if any.
    pub async fn current(
        &self,
        headers: &HeaderMap,
        now: OffsetDateTime,
    ) -> Option<ConsoleSession> {
        let token = cookie(headers, COOKIE)?;
        match self.book.current(&token, now).await {
            Ok(session) => session,
            Err(error) => {
                tracing::warn!(%error, "console session not read");
                None
            }
        }
    }

    pub async fn signed_out(&self, headers: &HeaderMap) {
        if let Some(token) = cookie(headers, COOKIE) {
            if let Err(error) = self.book.signed_out(&token).await {
                tracing::warn!(%error, "console session not signed out");
            }
        }
    }
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
    ) -> Result<(), crate::store::StoreError> {
        self.insert(token, session, now);
        Ok(())
    }

    async fn current(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<Option<ConsoleSession>, crate::store::StoreError> {
        Ok(self.live(token, now))
    }

    async fn signed_out(&self, token: &str) -> Result<(), crate::store::StoreError> {
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

/// 256 random bits from the operating system, hex-encoded.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness means no safe token: a uuid v4 from a seeded CSPRNG is the fallback.
        return format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether a submitted CSRF token matches the expected one (constant time).
pub fn same_token(submitted: &str, expected: &str) -> bool {
    !expected.is_empty() && bool::from(submitted.as_bytes().ct_eq(expected.as_bytes()))
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_string())
}

/// A `Set-Cookie` value for `name`; `max_age` zero clears it.
pub fn set_cookie(name: &str, value: &str, max_age: Duration) -> String {
    format!(
        "{name}={value}; Path=/console; HttpOnly; Secure; SameSite=Strict; Max-Age={}",
        max_age.whole_seconds().max(0)
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

    use axum::http::HeaderValue;
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-12-01 10:00 UTC);

    fn with_cookie(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let value = format!("other=1; {COOKIE}={token}");
        headers.insert("cookie", HeaderValue::from_str(&value).unwrap());
        headers
    }

    #[tokio::test]
    async fn a_session_expires_and_is_forgotten() {
        let book = Arc::new(MemoryConsole::default());
        let sessions = ConsoleSessions::new(book.clone());
        let (token, _) = sessions.signed_in("alice", NOW).await.unwrap();
        assert!(sessions.current(&with_cookie(&token), NOW).await.is_some());
        let later = NOW + SESSION_TTL;
        assert!(sessions
            .current(&with_cookie(&token), later)
            .await
            .is_none());
        assert!(book.is_empty());
    }

    #[tokio::test]
    async fn the_store_is_bounded_and_drops_the_oldest() {
        let book = Arc::new(MemoryConsole::default());
        let sessions = ConsoleSessions::new(book.clone());
        let (first, _) = sessions.signed_in("first", NOW).await.unwrap();
        for second in 1..=MAX_SESSIONS as i64 {
            let later = NOW + Duration::seconds(second);
            sessions.signed_in("later", later).await.unwrap();
        }
        assert_eq!(book.len(), MAX_SESSIONS);
        assert!(sessions.current(&with_cookie(&first), NOW).await.is_none());
    }

    #[test]
    fn tokens_are_random_and_compared_whole() {
        assert_ne!(random_token(), random_token());
        assert_eq!(random_token().len(), 64);
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abd", "abc"));
        assert!(!same_token("", ""));
    }
}
