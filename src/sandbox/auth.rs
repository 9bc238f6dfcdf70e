//! sandbox::auth: the bearer credentials the sandbox accepts (one live access token, one refresh
//! token, the granted scopes, the session token of the CCR route) and the middleware that checks
//! them. It must not know about projects, consent or grants.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{SandboxConfig, SharedState};

/// The path prefix of the Projects session route, which takes the session token instead.
pub const SESSION_ROUTE_PREFIX: &str = "/v2/ccr-sessions/";

#[derive(Debug, Clone)]
struct CredentialState {
    access_token: String,
    refresh_token: String,
    scopes: BTreeSet<String>,
}

/// The live credentials; a refresh replaces both tokens at once.
#[derive(Debug)]
pub struct Credentials {
    current: Mutex<CredentialState>,
    session_token: String,
}

/// What a successful refresh hands back.
#[derive(Debug, Clone, PartialEq)]
pub struct IssuedTokens {
    pub access_token: String,
    pub refresh_token: String,
    pub scopes: Vec<String>,
}

impl Credentials {
    pub fn new(config: &SandboxConfig) -> Self {
        Credentials {
            current: Mutex::new(CredentialState {
                access_token: config.access_token.clone(),
                refresh_token: config.refresh_token.clone(),
                scopes: config.scopes.iter().cloned().collect(),
            }),
            session_token: config.session_token.clone(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, CredentialState> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Puts the configured credentials back (`/_sandbox/reset`).
    pub fn restore(&self, config: &SandboxConfig) {
        *self.lock() = Credentials::new(config).lock().clone();
    }

    pub fn is_access_token(&self, token: &str) -> bool {
        self.lock().access_token == token
    }

    pub fn has_scope(&self, scope: &str) -> bool {
        self.lock().scopes.contains(scope)
    }

    /// Rotates both tokens and widens the scopes; `None` for an unknown refresh token.
    pub fn refresh(&self, refresh_token: &str, requested: &str) -> Option<IssuedTokens> {
        let mut current = self.lock();
        if current.refresh_token != refresh_token {
            return None;
        }
        current.access_token = format!("sandbox-access-{}", uuid::Uuid::new_v4().simple());
        current.refresh_token = format!("sandbox-refresh-{}", uuid::Uuid::new_v4().simple());
        current
            .scopes
            .extend(requested.split_whitespace().map(str::to_owned));
        Some(IssuedTokens {
            access_token: current.access_token.clone(),
            refresh_token: current.refresh_token.clone(),
            scopes: current.scopes.iter().cloned().collect(),
        })
    }
}

/// The bearer token of a request, if it carries one.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

pub fn invalid_token() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({"error": "invalid_token"})),
    )
        .into_response()
}

/// The scope a path needs, if any: Design reads, or Projects reads and writes on the org route.
fn required_scopes(path: &str, method: &axum::http::Method) -> &'static [&'static str] {
    if path.starts_with("/v1/design/") {
        &["user:design:read"]
    } else if path.starts_with("/api/organizations/") {
        if method == axum::http::Method::GET {
            &["user:projects:read"]
        } else {
            &["user:projects:read", "user:projects:write"]
        }
    } else {
        &[]
    }
}

/// Middleware: the session route takes the session token; everything else the access token.
pub async fn require_bearer(
    State(shared): State<SharedState>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_owned();
    let Some(token) = bearer(request.headers()).map(str::to_owned) else {
        return invalid_token();
    };
    if path.starts_with(SESSION_ROUTE_PREFIX) {
        if token != shared.credentials.session_token {
            return invalid_token();
        }
        return next.run(request).await;
    }
    if !shared.credentials.is_access_token(&token) {
        return invalid_token();
    }
    let missing: Vec<&str> = required_scopes(&path, request.method())
        .iter()
        .copied()
        .filter(|scope| !shared.credentials.has_scope(scope))
        .collect();
    if !missing.is_empty() {
        let body = json!({"error": "insufficient_scope", "required": missing});
        return (StatusCode::FORBIDDEN, Json(body)).into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_rotates_tokens_and_only_widens_scopes() {
        let config = SandboxConfig {
            scopes: vec!["user:design:read".to_owned()],
            ..SandboxConfig::default()
        };
        let credentials = Credentials::new(&config);
        assert!(credentials.refresh("wrong", "").is_none());
        let issued = credentials
            .refresh("sandbox-refresh-token", "user:projects:read")
            .unwrap();
        assert_eq!(issued.scopes, ["user:design:read", "user:projects:read"]);
        assert!(!credentials.is_access_token("sandbox-access-token"));
        assert!(credentials.is_access_token(&issued.access_token));
        assert!(credentials.refresh("sandbox-refresh-token", "").is_none());
        credentials.restore(&config);
        assert!(credentials.is_access_token("sandbox-access-token"));
    }

    #[test]
    fn bearer_parsing_is_strict_about_the_scheme() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, "bearer abc".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc"));
    }
}
