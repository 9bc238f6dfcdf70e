//! server::auth::jwt: one token against one issuer — the unverified look that picks the
//! issuer ([`peek`]: size first, then the header and `iss`, trusting nothing else), then the
//! checks in order: algorithm in the issuer's allow-list and fitting the key, signature
//! (`jsonwebtoken`), `iss`, `aud`, `sub`, `exp`/`nbf`/`iat` within the issuer's clock skew —
//! and for an OpenID Connect ID token ([`verify_id_token`]) its client audience, `azp` and `nonce`.
//! Synchronous and pure: time comes in as `now`, keys are looked up by the caller.

use base64::Engine;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::claims::{self, VerifiedToken};
use super::error::{shown, TokenError};
use super::issuer::IssuerConfig;
use super::keys::VerifyingKey;

/// What is read from a token before its signature is checked: only what chooses the issuer
/// and the key.
#[derive(Debug)]
pub struct Unverified<'a> {
    pub token: &'a str,
    pub alg: String,
    pub kid: Option<String>,
    pub critical: bool,
    /// The payload's `iss`, unverified: used only to choose which issuer's keys to try.
    pub issuer: String,
}

/// A verified token and the span of `now` in which the same token verifies again.
#[derive(Debug, Clone)]
pub struct Verified {
    pub token: VerifiedToken,
    /// Unix seconds: the token verifies from here on (`nbf`/`iat` less the skew) until its
    /// `exp` plus the skew.
    pub valid_from: i64,
}

/// Splits `token` (at most `max_bytes`, checked before anything is decoded) and reads its
/// header and unverified `iss`.
pub fn peek(token: &str, max_bytes: usize) -> Result<Unverified<'_>, TokenError> {
    if token.len() > max_bytes {
        return Err(TokenError::TooLarge {
            size: token.len(),
            limit: max_bytes,
        });
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed("it does not have three parts"));
    };
    #[derive(serde::Deserialize)]
    struct Header {
        alg: String,
        kid: Option<String>,
        crit: Option<Value>,
    }
    #[derive(serde::Deserialize)]
    struct Issuer {
        iss: Option<String>,
    }
    let header: Header = segment(header).ok_or(TokenError::Malformed("its header is not JSON"))?;
    let issuer: Issuer =
        segment(payload).ok_or(TokenError::Malformed("its payload is not JSON"))?;
    Ok(Unverified {
        token,
        alg: header.alg,
        kid: header.kid,
        critical: header.crit.is_some(),
        issuer: issuer.iss.ok_or(TokenError::MissingClaim("iss"))?,
    })
}

fn segment<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The token's algorithm, if the issuer allows it, and its key id.
pub fn algorithm(
    token: &Unverified<'_>,
    config: &IssuerConfig,
) -> Result<(Algorithm, String), TokenError> {
    if token.token.len() > config.max_token_bytes {
        return Err(TokenError::TooLarge {
            size: token.token.len(),
            limit: config.max_token_bytes,
        });
    }
    let refused = || TokenError::AlgorithmNotAllowed {
        alg: shown(&token.alg),
        issuer: config.issuer.clone(),
    };
    // `none` and unknown names do not parse; HMAC names parse but are never in the list.
    let algorithm: Algorithm = token.alg.parse().map_err(|_| refused())?;
    if !config.algorithms.contains(&algorithm) {
        return Err(refused());
    }
    if token.critical {
        return Err(TokenError::CriticalHeader);
    }
    let kid = token.kid.clone().ok_or(TokenError::MissingKeyId)?;
    Ok((algorithm, kid))
}

/// Checks the signature with `key` and the registered claims, then maps the claims.
pub fn verify(
    token: &Unverified<'_>,
    algorithm: Algorithm,
    kid: &str,
    key: &VerifyingKey,
    config: &IssuerConfig,
    now: OffsetDateTime,
) -> Result<Verified, TokenError> {
    let claims = signed_claims(token, algorithm, kid, key, config)?;
    let (valid_from, expires) = registered(&claims, config, &config.audience, now)?;
    Ok(Verified {
        token: claims::map(&claims, config, date(expires))?,
        valid_from,
    })
}

/// Whom an ID token must be for: the relying party and the nonce its sign-in sent.
#[derive(Debug, Clone, Copy)]
pub struct IdTokenFor<'a> {
    pub client_id: &'a str,
    pub nonce: &'a str,
}

