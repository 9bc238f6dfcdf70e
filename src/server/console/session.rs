//! server::console::session: who is signed in to the console. A session is a random token in an
//! `HttpOnly`, `Secure`, `SameSite=Strict` cookie scoped to `/console`, with an expiry and its
//! own CSRF token; the store is bounded (the oldest session goes first) and expired sessions
//! are dropped when met. Approver tokens sign in; agent tokens never do. The sessions are kept
//! behind `store::console`'s [`ConsoleBook`] (in this process, or in the fleet's store, so that
//! an approver signed in through one replica is signed in on all).

use std::sync::Arc;

use axum::http::HeaderMap;
use subtle::ConstantTimeEq;

use crate::server::caller::{random_token, Caller, Person};
use time::{Duration, OffsetDateTime};

pub use crate::store::console::{ConsoleBook, ConsoleSession, MemoryConsole, MAX_SESSIONS};

/// The session cookie.
pub const COOKIE: &str = "askgate_console";
/// The sign-in form's CSRF cookie (double submit: the form's hidden field must match it).
pub const SIGN_IN_COOKIE: &str = "askgate_console_sign_in";
/// How long a console session lasts.
pub const SESSION_TTL: Duration = Duration::hours(8);
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

    /// Signs `principal` in as `person` (what the IdP said of them; empty for an approver
    /// token), for [`SESSION_TTL`] and never past `until` (the ID token's expiry); returns the
    /// cookie token and the session.
    pub async fn signed_in(
        &self,
        principal: &str,
        person: &Person,
        until: Option<OffsetDateTime>,
        now: OffsetDateTime,
    ) -> Result<(String, ConsoleSession), crate::store::StoreError> {
        let token = random_token();
        let longest = now + SESSION_TTL;
        let session = ConsoleSession {
            principal: principal.to_string(),
            groups: person.groups.clone(),
            email: person.email.clone(),
            csrf: random_token(),
            expires_at: until.map_or(longest, |until| until.min(longest)),
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

/// The approver a session speaks for, with the person the IdP named (an approver token's
/// session has none: the approving policies read its person from `callers`).
pub fn approver(session: &ConsoleSession) -> Caller {
    Caller::approver(session.principal.clone()).with_person(Person {
        groups: session.groups.clone(),
        email: session.email.clone(),
    })
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
        let (token, _) = sessions
            .signed_in("alice", &Person::default(), None, NOW)
            .await
            .unwrap();
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
        let (first, _) = sessions
            .signed_in("first", &Person::default(), None, NOW)
            .await
            .unwrap();
        for second in 1..=MAX_SESSIONS as i64 {
            let later = NOW + Duration::seconds(second);
            sessions
                .signed_in("later", &Person::default(), None, later)
                .await
                .unwrap();
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
