//! Several issuers, and an issuer that goes away.

use askgate::server::auth::TokenError;
use serde_json::json;
use time::Duration;

use super::{agent_token, claims, issuers, now, op_config};
use crate::support::oidc::Op;

/// The same `sub` from two issuers is two identities; neither issuer can speak for the other.
#[tokio::test]
async fn a_colliding_sub_from_a_second_issuer_is_another_identity() {
    let first = Op::start(op_config()).await;
    let second = Op::start(op_config()).await;
    let issuers = issuers(&[&first, &second]);

    let one = issuers
        .verify(&agent_token(&first).await, now())
        .await
        .unwrap();
    let two = issuers
        .verify(&agent_token(&second).await, now())
        .await
        .unwrap();
    assert_eq!(
        (one.subject.as_str(), two.subject.as_str()),
        ("agent", "agent")
    );
    assert_ne!(one.principal(), two.principal());
    assert_eq!(one.principal(), format!("{}|agent", first.issuer));
    assert_eq!(two.principal(), format!("{}|agent", second.issuer));

    // The second provider signs a token claiming to come from the first: the first's keys
    // do not include the second's.
    let forged = second.mint(claims(&first), json!({}), "RS256").await;
    let refused = issuers.verify(&forged, now()).await.unwrap_err();
    assert!(
        matches!(refused, TokenError::UnknownKey { ref issuer, .. } if *issuer == first.issuer),
        "{refused}"
    );
}

/// With the issuer unreachable, its last good keys are served for their lifetime plus 24 h,
/// then no token of it verifies.
#[tokio::test]
async fn the_last_good_keys_serve_within_the_bound_then_refuse() {
    let mut op = Op::start(op_config()).await;
    let issuers = issuers(&[&op]);
    let start = now();
    let mut claims = claims(&op);
    claims["exp"] = json!((start + Duration::hours(48)).unix_timestamp());
    let token = op.mint(claims, json!({}), "RS256").await;
    issuers.verify_uncached(&token, start).await.unwrap();

    op.stop().await;
    // The key set came with `max-age=120`: fresh for 2 minutes, usable 24 h past that.
    for later in [
        Duration::hours(1),
        Duration::hours(24),
        Duration::hours(24) + Duration::seconds(110),
    ] {
        let verified = issuers.verify_uncached(&token, start + later).await;
        assert!(
            verified.is_ok(),
            "{later} after the last fetch: {verified:?}"
        );
    }
    let refused = issuers
        .verify_uncached(&token, start + Duration::hours(24) + Duration::minutes(3))
        .await
        .unwrap_err();
    let TokenError::KeysUnavailable { ref reason, .. } = refused else {
        panic!("refused with `{refused}`");
    };
    assert!(
        reason.contains("unreachable") && reason.contains("could not be fetched"),
        "{reason}"
    );
}
