//! server::console::oidc::provider: the OpenID Provider as the console's sign-in sees it — its
//! authorization and token endpoints (from its discovery document, read once and kept; a
//! failed read is tried again by the next sign-in) and the exchange of a code for the ID token.
//! Every request has a deadline and a body limit; the client secret and the code never appear
//! in an error.

use serde::Deserialize;
use tokio::sync::OnceCell;

use super::flow::Flow;
use crate::server::auth::error::shown;
use crate::server::auth::fetch::{self, FETCH_TIMEOUT};
use crate::server::config::console::ConsoleOidc;

/// Where a sign-in goes at the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    pub authorization: String,
    pub token: String,
}

/// The provider of `console.oidc`, ready for sign-ins.
pub struct Provider {
    pub config: ConsoleOidc,
    http: reqwest::Client,
    endpoints: OnceCell<Endpoints>,
}

impl Provider {
    pub fn new(config: ConsoleOidc, http: reqwest::Client) -> Self {
        Self {
            config,
            http,
            endpoints: OnceCell::new(),
        }
    }

    /// The provider's endpoints, read from its discovery document the first time.
    pub async fn endpoints(&self) -> Result<&Endpoints, String> {
        self.endpoints
            .get_or_try_init(|| async {
                let issuer = &self.config.issuer;
                let uri = format!(
                    "{}/.well-known/openid-configuration",
                    issuer.trim_end_matches('/')
                );
                let discovery = fetch::discovery(&self.http, issuer, &uri).await?;
                let endpoint = |value: Option<String>, name: &str| match value {
                    Some(value) if fetch::secure(&value) => Ok(value),
                    Some(value) => Err(format!(
                        "the discovery document's `{name}` `{}` is not https",
                        shown(&value)
                    )),
                    None => Err(format!("the discovery document `{uri}` names no `{name}`")),
                };
                Ok(Endpoints {
                    authorization: endpoint(
                        discovery.authorization_endpoint,
                        "authorization_endpoint",
                    )?,
                    token: endpoint(discovery.token_endpoint, "token_endpoint")?,
                })
            })
            .await
    }

    /// The ID token the provider gives for `code` of `flow` (authorization code grant with the
    /// PKCE verifier, the client authenticated by `client_secret_basic` when it has a secret).
    pub async fn exchange(&self, code: &str, flow: &Flow) -> Result<String, String> {
        let endpoints = self.endpoints().await?;
        let uri = endpoints.token.as_str();
        let config = &self.config;
        let mut request = self.http.post(uri).form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", config.redirect_uri.as_str()),
            ("code_verifier", flow.verifier.as_str()),
            ("client_id", config.client_id.as_str()),
        ]);
        if let Some(secret) = &config.client_secret {
            request = request.basic_auth(&config.client_id, Some(secret));
        }
        let answer = async {
            let response = request
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|why| format!("`{uri}` could not be reached: {}", fetch::cause(&why)))?;
            let status = response.status();
            let body = fetch::body(response, uri).await?;
            Ok::<_, String>((status, body))
        };
        let (status, body) = tokio::time::timeout(FETCH_TIMEOUT, answer)
            .await
            .map_err(|_| format!("`{uri}` did not answer within {FETCH_TIMEOUT:?}"))??;
        #[derive(Deserialize)]
        struct Answer {
            id_token: Option<String>,
            error: Option<String>,
            error_description: Option<String>,
        }
        let answer: Answer = serde_json::from_slice(&body)
            .map_err(|_| format!("the token endpoint answered {status} with no JSON"))?;
        if !status.is_success() {
            return Err(format!(
                "the token endpoint refused the code ({status}): {}{}",
                shown(answer.error.as_deref().unwrap_or("no error named")),
                answer
                    .error_description
                    .map(|text| format!(" — {}", shown(&text)))
                    .unwrap_or_default()
            ));
        }
        answer.id_token.ok_or_else(|| {
            "the token endpoint gave no `id_token` (is `openid` among the scopes?)".into()
        })
    }
}
