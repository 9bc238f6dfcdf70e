//! server::auth::cache: verified tokens, so the hot path does not verify a signature again
//! ([`VerifiedCache`]). Keyed by the SHA-256 of the token; holds only tokens that verified;
//! bounded ([`DEFAULT_ENTRIES`], quick_cache's eviction) and never answers outside the span
//! in which the token would verify afresh, nor past its `exp`.

use std::sync::Arc;

use quick_cache::sync::Cache;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use super::claims::VerifiedToken;

pub const DEFAULT_ENTRIES: usize = 10_000;

#[derive(Clone)]
struct Entry {
    token: Arc<VerifiedToken>,
    valid_from: i64,
}

/// A bounded map from token digests to what their verification found.
pub struct VerifiedCache {
    // INVARIANT: an entry is the `Ok` answer a fresh verification of the same token gave under
    // the same issuer configuration (the cache lives and dies with the `Issuers` it belongs
    // to); it is returned only for `now` in [valid_from, exp), a span inside the one in which
    // a fresh verification answers the same (keys that rotate away later do not matter: a
    // token valid at verification stays valid until its `exp`).
    entries: Cache<[u8; 32], Entry>,
}

impl std::fmt::Debug for VerifiedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedCache")
            .field("entries", &self.entries.len())
            .finish()
    }
}

/// The digest a token is cached under.
pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl VerifiedCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Cache::new(capacity.max(1)),
        }
    }

    /// The cached verification of the token with `digest`, if there is one valid at `now`;
    /// an entry past its `exp` is dropped.
    pub fn get(&self, digest: &[u8; 32], now: OffsetDateTime) -> Option<Arc<VerifiedToken>> {
        let entry = self.entries.get(digest)?;
        if now >= entry.token.expires_at {
            self.entries.remove(digest);
            return None;
        }
        (now.unix_timestamp() >= entry.valid_from).then_some(entry.token)
    }

    pub fn insert(&self, digest: [u8; 32], token: Arc<VerifiedToken>, valid_from: i64) {
        self.entries.insert(digest, Entry { token, valid_from });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
