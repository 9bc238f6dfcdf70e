//! The authorization code flow with PKCE against the test provider, driven over plain HTTP as
//! a browser would: the development login form's posted `login` becomes the account, the
//! consent form grants what was asked, and the code is exchanged for tokens.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::Op;

/// A code-flow client of the provider (one with `redirect_uris` in its configuration).
pub struct CodeClient<'a> {
    pub client_id: &'a str,
    pub secret: &'a str,
    pub redirect_uri: &'a str,
}

/// What the token endpoint gave for the code.
pub struct SignedIn {
    pub access_token: String,
    pub id_token: String,
}

impl Op {
    /// Signs `login` in through `client` and returns its tokens for `resource`.
    pub async fn sign_in(
        &self,
        client: &CodeClient<'_>,
        login: &str,
        resource: &str,
        scope: &str,
    ) -> SignedIn {
        // RFC 7636: 43 to 128 characters; 32 random bytes make 43.
        let random = [
            uuid::Uuid::new_v4().into_bytes(),
            uuid::Uuid::new_v4().into_bytes(),
        ]
        .concat();
        let verifier = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random);
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        let authorize = reqwest::Url::parse_with_params(
            &format!("{}/auth", self.issuer),
            &[
                ("client_id", client.client_id),
                ("redirect_uri", client.redirect_uri),
                ("response_type", "code"),
                ("scope", scope),
                ("resource", resource),
                ("state", "state-1"),
                ("nonce", "nonce-1"),
                ("code_challenge", &challenge),
                ("code_challenge_method", "S256"),
            ],
        )
        .unwrap();
        let location = self.authorize(authorize.as_str(), login).await;
        assert!(
            location.starts_with(client.redirect_uri),
            "expected the callback, got `{location}`"
        );
        let callback = reqwest::Url::parse(&location).unwrap();
        let query: BTreeMap<_, _> = callback.query_pairs().into_owned().collect();
        assert_eq!(query.get("state").map(String::as_str), Some("state-1"));
        let response = self
            .http
            .post(format!("{}/token", self.issuer))
            .basic_auth(client.client_id, Some(client.secret))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", query["code"].as_str()),
                ("redirect_uri", client.redirect_uri),
                ("code_verifier", &verifier),
                ("resource", resource),
            ])
            .send()
            .await
            .unwrap();
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        assert!(status.is_success(), "code exchange: {status} {body}");
        SignedIn {
            access_token: body["access_token"].as_str().unwrap().to_string(),
            id_token: body["id_token"].as_str().unwrap().to_string(),
        }
    }

    /// Drives the authorization request `authorize` (a URL a relying party built) through the
    /// development login form as `login` and the consent form, with a fresh browser, and
    /// returns where the provider sends the browser back (the redirect URI with the code).
    pub async fn authorize(&self, authorize: &str, login: &str) -> String {
        let mut cookies = BTreeMap::new();
        let mut location = self.follow(authorize, None, &mut cookies).await;
        // Login, then consent: each an interaction page answered by its form.
        for form in [
            vec![("prompt", "login"), ("login", login), ("password", "any")],
            vec![("prompt", "consent")],
        ] {
            assert!(
                location.contains("/interaction/"),
                "expected an interaction, got `{location}`"
            );
            location = self.follow(&location, Some(&form), &mut cookies).await;
            location = self.follow(&location, None, &mut cookies).await;
        }
        location
    }

    /// GETs `url` (or POSTs `form` to it) with the cookies so far, keeps the ones it sets, and
    /// returns where it redirects to (absolute).
    async fn follow(
        &self,
        url: &str,
        form: Option<&[(&str, &str)]>,
        cookies: &mut BTreeMap<String, String>,
    ) -> String {
        let url = if url.starts_with('/') {
            format!("{}{url}", self.issuer)
        } else {
            url.to_string()
        };
        let header = cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        let request = match form {
            Some(form) => self.http.post(&url).form(form),
            None => self.http.get(&url),
        };
        let response = request
            .header(reqwest::header::COOKIE, header)
            .send()
            .await
            .unwrap();
        for set in response.headers().get_all(reqwest::header::SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            cookies.insert(name.to_string(), value.to_string());
        }
        let status = response.status();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .map(|value| value.to_str().unwrap().to_string());
        match location {
            Some(location) if location.starts_with('/') => format!("{}{location}", self.issuer),
            Some(location) => location,
            None => panic!(
                "`{url}` answered {status} without a redirect: {}",
                response.text().await.unwrap_or_default()
            ),
        }
    }
}
