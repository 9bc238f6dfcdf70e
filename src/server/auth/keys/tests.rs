//! server::auth::keys::tests: which published keys are kept, and which algorithms each verifies.
use serde_json::json;

use super::*;

const N: &str = "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw";

fn set(keys: serde_json::Value) -> HashMap<String, Arc<VerifyingKey>> {
    KeySet::parse(json!({ "keys": keys }).to_string().as_bytes()).unwrap()
}

#[test]
fn only_public_signature_keys_with_a_kid_are_kept() {
    let rsa = |kid: &str| json!({"kty": "RSA", "kid": kid, "n": N, "e": "AQAB"});
    let keys = set(json!([
        rsa("kept"),
        {"kty": "RSA", "n": N, "e": "AQAB"},
        {"kty": "RSA", "kid": "enc", "use": "enc", "n": N, "e": "AQAB"},
        {"kty": "RSA", "kid": "sign-only", "key_ops": ["sign"], "n": N, "e": "AQAB"},
        {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
        {"kty": "AKP", "kid": "post-quantum", "alg": "ML-DSA-44", "pub": "AAAA"},
        {"kty": "RSA", "kid": "hmac", "alg": "HS256", "n": N, "e": "AQAB"},
    ]));
    assert_eq!(keys.keys().collect::<Vec<_>>(), vec!["kept"]);
    let key = &keys["kept"];
    assert_eq!(key.kind, KeyKind::Rsa);
    assert_eq!(key.refuses(Algorithm::RS256), None);
    assert_eq!(key.refuses(Algorithm::PS512), None);
    for wrong in [Algorithm::HS256, Algorithm::ES256, Algorithm::EdDSA] {
        assert!(key.refuses(wrong).is_some(), "{wrong:?}");
    }
}

#[test]
fn a_key_published_for_one_algorithm_verifies_only_that_one() {
    let keys = set(json!([{"kty": "RSA", "kid": "k", "alg": "PS256", "n": N, "e": "AQAB"}]));
    assert_eq!(keys["k"].refuses(Algorithm::PS256), None);
    assert_eq!(
        keys["k"].refuses(Algorithm::RS256),
        Some("the key is published for another algorithm")
    );
}

#[test]
fn a_key_set_larger_than_the_bound_is_refused_whole() {
    let keys: Vec<_> = (0..=MAX_KEYS)
        .map(|index| json!({"kty": "RSA", "kid": index.to_string(), "n": N, "e": "AQAB"}))
        .collect();
    let error = KeySet::parse(json!({ "keys": keys }).to_string().as_bytes()).unwrap_err();
    assert_eq!(
        error,
        format!(
            "the key set has {} keys, more than {MAX_KEYS}",
            MAX_KEYS + 1
        )
    );
    assert!(KeySet::parse(b"{\"keys\": 3}").is_err());
}
