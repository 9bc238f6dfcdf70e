//! The negative matrix: every token that must be refused is, with the reason that names it.

use askgate::server::auth::TokenError;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use super::{agent_token, claims, compact, issuers, kid_of, now, op_config, OTHER_RESOURCE};
use crate::support::oidc::Op;

type Case = (&'static str, String, fn(&TokenError) -> bool);

/// A case: a name, the token, and what the refusal must be.
fn case(name: &'static str, token: String, expected: fn(&TokenError) -> bool) -> Case {
    (name, token, expected)
}

async fn matrix(op: &Op) -> Vec<Case> {
    let at = now().unix_timestamp();
    let good = claims(op);
    let with = |key: &str, value: Value| {
        let mut claims = good.clone();
        claims[key] = value;
        claims
    };
    let without = |key: &str| {
        let mut claims = good.clone();
        claims.as_object_mut().unwrap().remove(key);
        claims
    };
    let real = agent_token(op).await;
    let kid = kid_of(&real);
    let pem = op.public_pem(&kid).await;
    let n = op.jwks().await["keys"][0]["n"]
        .as_str()
        .unwrap()
        .to_string();
    let hmac = |secret: &[u8]| {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(kid.clone());
        jsonwebtoken::encode(&header, &good, &EncodingKey::from_secret(secret).unwrap()).unwrap()
    };
    let ec_kid = op.jwks().await["keys"][1]["kid"]
        .as_str()
        .unwrap()
        .to_string();
    let mut tampered: Vec<&str> = real.split('.').collect();
    let forged_payload = compact(&json!({}), &with("sub", json!("root")), b"");
    tampered[1] = forged_payload.split('.').nth(1).unwrap();
    vec![
        case(
            "expired",
            op.mint(with("exp", json!(at - 3600)), json!({}), "RS256")
                .await,
            |e| matches!(e, TokenError::Expired(_)),
        ),
        case(
            "not yet valid",
            op.mint(with("nbf", json!(at + 3600)), json!({}), "RS256")
                .await,
            |e| matches!(e, TokenError::NotYetValid(_)),
        ),
        case(
            "issued in the future",
            op.mint(with("iat", json!(at + 3600)), json!({}), "RS256")
                .await,
            |e| matches!(e, TokenError::IssuedInFuture(_)),
        ),
        case(
            "wrong issuer",
            op.mint(with("iss", json!("https://evil.test")), json!({}), "RS256")
                .await,
            |e| matches!(e, TokenError::UnknownIssuer(iss) if iss == "https://evil.test"),
        ),
        case(
            "wrong audience",
            op.mint(with("aud", json!("https://evil.test")), json!({}), "RS256")
                .await,
            |e| matches!(e, TokenError::WrongAudience { .. }),
        ),
        case(
            "no audience",
            op.mint(without("aud"), json!({}), "RS256").await,
            |e| *e == TokenError::MissingClaim("aud"),
        ),
        case(
            "no expiry",
            op.mint(without("exp"), json!({}), "RS256").await,
            |e| *e == TokenError::MissingClaim("exp"),
        ),
        case(
            "no subject",
            op.mint(without("sub"), json!({}), "RS256").await,
            |e| *e == TokenError::MissingClaim("sub"),
        ),
        case(
            "a token for another resource",
            op.client_credentials("agent", "agent-secret", OTHER_RESOURCE, "other:all")
                .await,
            |e| matches!(e, TokenError::WrongAudience { .. }),
        ),
        case(
            "alg none",
            compact(&json!({"alg": "none", "kid": kid}), &good, b""),
            |e| matches!(e, TokenError::AlgorithmNotAllowed { alg, .. } if alg == "none"),
        ),
        case(
            "HMAC keyed with the public key's PEM",
            hmac(pem.as_bytes()),
            |e| matches!(e, TokenError::AlgorithmNotAllowed { alg, .. } if alg == "HS256"),
        ),
        case(
            "HMAC keyed with the JWK's modulus",
            hmac(n.as_bytes()),
            |e| matches!(e, TokenError::AlgorithmNotAllowed { alg, .. } if alg == "HS256"),
        ),
        case(
            "ES256 naming the RSA key",
            op.mint(good.clone(), json!({"kid": kid}), "ES256").await,
            |e| matches!(e, TokenError::KeyMismatch { .. }),
        ),
        case(
            "RS256 naming the EC key",
            op.mint(good.clone(), json!({"kid": ec_kid}), "RS256").await,
            |e| matches!(e, TokenError::KeyMismatch { .. }),
        ),
        case(
            "unknown kid",
            op.mint(good.clone(), json!({"kid": "no-such-key"}), "RS256")
                .await,
            |e| matches!(e, TokenError::UnknownKey { kid, .. } if kid == "no-such-key"),
        ),
        case(
            "no kid",
            op.mint(good.clone(), json!({"kid": null}), "RS256").await,
            |e| *e == TokenError::MissingKeyId,
        ),
        case("tampered payload", tampered.join("."), |e| {
            *e == TokenError::BadSignature
        }),
        case(
            "oversized",
            op.mint(with("pad", json!("x".repeat(9_000))), json!({}), "RS256")
                .await,
            |e| matches!(e, TokenError::TooLarge { limit: 8192, .. }),
        ),
        case("oversized garbage", "x".repeat(100_000), |e| {
            matches!(e, TokenError::TooLarge { .. })
        }),
        case("not a JWT", "not-a-jwt".into(), |e| {
            matches!(e, TokenError::Malformed(_))
        }),
        case(
            "critical header",
            op.mint(good.clone(), json!({"crit": ["b64"], "b64": true}), "RS256")
                .await,
            |e| *e == TokenError::CriticalHeader,
        ),
        case(
            "group overage",
            op.mint(
                with("_claim_names", json!({"groups": "src1"})),
                json!({}),
                "RS256",
            )
            .await,
            |e| *e == TokenError::GroupOverage("groups".into()),
        ),
        case(
            "no role",
            op.mint(with("scope", json!("askgate:read")), json!({}), "RS256")
                .await,
            |e| *e == TokenError::NoRole,
        ),
        case(
            "both roles",
            op.mint(
                with("groups", json!(["askgate-approvers"])),
                json!({}),
                "RS256",
            )
            .await,
            |e| *e == TokenError::BothRoles,
        ),
    ]
}

#[tokio::test]
async fn the_negative_matrix_is_refused_with_its_reason() {
    let op = Op::start(op_config()).await;
    let issuers = issuers(&[&op]);
    // The real token verifies: every refusal below is the case's own.
    issuers
        .verify(&agent_token(&op).await, now())
        .await
        .unwrap();
    for (name, token, expected) in matrix(&op).await {
        let refused = issuers.verify(&token, now()).await.unwrap_err();
        assert!(expected(&refused), "{name}: refused with `{refused}`");
        let message = refused.to_string();
        assert!(
            !message.contains(&token),
            "{name}: the message holds the token"
        );
        let signature = token.rsplit('.').next().unwrap_or_default();
        assert!(
            signature.len() < 16 || !message.contains(signature),
            "{name}: the message holds the signature"
        );
    }
    assert_eq!(issuers.cached_tokens(), 1, "refusals are not cached");
}

/// A flood of unknown `kid`s costs the issuer one key set fetch, not one per token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_kids_refetch_once_per_cooldown() {
    let op = Op::start(op_config()).await;
    let issuers = std::sync::Arc::new(issuers(&[&op]));
    issuers
        .verify(&agent_token(&op).await, now())
        .await
        .unwrap();
    let before = op.stats().await["jwks"].as_u64().unwrap();
    // Past the cooldown of the fetch the first token made (time is an argument).
    let later = now() + time::Duration::seconds(11);
    let mut tokens = Vec::new();
    for index in 0..32 {
        tokens.push(
            op.mint(
                claims(&op),
                json!({"kid": format!("random-{index}")}),
                "RS256",
            )
            .await,
        );
    }
    let tasks: Vec<_> = tokens
        .into_iter()
        .map(|token| {
            let issuers = issuers.clone();
            tokio::spawn(async move { issuers.verify(&token, later).await })
        })
        .collect();
    for task in tasks {
        let refused = task.await.unwrap().unwrap_err();
        assert!(
            matches!(refused, TokenError::UnknownKey { .. }),
            "{refused}"
        );
    }
    let after = op.stats().await["jwks"].as_u64().unwrap();
    assert_eq!(after - before, 1, "32 unknown kids, one fetch");
}
