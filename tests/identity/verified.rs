//! Tokens the provider issues verify, and map to the caller they describe.

use std::sync::Arc;

use askgate::server::auth::{Actor, Issuers};
use askgate::server::caller::Role;
use serde_json::json;
use time::Duration;

use super::{agent_token, claims, identity, issuers, now, op_config, CALLBACK, RESOURCE};
use crate::support::oidc::{CodeClient, Op};

#[tokio::test]
async fn a_client_credentials_token_verifies_as_its_agent() {
    let op = Op::start(op_config()).await;
    let issuers = issuers(&[&op]);
    let token = agent_token(&op).await;

    let verified = issuers.verify(&token, now()).await.unwrap();
    assert_eq!(verified.issuer, op.issuer);
    assert_eq!(verified.subject, "agent");
    assert_eq!(verified.principal(), format!("{}|agent", op.issuer));
    assert_eq!(verified.audience, vec![RESOURCE.to_string()]);
    assert_eq!(verified.scopes, vec!["askgate:agent".to_string()]);
    assert_eq!(verified.groups, vec!["design".to_string()]);
    assert_eq!(verified.email.as_deref(), Some("ci@acme.test"));
    assert_eq!(verified.client.as_deref(), Some("agent"));
    assert_eq!(verified.role, Role::Agent);
    assert!(verified.act.is_empty());
    let left = verified.expires_at - now();
    assert!(
        left > Duration::minutes(9) && left <= Duration::minutes(10),
        "{left}"
    );

    // The second time comes from the cache: the same verification, not a new one.
    let again = issuers.verify(&token, now()).await.unwrap();
    assert!(Arc::ptr_eq(&verified, &again));
    assert_eq!(issuers.cached_tokens(), 1);
}

#[tokio::test]
async fn an_approver_group_and_an_act_chain_are_read_from_the_claims() {
    let op = Op::start(op_config()).await;
    let issuers = issuers(&[&op]);

    let approver = op
        .client_credentials("approver-bot", "approver-secret", RESOURCE, "askgate:read")
        .await;
    let approver = issuers.verify(&approver, now()).await.unwrap();
    assert_eq!(approver.role, Role::Approver);
    assert_eq!(approver.groups, vec!["askgate-approvers".to_string()]);

    // A token an agent holds for a user: the user is the subject, the agent acts (RFC 8693).
    let delegated = op
        .client_credentials("delegate", "delegate-secret", RESOURCE, "askgate:agent")
        .await;
    let delegated = issuers.verify(&delegated, now()).await.unwrap();
    assert_eq!(delegated.subject, "alice");
    assert_eq!(delegated.role, Role::Agent);
    assert_eq!(
        delegated.act,
        vec![
            Actor {
                issuer: None,
                subject: "agent-7".into(),
                client: Some("delegate".into())
            },
            Actor {
                issuer: Some("https://other-idp.test".into()),
                subject: "orchestrator".into(),
                client: None
            },
        ]
    );
}

/// A person signs in with the code flow (PKCE, the development login form over HTTP): the
/// access token for askgate is theirs, and their group makes them an approver.
#[tokio::test]
async fn a_code_flow_sign_in_yields_an_approver_token() {
    let op = Op::start(op_config()).await;
    let issuers = issuers(&[&op]);
    let client = CodeClient {
        client_id: "console",
        secret: "console-secret",
        redirect_uri: CALLBACK,
    };
    let signed_in = op
        .sign_in(&client, "alice", RESOURCE, "openid askgate:read")
        .await;
    assert!(!signed_in.id_token.is_empty());
    let verified = issuers
        .verify(&signed_in.access_token, now())
        .await
        .unwrap();
    assert_eq!(verified.subject, "alice");
    assert_eq!(verified.role, Role::Approver);
    assert_eq!(verified.email.as_deref(), Some("alice@acme.test"));
    assert_eq!(verified.client.as_deref(), Some("console"));
}

#[tokio::test]
async fn an_explicit_jwks_uri_is_used_instead_of_discovery() {
    let op = Op::start(op_config()).await;
    let config = identity(&[&op], json!({"jwks_uri": format!("{}/jwks", op.issuer)}));
    let issuers = Issuers::new(&config, reqwest::Client::new(), 10);
    issuers
        .verify(&agent_token(&op).await, now())
        .await
        .unwrap();
    let stats = op.stats().await;
    assert_eq!(
        (stats["discovery"].as_u64(), stats["jwks"].as_u64()),
        (Some(0), Some(1))
    );
}

