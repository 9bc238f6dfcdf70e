//! server::auth::claims::tests: claims → caller, on claims as a verified token carries them.
use serde_json::{json, Value};

use super::*;
use crate::server::auth::issuer::{IdentityConfig, RawIdentity};

fn config(extra: Value) -> IssuerConfig {
    let mut issuer = json!({
        "issuer": "https://login.example.com/tenant/v2.0",
        "audience": "api://askgate",
        "agent_scopes": ["askgate.agent"],
        "approver_groups": ["approvers"],
    });
    for (key, value) in extra.as_object().unwrap() {
        issuer[key] = value.clone();
    }
    let raw: RawIdentity = serde_json::from_value(json!({ "issuers": [issuer] })).unwrap();
    IdentityConfig::validate(raw).unwrap().issuers.remove(0)
}

fn mapped(claims: Value, config: &IssuerConfig) -> Result<VerifiedToken, TokenError> {
    map(
        claims.as_object().unwrap(),
        config,
        OffsetDateTime::UNIX_EPOCH,
    )
}

#[test]
fn entra_style_scp_azp_and_a_configured_email_claim() {
    let config = config(json!({"email_claim": "preferred_username"}));
    let token = mapped(
        json!({"sub": "u1", "aud": "api://askgate", "scp": "askgate.agent User.Read",
               "azp": "app-1", "client_id": "ignored", "preferred_username": "a@example.com"}),
        &config,
    )
    .unwrap();
    assert_eq!(token.scopes, vec!["askgate.agent", "User.Read"]);
    assert_eq!(token.client.as_deref(), Some("app-1"));
    assert_eq!(token.email.as_deref(), Some("a@example.com"));
    assert_eq!(token.role, Role::Agent);
}

#[test]
fn okta_style_scp_array_and_a_configured_client_claim() {
    let config = config(json!({"client_claim": "cid", "groups_claim": "roles"}));
    let token = mapped(
        json!({"sub": "u1", "scp": ["askgate.agent"], "cid": "okta-app", "roles": ["dev"]}),
        &config,
    )
    .unwrap();
    assert_eq!(token.client.as_deref(), Some("okta-app"));
    assert_eq!(token.groups, vec!["dev"]);
}

#[test]
fn a_group_overage_fails_closed_naming_it() {
    let config = config(json!({}));
    for claims in [
        json!({"sub": "u1", "scope": "askgate.agent", "_claim_names": {"groups": "src1"},
               "_claim_sources": {"src1": {"endpoint": "https://graph.microsoft.com/..."}}}),
        json!({"sub": "u1", "scope": "askgate.agent", "hasgroups": true}),
    ] {
        let error = mapped(claims, &config).unwrap_err();
        assert_eq!(error, TokenError::GroupOverage("groups".into()));
        assert!(error.to_string().contains("`_claim_names`"), "{error}");
    }
    // The groups present alongside a (stale) marker are the groups.
    let token = mapped(
        json!({"sub": "u1", "groups": ["approvers"], "_claim_names": {"groups": "src1"}}),
        &config,
    )
    .unwrap();
    assert_eq!(token.role, Role::Approver);
}

#[test]
fn an_act_chain_is_read_outermost_first_and_bounded() {
    let config = config(json!({}));
    let token = mapped(
        json!({"sub": "alice", "scope": "askgate.agent",
               "act": {"sub": "agent", "client_id": "c", "act": {"sub": "svc", "iss": "https://i"}}}),
        &config,
    )
    .unwrap();
    let subjects: Vec<_> = token
        .act
        .iter()
        .map(|actor| actor.subject.as_str())
        .collect();
    assert_eq!(subjects, vec!["agent", "svc"]);
    assert_eq!(token.act[1].issuer.as_deref(), Some("https://i"));
    // As principals: the token's issuer's namespace unless the actor names its own.
    assert_eq!(
        token.actors(),
        vec![
            format!("{}|agent", token.issuer),
            "https://i|svc".to_string()
        ]
    );

    let mut deep = json!({"sub": "last"});
    for depth in 0..MAX_ACTOR_DEPTH {
        deep = json!({"sub": format!("actor-{depth}"), "act": deep});
    }
    let error = mapped(
        json!({"sub": "alice", "scope": "askgate.agent", "act": deep}),
        &config,
    );
    assert_eq!(
        error.unwrap_err(),
        TokenError::ActorChainTooDeep(MAX_ACTOR_DEPTH)
    );
    let error = mapped(
        json!({"sub": "alice", "scope": "askgate.agent", "act": {"client_id": "c"}}),
        &config,
    );
    assert_eq!(error.unwrap_err(), TokenError::BadClaim("act.sub".into()));
}

#[test]
fn malformed_claims_are_refused_by_name() {
    let config = config(json!({}));
    for (claims, name) in [
        (json!({"sub": "u", "scope": 7}), "scope"),
        (
            json!({"sub": "u", "scope": "askgate.agent", "groups": [1]}),
            "groups",
        ),
        (
            json!({"sub": "u", "scope": "askgate.agent", "email": ["a", "b"]}),
            "email",
        ),
    ] {
        assert_eq!(
            mapped(claims, &config).unwrap_err(),
            TokenError::BadClaim(name.into())
        );
    }
}
