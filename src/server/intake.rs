//! server::intake: the one authentication layer of the HTTP doors, as axum extractors (issue
//! 34 §5, issue 39 §1). A handler names who may call it in its signature — [`Agent`],
//! [`Approver`] or [`Anyone`] — and receives the caller the intake authenticated
//! ([`Callers::authenticate`]: a configured token, else the IdP's JWT); a caller of the other
//! role is refused here, before the handler runs or reads the body. No handler reads a bearer
//! token or checks a role itself. (`/mcp` authenticates in its own layer, `mcp::auth`, through
//! the same intake; the console by its session cookie.)
//!
//! [`Callers::authenticate`]: super::caller::Callers::authenticate

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;

use super::caller::{Caller, Role};
use super::error::ApiError;
use super::gateway::Pipeline;

/// An agent: it asks for calls.
#[derive(Debug, Clone)]
pub struct Agent(pub Caller);

/// An approver: it answers approvals, consents, revokes, reloads.
#[derive(Debug, Clone)]
pub struct Approver(pub Caller);

/// Any authenticated caller (what it may see then depends on its role).
#[derive(Debug, Clone)]
pub struct Anyone(pub Caller);

async fn caller<S>(parts: &Parts, state: &S, role: Option<Role>) -> Result<Caller, ApiError>
where
    Pipeline: FromRef<S>,
{
    let pipeline = Pipeline::from_ref(state);
    let inner = pipeline.inner();
    let now = inner.clock.now();
    match role {
        Some(role) => inner.callers.require(&parts.headers, role, now).await,
        None => inner.callers.authenticate(&parts.headers, now).await,
    }
}

/// Each extractor: the intake's caller, of `$role` (any role when `None`).
macro_rules! extractor {
    ($name:ident, $role:expr) => {
        impl<S> FromRequestParts<S> for $name
        where
            Pipeline: FromRef<S>,
            S: Send + Sync,
        {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
                caller(parts, state, $role).await.map($name)
            }
        }
    };
}

extractor!(Agent, Some(Role::Agent));
extractor!(Approver, Some(Role::Approver));
extractor!(Anyone, None);
