//! server::auth::issuers: the verifier's one entry point, [`Issuers::verify`]. Holds every
//! configured issuer with its key cache, and the verified-token cache. Chooses the issuer by
//! the token's unverified `iss` (exact match) and trusts nothing else before the signature.

use std::collections::HashMap;
use std::sync::Arc;

use time::OffsetDateTime;

use super::cache::{self, VerifiedCache};
use super::claims::VerifiedToken;
use super::error::{shown, TokenError};
use super::issuer::{IdentityConfig, IssuerConfig};
use super::jwks::KeySource;
use super::jwt;

#[derive(Debug)]
struct Issuer {
    config: IssuerConfig,
    keys: Arc<KeySource>,
}

/// The configured issuers, ready to verify tokens.
#[derive(Debug)]
pub struct Issuers {
    by_issuer: HashMap<String, Issuer>,
    /// The largest token any issuer accepts: checked before anything is decoded.
    max_token_bytes: usize,
    cache: VerifiedCache,
    refreshers: Vec<tokio::task::JoinHandle<()>>,
}

impl Issuers {
    /// The issuers of `config`, fetching keys through `http` (each fetch has its own deadline)
    /// and caching up to `cache_entries` verified tokens. Fetches nothing yet: see
    /// [`Issuers::start_refresh`], or the first token fetches its issuer's keys.
    pub fn new(config: &IdentityConfig, http: reqwest::Client, cache_entries: usize) -> Self {
        let by_issuer: HashMap<String, Issuer> = config
            .issuers
            .iter()
            .map(|issuer| {
                let keys = KeySource::new(issuer.issuer.clone(), issuer.keys.clone(), http.clone());
                let entry = Issuer {
                    config: issuer.clone(),
                    keys: Arc::new(keys),
                };
                (issuer.issuer.clone(), entry)
            })
            .collect();
        let max_token_bytes = config
            .issuers
            .iter()
            .map(|issuer| issuer.max_token_bytes)
            .max()
            .unwrap_or(super::issuer::DEFAULT_MAX_TOKEN_BYTES);
        Self {
            by_issuer,
            max_token_bytes,
            cache: VerifiedCache::new(cache_entries),
            refreshers: Vec::new(),
        }
    }

    /// Starts each issuer's background key refresh (a first fetch at once, then by the keys'
    /// `Cache-Control` lifetime). The tasks end when `self` is dropped.
    pub fn start_refresh(&mut self) {
        for issuer in self.by_issuer.values() {
            let source = Arc::downgrade(&issuer.keys);
            self.refreshers
                .push(tokio::spawn(KeySource::refresh(source)));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_issuer.is_empty()
    }

    /// Verifies `token` at `now`, from the cache when it verified before.
    pub async fn verify(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<Arc<VerifiedToken>, TokenError> {
        let unverified = jwt::peek(token, self.max_token_bytes)?;
        let digest = cache::digest(token);
        if let Some(hit) = self.cache.get(&digest, now) {
            return Ok(hit);
        }
        let verified = self.verify_fresh(&unverified, now).await?;
        let token = Arc::new(verified.token);
        self.cache
            .insert(digest, Arc::clone(&token), verified.valid_from);
        Ok(token)
    }

    /// Verifies `token` at `now` without the cache (neither read nor filled).
    pub async fn verify_uncached(
        &self,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<VerifiedToken, TokenError> {
        let unverified = jwt::peek(token, self.max_token_bytes)?;
        Ok(self.verify_fresh(&unverified, now).await?.token)
    }

    /// Verifies the ID token of a console sign-in (issue 34 §4) at `now`: from a configured
    /// issuer, for the relying party `client_id`, carrying the sign-in's `nonce`; never cached
    /// (each is used once). The issuer's claim names and role mapping apply as to its access
    /// tokens.
    pub async fn verify_id_token(
        &self,
        token: &str,
        client_id: &str,
        nonce: &str,
        now: OffsetDateTime,
    ) -> Result<VerifiedToken, TokenError> {
        let unverified = jwt::peek(token, self.max_token_bytes)?;
        let issuer = self.issuer(&unverified)?;
        let (algorithm, kid) = jwt::algorithm(&unverified, &issuer.config)?;
        let key = issuer.keys.key(&kid, now).await?;
        let verified = jwt::verify_id_token(
            &unverified,
            (algorithm, &kid),
            &key,
            &issuer.config,
            jwt::IdTokenFor { client_id, nonce },
            now,
        )?;
        Ok(verified.token)
    }

    /// Whether `issuer` is configured.
    pub fn knows(&self, issuer: &str) -> bool {
        self.by_issuer.contains_key(issuer)
    }

    fn issuer(&self, token: &jwt::Unverified<'_>) -> Result<&Issuer, TokenError> {
        self.by_issuer
            .get(&token.issuer)
            .ok_or_else(|| TokenError::UnknownIssuer(shown(&token.issuer)))
    }

    async fn verify_fresh(
        &self,
        token: &jwt::Unverified<'_>,
        now: OffsetDateTime,
    ) -> Result<jwt::Verified, TokenError> {
        let issuer = self.issuer(token)?;
        let (algorithm, kid) = jwt::algorithm(token, &issuer.config)?;
        let key = issuer.keys.key(&kid, now).await?;
        jwt::verify(token, algorithm, &kid, &key, &issuer.config, now)
    }

    /// How many tokens the cache holds (for tests and metrics).
    pub fn cached_tokens(&self) -> usize {
        self.cache.len()
    }
}

impl Drop for Issuers {
    fn drop(&mut self) {
        for task in &self.refreshers {
            task.abort();
        }
    }
}
