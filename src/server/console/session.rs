//! server::console::session: who is signed in to the console. A session is a random token in an
//! `HttpOnly`, `Secure`, `SameSite=Strict` cookie scoped to `/console`, with an expiry and its
//! own CSRF token; the store is bounded (the oldest session goes first) and expired sessions
//! are dropped when met. Approver tokens sign in; agent tokens never do.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

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

#[derive(Debug, Default)]
pub struct ConsoleSessions {
    by_token: Mutex<HashMap<String, ConsoleSession>>,
    /// Who failed to sign in lately, and must wait before trying again.
    pub sign_ins: super::throttle::SignInThrottle,
}

impl ConsoleSessions {
    /// Signs `principal` in; returns the cookie token and the session.
    pub fn signed_in(&self, principal: &str, now: OffsetDateTime) -> (String, ConsoleSession) {
        let token = random_token();
        let session = ConsoleSession {
            principal: principal.to_string(),
            csrf: random_token(),
            expires_at: now + SESSION_TTL,
        };
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
        sessions.insert(token.clone(), session.clone());
        (token, session)
    }

    /// The live session behind the request's cookie, if any.
    pub fn current(&self, headers: &HeaderMap, now: OffsetDateTime) -> Option<ConsoleSession> {
        let token = cookie(headers, COOKIE)?;
        let mut sessions = self.locked();
        match sessions.get(&token) {
            Some(session) if session.expires_at > now => Some(session.clone()),
            Some(_) => {
                sessions.remove(&token);
                None
            }
            None => None,
        }
    }

    pub fn signed_out(&self, headers: &HeaderMap) {
        if let Some(token) = cookie(headers, COOKIE) {
            self.locked().remove(&token);
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

    #[test]
    fn a_session_expires_and_is_forgotten() {
        let sessions = ConsoleSessions::default();
        let (token, _) = sessions.signed_in("alice", NOW);
        assert!(sessions.current(&with_cookie(&token), NOW).is_some());
        let later = NOW + SESSION_TTL;
        assert!(sessions.current(&with_cookie(&token), later).is_none());
        assert!(sessions.is_empty());
    }

    #[test]
    fn the_store_is_bounded_and_drops_the_oldest() {
        let sessions = ConsoleSessions::default();
        let (first, _) = sessions.signed_in("first", NOW);
        for second in 1..=MAX_SESSIONS as i64 {
            sessions.signed_in("later", NOW + Duration::seconds(second));
        }
        assert_eq!(sessions.len(), MAX_SESSIONS);
        assert!(sessions.current(&with_cookie(&first), NOW).is_none());
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
