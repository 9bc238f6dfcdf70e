//! server::console::oidc::flow: one sign-in in flight — its random `state`, `nonce` and PKCE
//! verifier (RFC 7636, S256), kept in the browser's own short-lived cookie so that the callback
//! may reach any replica of a fleet, and the authorization request built from them. Pure: no
//! I/O, no clock.

use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use time::Duration;

use crate::server::caller::random_token;
use crate::server::config::console::ConsoleOidc;

/// The cookie that carries the sign-in in flight.
pub const FLOW_COOKIE: &str = "askgate_console_oidc";
/// How long a person has to sign in at the provider.
pub const FLOW_TTL: Duration = Duration::minutes(10);

/// The secrets of one sign-in: each 256 random bits, hex.
#[derive(Clone, PartialEq, Eq)]
pub struct Flow {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
}

impl std::fmt::Debug for Flow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Flow { … }")
    }
}

impl Flow {
    /// A new sign-in's secrets.
    pub fn begin() -> Self {
        Self {
            state: random_token(),
            nonce: random_token(),
            verifier: random_token(),
        }
    }

    /// `BASE64URL(SHA256(verifier))`, the `code_challenge` of S256.
    pub fn challenge(&self) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(self.verifier.as_bytes()))
    }

    /// The cookie's value: the three secrets joined by `.`.
    pub fn cookie_value(&self) -> String {
        format!("{}.{}.{}", self.state, self.nonce, self.verifier)
    }

    /// The flow a cookie value holds; `None` unless it is three 64-digit hex parts.
    pub fn from_cookie(value: &str) -> Option<Self> {
        let mut parts = value.split('.');
        let (Some(state), Some(nonce), Some(verifier), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let secret = |part: &str| {
            (part.len() == 64 && part.bytes().all(|byte| byte.is_ascii_hexdigit()))
                .then(|| part.to_string())
        };
        Some(Self {
            state: secret(state)?,
            nonce: secret(nonce)?,
            verifier: secret(verifier)?,
        })
    }

    /// Whether the callback's `state` is this flow's (constant time).
    pub fn answers(&self, state: &str) -> bool {
        bool::from(state.as_bytes().ct_eq(self.state.as_bytes()))
    }

    /// The authorization request at `endpoint` for `config`'s client (code flow, PKCE S256).
    pub fn authorization_url(
        &self,
        endpoint: &str,
        config: &ConsoleOidc,
    ) -> Result<String, String> {
        let scope = config.scopes.join(" ");
        let challenge = self.challenge();
        let url = url::Url::parse_with_params(
            endpoint,
            [
                ("response_type", "code"),
                ("client_id", config.client_id.as_str()),
                ("redirect_uri", config.redirect_uri.as_str()),
                ("scope", scope.as_str()),
                ("state", self.state.as_str()),
                ("nonce", self.nonce.as_str()),
                ("code_challenge", challenge.as_str()),
                ("code_challenge_method", "S256"),
            ],
        )
        .map_err(|why| {
            format!("the provider's authorization endpoint `{endpoint}` is not a URL: {why}")
        })?;
        Ok(url.into())
    }
}

/// A `Set-Cookie` value for the flow cookie; `max_age` zero clears it. `SameSite=Lax`: the
/// provider's redirect back is a cross-site navigation, which a `Strict` cookie would miss.
pub fn set_cookie(value: &str, max_age: Duration) -> String {
    format!(
        "{FLOW_COOKIE}={value}; Path=/console/oidc; HttpOnly; Secure; SameSite=Lax; Max-Age={}",
        max_age.whole_seconds().max(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_round_trips_through_its_cookie_and_nothing_else_reads_as_one() {
        let flow = Flow::begin();
        assert_eq!(Flow::from_cookie(&flow.cookie_value()), Some(flow.clone()));
        assert!(flow.answers(&flow.state));
        assert!(!flow.answers(&flow.nonce));
        for bad in [
            "",
            "a.b.c",
            &format!("{}.{}", flow.state, flow.nonce),
            &format!("{}.x", flow.cookie_value()),
        ] {
            assert_eq!(Flow::from_cookie(bad), None, "{bad}");
        }
        assert_ne!(Flow::begin().state, flow.state);
    }

    #[test]
    fn the_challenge_is_s256_of_the_verifier() {
        // RFC 7636 appendix B.
        let flow = Flow {
            state: String::new(),
            nonce: String::new(),
            verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk".into(),
        };
        assert_eq!(
            flow.challenge(),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
