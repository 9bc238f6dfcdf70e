//! server::auth::issuer::tests: the refusals of `IdentityConfig::validate`, each naming its field.
use serde_json::json;

use super::*;

fn validate(issuers: serde_json::Value) -> Result<IdentityConfig, ConfigError> {
    let raw: RawIdentity = serde_json::from_value(json!({ "issuers": issuers })).unwrap();
    IdentityConfig::validate(raw)
}

fn minimal() -> serde_json::Value {
    json!({
        "issuer": "https://idp.example.com/realms/acme",
        "audience": "https://askgate.example.com/mcp",
        "agent_scopes": ["askgate:agent"],
    })
}

fn refused(issuer: serde_json::Value) -> (String, String) {
    let error = validate(json!([issuer])).unwrap_err();
    (error.field, error.message)
}

fn with(key: &str, value: serde_json::Value) -> serde_json::Value {
    let mut issuer = minimal();
    issuer[key] = value;
    issuer
}

#[test]
fn a_minimal_issuer_takes_the_defaults() {
    let config = validate(json!([minimal()])).unwrap();
    let issuer = &config.issuers[0];
    assert_eq!(
        issuer.keys,
        KeysLocation::Discovery(
            "https://idp.example.com/realms/acme/.well-known/openid-configuration".into()
        )
    );
    assert_eq!(issuer.algorithms, vec![Algorithm::RS256, Algorithm::ES256]);
    assert_eq!(issuer.clock_skew_seconds, 60);
    assert_eq!(issuer.max_token_bytes, 8192);
    assert_eq!(issuer.claims.groups, "groups");
    assert_eq!(issuer.claims.client, None);
}

#[test]
fn an_issuer_without_an_audience_refuses_to_load_naming_it() {
    let mut issuer = minimal();
    issuer.as_object_mut().unwrap().remove("audience");
    let (field, message) = refused(issuer);
    assert_eq!(field, "identity.issuers[0].audience");
    assert!(
        message.contains("https://idp.example.com/realms/acme"),
        "{message}"
    );
    let (field, _) = refused(with("audience", json!("  ")));
    assert_eq!(field, "identity.issuers[0].audience");
}

#[test]
fn none_and_hmac_algorithms_are_refused() {
    for (alg, says) in [
        ("none", "never allowed"),
        ("HS256", "HMAC"),
        ("XS1", "not one of"),
    ] {
        let (field, message) = refused(with("algorithms", json!(["RS256", alg])));
        assert_eq!(field, "identity.issuers[0].algorithms");
        assert!(message.contains(says), "{alg}: {message}");
    }
    let (_, message) = refused(with("algorithms", json!([])));
    assert_eq!(message, "is empty");
}

#[test]
fn bounds_urls_and_roles_are_checked() {
    let cases = [
        (with("clock_skew_seconds", json!(301)), "clock_skew_seconds"),
        (with("max_token_bytes", json!(10)), "max_token_bytes"),
        (with("issuer", json!("http://idp.example.com")), "issuer"),
        (
            with("jwks_uri", json!("ftp://idp.example.com/keys")),
            "jwks_uri",
        ),
        (with("agent_scopes", json!([])), "agent_scopes"),
        (
            with("approver_scopes", json!(["askgate:agent"])),
            "approver_scopes",
        ),
    ];
    for (issuer, key) in cases {
        let (field, message) = refused(issuer);
        assert_eq!(field, format!("identity.issuers[0].{key}"), "{message}");
    }
    assert!(validate(json!([with("issuer", json!("http://127.0.0.1:9000"))])).is_ok());
}

#[test]
fn unknown_keys_and_duplicate_issuers_are_refused() {
    let raw =
        serde_json::from_value::<RawIdentity>(json!({"issuers": [with("audiences", json!("x"))]}));
    assert!(raw
        .unwrap_err()
        .to_string()
        .contains("unknown field `audiences`"));
    let error = validate(json!([minimal(), minimal()])).unwrap_err();
    assert_eq!(error.field, "identity.issuers[1].issuer");
}
