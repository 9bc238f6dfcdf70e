//! server::auth::fetch: reading an issuer's documents over HTTP — the discovery document's
//! `jwks_uri` and the JWK set with its `Cache-Control` lifetime. Every request has a deadline
//! and a body limit; nothing here caches or decides which keys to trust (`jwks`, `keys`).

use std::time::Duration;

use futures_util::StreamExt;
use time::Duration as Span;

use super::issuer::KeysLocation;

/// The deadline of one document's request, connect to last byte.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest discovery or key set document read.
pub const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// Key set lifetimes from `Cache-Control: max-age` are clamped into these bounds; a document
/// without one is kept `DEFAULT_MAX_AGE`.
pub const MIN_MAX_AGE: Span = Span::seconds(60);
pub const MAX_MAX_AGE: Span = Span::hours(24);
pub const DEFAULT_MAX_AGE: Span = Span::minutes(10);

/// A fetched key set document and how long it may be kept.
pub struct Fetched {
    pub body: Vec<u8>,
    pub max_age: Span,
}

/// The key set of `issuer` from `location`, following the discovery document when that is
/// where the keys are named.
pub async fn key_set(
    http: &reqwest::Client,
    issuer: &str,
    location: &KeysLocation,
) -> Result<Fetched, String> {
    let jwks_uri = match location {
        KeysLocation::Jwks(uri) => uri.clone(),
        KeysLocation::Discovery(uri) => discover(http, issuer, uri).await?,
    };
    let (body, headers) = document(http, &jwks_uri).await?;
    Ok(Fetched {
        body,
        max_age: max_age(headers.get(reqwest::header::CACHE_CONTROL)),
    })
}

async fn discover(http: &reqwest::Client, issuer: &str, uri: &str) -> Result<String, String> {
    let discovery = discovery(http, issuer, uri).await?;
    if !secure(&discovery.jwks_uri) {
        return Err(format!(
            "the discovery document's `jwks_uri` `{}` is not https",
            super::error::shown(&discovery.jwks_uri)
        ));
    }
    Ok(discovery.jwks_uri)
}

/// What askgate reads of an OpenID Provider's discovery document.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Discovery {
    pub issuer: String,
    pub jwks_uri: String,
    /// Where a person signs in (the console's code flow).
    pub authorization_endpoint: Option<String>,
    /// Where the console exchanges the code.
    pub token_endpoint: Option<String>,
}

/// The discovery document of `issuer` at `uri`, checked to name that issuer (OpenID Connect
/// Discovery §4.3).
pub async fn discovery(
    http: &reqwest::Client,
    issuer: &str,
    uri: &str,
) -> Result<Discovery, String> {
    let (body, _) = document(http, uri).await?;
    let discovery: Discovery = serde_json::from_slice(&body)
        .map_err(|why| format!("the discovery document `{uri}` is not valid: {why}"))?;
    if discovery.issuer != issuer {
        return Err(format!(
            "the discovery document `{uri}` names the issuer `{}`",
            super::error::shown(&discovery.issuer)
        ));
    }
    Ok(discovery)
}

/// https, or http to a loopback address.
pub fn secure(uri: &str) -> bool {
    match url::Url::parse(uri) {
        Ok(url) => match (url.scheme(), url.host()) {
            ("https", Some(_)) => true,
            ("http", Some(url::Host::Ipv4(ip))) => ip.is_loopback(),
            ("http", Some(url::Host::Ipv6(ip))) => ip.is_loopback(),
            ("http", Some(url::Host::Domain(domain))) => domain == "localhost",
            _ => false,
        },
        Err(_) => false,
    }
}

/// GETs `uri` within [`FETCH_TIMEOUT`], reading at most [`MAX_DOCUMENT_BYTES`].
pub async fn document(
    http: &reqwest::Client,
    uri: &str,
) -> Result<(Vec<u8>, reqwest::header::HeaderMap), String> {
    let read = async {
        let response = http
            .get(uri)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|why| format!("`{uri}` could not be fetched: {}", cause(&why)))?;
        if !response.status().is_success() {
            return Err(format!("`{uri}` answered {}", response.status()));
        }
        let headers = response.headers().clone();
        Ok((body(response, uri).await?, headers))
    };
    tokio::time::timeout(FETCH_TIMEOUT, read)
        .await
        .map_err(|_| format!("`{uri}` did not answer within {FETCH_TIMEOUT:?}"))?
}

/// The body of `response` from `uri`, at most [`MAX_DOCUMENT_BYTES`] (the caller bounds the
/// time).
pub async fn body(response: reqwest::Response, uri: &str) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|why| format!("`{uri}` failed mid-body: {}", cause(&why)))?;
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("`{uri}` is larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The innermost cause of a request error (reqwest's outer message is only "error sending
/// request").
pub fn cause(error: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = error;
    while let Some(inner) = source.source() {
        source = inner;
    }
    source.to_string()
}

/// The lifetime a `Cache-Control` header grants, clamped; `no-store`/`no-cache` count as the
/// shortest.
pub fn max_age(header: Option<&reqwest::header::HeaderValue>) -> Span {
    let Some(text) = header.and_then(|value| value.to_str().ok()) else {
        return DEFAULT_MAX_AGE;
    };
    let mut age = None;
    for directive in text.split(',').map(str::trim) {
        let lower = directive.to_ascii_lowercase();
        if lower == "no-store" || lower == "no-cache" {
            return MIN_MAX_AGE;
        }
        if let Some(seconds) = lower.strip_prefix("max-age=") {
            age = seconds.trim_matches('"').parse::<i64>().ok();
        }
    }
    match age {
        Some(seconds) => Span::seconds(seconds).clamp(MIN_MAX_AGE, MAX_MAX_AGE),
        None => DEFAULT_MAX_AGE,
    }
}

#[cfg(test)]
mod tests;
