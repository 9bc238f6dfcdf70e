//! server::auth: bearer JWT access tokens from the organisation's IdPs (issue #34) — verified
//! against each issuer's published keys, mapped to askgate's caller (issuer-namespaced
//! subject, groups, client, the `act` chain, a role). Knows nothing of HTTP requests or
//! policies: the authentication layer calls [`Issuers::verify`] with the bearer token and the
//! time, and gets a [`VerifiedToken`] or a [`TokenError`] naming why it was refused.
//!
//! Map: `issuer` (the `identity.issuers` configuration, raw → validated), `issuers` (the entry
//! point), `jwt` (one token against one issuer: size, header, algorithm, signature, registered
//! claims), `claims` (claims → [`VerifiedToken`], role mapping, group overage), `keys` (a JWK
//! set → usable public keys), `jwks` (one issuer's key cache: unknown-`kid` refetch, background
//! refresh, stale grace), `fetch` (the HTTP documents), `cache` (verified tokens by digest),
//! `resource` (askgate's RFC 9728 metadata), `error`.

pub mod cache;
pub mod claims;
pub mod error;
pub mod fetch;
pub mod issuer;
pub mod issuers;
pub mod jwks;
pub mod jwt;
pub mod keys;
pub mod resource;

pub use claims::{Actor, VerifiedToken};
pub use error::TokenError;
pub use issuer::{IdentityConfig, IssuerConfig, RawIdentity, RawIssuer};
pub use issuers::Issuers;
pub use resource::ProtectedResource;
