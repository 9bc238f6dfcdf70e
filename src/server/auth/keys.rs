//! server::auth::keys: an issuer's published signing keys as askgate uses them — a JWK set
//! parsed into [`KeySet`] (keys by `kid`, bounded, public signature keys only) and the rule of
//! which key may verify which algorithm. No fetching (`jwks`), no tokens (`jwt`).

use std::collections::HashMap;
use std::sync::Arc;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use time::OffsetDateTime;

/// At most this many entries in a key set document; a larger one is refused whole rather
/// than cut (the cut could drop the key in use).
pub const MAX_KEYS: usize = 64;

/// The kind of a public key, which decides the algorithms it can verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Rsa,
    EcP256,
    EcP384,
    Ed25519,
}

/// One usable public key.
#[derive(Clone)]
pub struct VerifyingKey {
    pub kind: KeyKind,
    /// The JWK's own `alg`, when it names one.
    pub algorithm: Option<Algorithm>,
    pub decoding: DecodingKey,
}

impl std::fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("kind", &self.kind)
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl VerifyingKey {
    /// Why this key cannot verify `algorithm`, if it cannot. An HMAC algorithm is refused
    /// against every key here: all of them are public.
    pub fn refuses(&self, algorithm: Algorithm) -> Option<&'static str> {
        let fits = matches!(
            (self.kind, algorithm),
            (
                KeyKind::Rsa,
                Algorithm::RS256
                    | Algorithm::RS384
                    | Algorithm::RS512
                    | Algorithm::PS256
                    | Algorithm::PS384
                    | Algorithm::PS512,
            ) | (KeyKind::EcP256, Algorithm::ES256)
                | (KeyKind::EcP384, Algorithm::ES384)
                | (KeyKind::Ed25519, Algorithm::EdDSA)
        );
        if !fits {
            return Some("the key's type does not match the algorithm");
        }
        match self.algorithm {
            Some(own) if own != algorithm => Some("the key is published for another algorithm"),
            _ => None,
        }
    }
}

/// The keys of one issuer at one time, with how long they may be used.
#[derive(Debug, Clone)]
pub struct KeySet {
    keys: HashMap<String, Arc<VerifyingKey>>,
    /// Bumped by every successful fetch; a waiter compares it to learn that a fetch happened.
    pub generation: u64,
    /// Until then the keys are current (the document's `Cache-Control`, clamped).
    pub fresh_until: OffsetDateTime,
    /// Past it the keys are not used at all (the issuer was unreachable for too long).
    pub usable_until: OffsetDateTime,
}

impl KeySet {
    /// No keys yet: nothing is usable.
    pub fn empty() -> Self {
        Self {
            keys: HashMap::new(),
            generation: 0,
            fresh_until: OffsetDateTime::UNIX_EPOCH,
            usable_until: OffsetDateTime::UNIX_EPOCH,
        }
    }

    /// The keys of a JWK set document (`{"keys": [...]}`). Entries that are not public
    /// signature keys askgate can use (no `kid`, `use: enc`, symmetric, unknown type or curve)
    /// are skipped; a second entry with a `kid` already seen is skipped too.
    pub fn parse(document: &[u8]) -> Result<HashMap<String, Arc<VerifyingKey>>, String> {
        #[derive(serde::Deserialize)]
        struct Document {
            keys: Vec<serde_json::Value>,
        }
        let document: Document = serde_json::from_slice(document)
            .map_err(|why| format!("the key set is not a JWK set: {why}"))?;
        if document.keys.len() > MAX_KEYS {
            return Err(format!(
                "the key set has {} keys, more than {MAX_KEYS}",
                document.keys.len()
            ));
        }
        let mut keys = HashMap::new();
        for entry in document.keys {
            let Ok(jwk) = serde_json::from_value::<Jwk>(entry) else {
                continue;
            };
            if let (Some(kid), Some(key)) = (jwk.common.key_id.clone(), usable(&jwk)) {
                keys.entry(kid).or_insert_with(|| Arc::new(key));
            }
        }
        Ok(keys)
    }

    pub fn with_keys(
        keys: HashMap<String, Arc<VerifyingKey>>,
        generation: u64,
        fresh_until: OffsetDateTime,
        usable_until: OffsetDateTime,
    ) -> Self {
        Self {
            keys,
            generation,
            fresh_until,
            usable_until,
        }
    }

    pub fn usable(&self, now: OffsetDateTime) -> bool {
        now <= self.usable_until
    }

    pub fn get(&self, kid: &str) -> Option<&Arc<VerifyingKey>> {
        self.keys.get(kid)
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

fn usable(jwk: &Jwk) -> Option<VerifyingKey> {
    if matches!(jwk.common.public_key_use, Some(ref usage) if *usage != PublicKeyUse::Signature) {
        return None;
    }
    if let Some(operations) = &jwk.common.key_operations {
        if !operations.contains(&KeyOperations::Verify) {
            return None;
        }
    }
    let kind = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => KeyKind::Rsa,
        AlgorithmParameters::EllipticCurve(params) => match params.curve {
            EllipticCurve::P256 => KeyKind::EcP256,
            EllipticCurve::P384 => KeyKind::EcP384,
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(params) => match params.curve {
            EllipticCurve::Ed25519 => KeyKind::Ed25519,
            _ => return None,
        },
        // Symmetric (`oct`) keys are never taken from a published set.
        _ => return None,
    };
    let algorithm = match jwk.common.key_algorithm {
        None => None,
        Some(named) => Some(Algorithm::try_from(named).ok()?),
    };
    if matches!(
        algorithm,
        Some(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
    ) {
        return None;
    }
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(VerifyingKey {
        kind,
        algorithm,
        decoding,
    })
}

#[cfg(test)]
mod tests;