/// An OpenID Connect ID token (Core §3.1.3.7) for the relying party `client_id`: signature and
/// registered claims as for an access token, but the audience is the client, an `azp` (required
/// with several audiences) names it, and `nonce` is the one the sign-in sent.
pub fn verify_id_token(
    token: &Unverified<'_>,
    (algorithm, kid): (Algorithm, &str),
    key: &VerifyingKey,
    config: &IssuerConfig,
    IdTokenFor { client_id, nonce }: IdTokenFor<'_>,
    now: OffsetDateTime,
) -> Result<Verified, TokenError> {
    let claims = signed_claims(token, algorithm, kid, key, config)?;
    let (valid_from, expires) = registered(&claims, config, client_id, now)?;
    let several = matches!(claims.get("aud"), Some(Value::Array(many)) if many.len() > 1);
    match claims.get("azp") {
        Some(Value::String(azp)) if azp == client_id => {}
        None if !several => {}
        None => return Err(TokenError::MissingClaim("azp")),
        Some(_) => return Err(TokenError::BadClaim("azp".into())),
    }
    match claims.get("nonce") {
        Some(Value::String(sent)) if same(sent, nonce) => {}
        None => return Err(TokenError::MissingClaim("nonce")),
        Some(_) => return Err(TokenError::BadClaim("nonce".into())),
    }
    Ok(Verified {
        token: claims::map(&claims, config, date(expires))?,
        valid_from,
    })
}

/// Equal strings, compared in constant time (a nonce is a secret of the sign-in).
fn same(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    !b.is_empty() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// The claims of `token` once its signature verifies with `key` (no claim checked yet).
fn signed_claims(
    token: &Unverified<'_>,
    algorithm: Algorithm,
    kid: &str,
    key: &VerifyingKey,
    config: &IssuerConfig,
) -> Result<Map<String, Value>, TokenError> {
    if let Some(why) = key.refuses(algorithm) {
        return Err(TokenError::KeyMismatch {
            kid: shown(kid),
            issuer: config.issuer.clone(),
            alg: format!("{algorithm:?}"),
            why,
        });
    }
    // Signature only: every claim is checked by the caller, against `now` rather than the
    // system clock.
    let mut validation = Validation::new(algorithm);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    let data = jsonwebtoken::decode::<Map<String, Value>>(token.token, &key.decoding, &validation)
        .map_err(|error| match error.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => TokenError::BadSignature,
            _ => TokenError::Malformed("its signature or claims could not be decoded"),
        })?;
    Ok(data.claims)
}

/// `iss`, `aud`, `sub`, `exp`, `nbf`, `iat`; the first second they hold, and `exp`.
fn registered(
    claims: &Map<String, Value>,
    config: &IssuerConfig,
    audience: &str,
    now: OffsetDateTime,
) -> Result<(i64, i64), TokenError> {
    let issuer = claims
        .get("iss")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if issuer != config.issuer {
        return Err(TokenError::WrongIssuer {
            expected: config.issuer.clone(),
            found: shown(issuer),
        });
    }
    let audience_ok = match claims.get("aud") {
        Some(Value::String(one)) => one == audience,
        Some(Value::Array(many)) => many.iter().any(|aud| aud.as_str() == Some(audience)),
        None => return Err(TokenError::MissingClaim("aud")),
        Some(_) => return Err(TokenError::BadClaim("aud".into())),
    };
    if !audience_ok {
        return Err(TokenError::WrongAudience {
            expected: audience.to_string(),
        });
    }
    match claims.get("sub") {
        Some(Value::String(sub)) if !sub.is_empty() => {}
        None => return Err(TokenError::MissingClaim("sub")),
        Some(_) => return Err(TokenError::BadClaim("sub".into())),
    }
    let skew = config.clock_skew_seconds;
    let now = now.unix_timestamp();
    let exp = seconds(claims, "exp")?.ok_or(TokenError::MissingClaim("exp"))?;
    if now >= exp.saturating_add(skew) {
        return Err(TokenError::Expired(date(exp)));
    }
    let nbf = seconds(claims, "nbf")?;
    if let Some(nbf) = nbf {
        if now < nbf.saturating_sub(skew) {
            return Err(TokenError::NotYetValid(date(nbf)));
        }
    }
    let iat = seconds(claims, "iat")?;
    if let Some(iat) = iat {
        if now < iat.saturating_sub(skew) {
            return Err(TokenError::IssuedInFuture(date(iat)));
        }
    }
    let from = nbf
        .into_iter()
        .chain(iat)
        .max()
        .map_or(i64::MIN, |at| at.saturating_sub(skew));
    Ok((from, exp))
}

/// A NumericDate claim (integer or fractional seconds), floored.
fn seconds(claims: &Map<String, Value>, name: &'static str) -> Result<Option<i64>, TokenError> {
    match claims.get(name) {
        None => Ok(None),
        Some(value) => value
            .as_i64()
            .or_else(|| {
                value
                    .as_f64()
                    .filter(|f| f.is_finite() && f.abs() < 1e15)
                    .map(|f| f.floor() as i64)
            })
            .map(Some)
            .ok_or_else(|| TokenError::BadClaim(name.into())),
    }
}

pub(crate) fn date(seconds: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(seconds).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}