/// The cache's invariant: at every time, a cached answer is the answer a fresh verification
/// gives. Tokens with short lifetimes and `nbf` in the future, times around each bound, asked
/// in an order that goes back and forth.
#[tokio::test]
async fn cached_and_fresh_answers_agree() {
    let op = Op::start(op_config()).await;
    let issuers = Issuers::new(
        &identity(&[&op], json!({"clock_skew_seconds": 5})),
        reqwest::Client::new(),
        100,
    );
    let start = now();
    let at = start.unix_timestamp();
    let mut tokens = vec![agent_token(&op).await];
    for (nbf, exp) in [(None, 30), (Some(20), 40), (Some(-10), 3)] {
        let mut claims = claims(&op);
        claims["exp"] = json!(at + exp);
        if let Some(nbf) = nbf {
            claims["nbf"] = json!(at + nbf);
        }
        tokens.push(op.mint(claims, json!({}), "ES256").await);
    }
    let offsets = [
        0, 50, 14, 16, 2, 3, 8, 9, -100, 34, 35, 36, 44, 45, 46, 600, 700, 1,
    ];
    let mut compared = 0;
    for token in &tokens {
        for offset in offsets {
            let when = start + Duration::seconds(offset);
            let cached = issuers.verify(token, when).await.map(|t| (*t).clone());
            let fresh = issuers.verify_uncached(token, when).await;
            assert_eq!(cached, fresh, "offset {offset}");
            compared += 1;
        }
    }
    assert_eq!(compared, tokens.len() * offsets.len());
    assert!(issuers.cached_tokens() >= 1);
}

/// A console sign-in's ID token (issue 34 §4) verifies only for the console's client, with
/// the sign-in's nonce, and an `azp` naming the client when it has several audiences; the
/// issuer's role mapping applies (a person outside the approver groups has no role).
#[tokio::test]
async fn an_id_token_verifies_only_for_its_client_and_its_nonce() {
    let op = Op::start(op_config()).await;
    let issuers = issuers(&[&op]);
    let at = now().unix_timestamp();
    let id = |extra: serde_json::Value| {
        let mut claims = json!({"iss": op.issuer, "sub": "alice", "aud": "console",
                                "nonce": "n-1", "iat": at, "exp": at + 600,
                                "groups": ["askgate-approvers"], "email": "alice@acme.test"});
        for (key, value) in extra.as_object().unwrap() {
            claims[key] = value.clone();
        }
        claims
    };
    let verify = |token: String, nonce: &'static str| {
        let issuers = &issuers;
        async move {
            issuers
                .verify_id_token(&token, "console", nonce, now())
                .await
        }
    };

    let good = op.mint(id(json!({})), json!({"typ": "JWT"}), "RS256").await;
    let person = verify(good.clone(), "n-1").await.unwrap();
    assert_eq!(person.principal(), format!("{}|alice", op.issuer));
    assert_eq!(person.role, Role::Approver);
    assert_eq!(person.email.as_deref(), Some("alice@acme.test"));

    let refused = |error: askgate::server::auth::TokenError| error.to_string();
    assert!(refused(verify(good, "n-2").await.unwrap_err()).contains("nonce"));
    let cases = [
        (id(json!({"nonce": null})), "nonce"),
        (id(json!({"aud": RESOURCE})), "audience"),
        (id(json!({"aud": ["console", "other"]})), "azp"),
        (
            id(json!({"aud": ["console", "other"], "azp": "other"})),
            "azp",
        ),
        (id(json!({"exp": at - 3_600})), "expired"),
        (id(json!({"groups": ["design"]})), "neither"),
    ];
    for (claims, why) in cases {
        let mut claims = claims;
        if claims["nonce"].is_null() {
            claims.as_object_mut().unwrap().remove("nonce");
        }
        let token = op
            .mint(claims.clone(), json!({"typ": "JWT"}), "RS256")
            .await;
        let error = refused(verify(token, "n-1").await.unwrap_err());
        assert!(error.contains(why), "{claims}: {error}");
    }
    let several = op
        .mint(
            id(json!({"aud": ["console", "other"], "azp": "console"})),
            json!({"typ": "JWT"}),
            "RS256",
        )
        .await;
    assert!(verify(several, "n-1").await.is_ok());
}
