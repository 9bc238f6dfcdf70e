//! state::grants tests: verified, ineligible and recard bookkeeping (client-facts §5).
use super::*;

const PROJECT: &str = "0a1b2c3d-0000-4000-8000-00000000abcd";
const PROJECT_KEY: &str = "0a1b2c3d00004000800000000000abcd";
const BRACED: &str = "{0A1B2C3D-0000-4000-8000-00000000ABCD}";

#[test]
fn a_fresh_store_trusts_nothing_and_flags_nothing() {
    let grants = GrantStore::default();
    assert!(!grants.is_verified(PROJECT));
    assert!(!grants.is_ineligible(PROJECT));
    assert!(!grants.needs_recard(PROJECT));
    assert!(!grants.recard_all_flagged());
    assert!(grants.verified_projects().is_empty());
}

#[test]
fn grant_recorded_verifies_the_exact_raw_id_only() {
    let grants = GrantStore::default();
    grants.grant_recorded(PROJECT);
    assert!(grants.is_verified(PROJECT));
    assert!(!grants.is_verified(BRACED));
    assert!(!grants.is_verified(&PROJECT.to_uppercase()));
    assert_eq!(grants.verified_projects(), vec![PROJECT.to_owned()]);
}

#[test]
fn server_grant_observed_verifies_unless_recard_is_needed() {
    let grants = GrantStore::default();
    assert!(grants.server_grant_observed(PROJECT));
    assert!(grants.is_verified(PROJECT));
    grants.recard_flagged(BRACED);
    assert!(!grants.server_grant_observed(PROJECT));
    assert!(!grants.is_verified(PROJECT));
}

#[test]
fn recard_flag_is_by_key_and_drops_every_spelling_of_the_verified_mark() {
    let grants = GrantStore::default();
    grants.grant_recorded(PROJECT);
    grants.grant_recorded(BRACED);
    grants.grant_recorded("other");
    grants.recard_flagged(&format!("urn:uuid:{PROJECT}"));
    assert!(grants.needs_recard(PROJECT));
    assert!(grants.needs_recard(BRACED));
    assert!(!grants.needs_recard("other"));
    assert_eq!(grants.verified_projects(), vec!["other".to_owned()]);
    assert_eq!(grants.recard_projects(), vec![PROJECT_KEY.to_owned()]);
}

#[test]
fn re_approving_the_card_verifies_and_keeps_the_recard_flag() {
    let grants = GrantStore::default();
    grants.recard_flagged(PROJECT);
    grants.grant_recorded(BRACED);
    assert!(grants.is_verified(BRACED));
    assert!(
        grants.needs_recard(PROJECT),
        "only the server's word is distrusted"
    );
    assert_eq!(grants.recard_projects(), vec![PROJECT_KEY.to_owned()]);
    assert!(!grants.server_grant_observed(PROJECT));
    assert!(!grants.is_verified(PROJECT));
}

#[test]
fn recard_all_then_re_approving_one_project() {
    let grants = GrantStore::default();
    grants.grant_recorded("a");
    grants.grant_recorded("b");
    grants.recard_all();
    assert!(grants.recard_all_flagged());
    assert!(grants.verified_projects().is_empty());
    assert!(grants.needs_recard("a") && grants.needs_recard("b") && grants.needs_recard("new"));
    assert!(!grants.server_grant_observed("a"));

    grants.grant_recorded("a");
    assert!(grants.is_verified("a"), "the human's approval verifies it");
    assert!(
        grants.needs_recard("a"),
        "recard-all stays set (§8 6a reads it)"
    );
    assert!(!grants.server_grant_observed("b"));
    assert_eq!(grants.verified_projects(), vec!["a".to_owned()]);
}

#[test]
fn a_second_recard_all_drops_earlier_re_approvals() {
    let grants = GrantStore::default();
    grants.recard_all();
    grants.grant_recorded("a");
    grants.recard_all();
    assert!(grants.needs_recard("a"));
    assert!(!grants.is_verified("a"));
}

#[test]
fn a_flag_after_a_re_approval_drops_the_verified_mark() {
    let grants = GrantStore::default();
    grants.recard_flagged("a");
    grants.grant_recorded("a");
    grants.recard_flagged("A");
    assert!(!grants.is_verified("a"));
    assert!(grants.needs_recard("a"));
}

#[test]
fn not_found_marks_the_key_ineligible() {
    let grants = GrantStore::default();
    grants.grant_refused_not_found(BRACED);
    assert!(grants.is_ineligible(PROJECT));
    assert!(grants.is_ineligible(&format!("URN:UUID:{PROJECT}")));
    assert!(!grants.is_ineligible("other"));
    assert_eq!(grants.ineligible_keys(), vec![PROJECT_KEY.to_owned()]);
    grants.recard_all();
    grants.all_verified_dropped();
    assert!(
        grants.is_ineligible(PROJECT),
        "ineligibility lasts for the process"
    );
}

#[test]
fn verified_dropped_is_by_key_and_leaves_recard_alone() {
    let grants = GrantStore::default();
    grants.grant_recorded(PROJECT);
    grants.grant_recorded("other");
    grants.verified_dropped(BRACED);
    assert!(!grants.is_verified(PROJECT));
    assert!(grants.is_verified("other"));
    assert!(!grants.needs_recard(PROJECT));
    grants.verified_dropped("never-verified");
    grants.all_verified_dropped();
    assert!(grants.verified_projects().is_empty());
}

#[test]
fn listings_are_sorted() {
    let grants = GrantStore::default();
    for id in ["c", "a", "b"] {
        grants.grant_recorded(id);
        grants.grant_refused_not_found(id);
    }
    for id in ["z", "y"] {
        grants.recard_flagged(id);
    }
    assert_eq!(grants.verified_projects(), ["a", "b", "c"]);
    assert_eq!(grants.ineligible_keys(), ["a", "b", "c"]);
    assert_eq!(grants.recard_projects(), ["y", "z"]);
}

#[test]
fn empty_and_odd_ids_do_not_panic() {
    let grants = GrantStore::default();
    for id in ["", "urn:uuid:", "{}", "-", "\u{0}", "ß\u{130}"] {
        grants.grant_recorded(id);
        grants.recard_flagged(id);
        grants.grant_refused_not_found(id);
        assert!(grants.needs_recard(id));
        assert!(!grants.is_verified(id));
    }
}
