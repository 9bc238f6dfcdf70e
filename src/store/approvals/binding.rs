//! store::approvals::binding: what an approval is bound to (issue 35 §3) — the digest of the
//! held call in its canonical JSON form and the hash of the policy set that asked for it. The
//! approval keeps both from the moment it is held; on release the work checks the call it is
//! about to run against the digest (a call that is not the one approved never runs) and names
//! the policy set of the ask when the re-decision under another one refuses it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::view::ApprovedCall;
use crate::call::digest::canonical_json;

/// The call and the policy set an approval was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// `sha256:` and the hex SHA-256 of the held call's canonical JSON (its service, and the
    /// operation or method with every argument; object keys sorted, so a store that reorders
    /// them, as PostgreSQL's `jsonb` does, digests alike).
    pub call: String,
    /// The policy-set hash the ask was decided under (`sha256:…`, as decision records name it).
    pub policies: String,
}

impl Binding {
    /// Binds `call`, asked under the policy set `policies`.
    pub fn of(call: &ApprovedCall, policies: &str) -> Binding {
        Binding {
            call: digest(call),
            policies: policies.to_string(),
        }
    }

    /// Whether `call` is the call this approval was asked for; `Err` names both digests.
    pub fn holds_for(&self, call: &ApprovedCall) -> Result<(), Changed> {
        let now = digest(call);
        if now == self.call {
            Ok(())
        } else {
            Err(Changed {
                approved: self.call.clone(),
                held: now,
            })
        }
    }

    /// The sentence a refusal under another policy set adds: which set asked, which decided.
    pub fn policies_changed(&self, now: &str) -> Option<String> {
        (self.policies != now).then(|| {
            format!(
                "the policies changed since it was asked (asked under {}, decided again under {now})",
                self.policies
            )
        })
    }
}

/// The held call is not the approved one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the held call is not the call that was approved (approved {approved}, held {held}): it was not run; ask again")]
pub struct Changed {
    pub approved: String,
    pub held: String,
}

/// `sha256:<hex>` of the call's canonical JSON, in its wire form (`rows::held::CallV1`, as
/// the store keeps it), so a digest does not change with the code's types. A call that cannot
/// be written as JSON (it always can: it was read from JSON) digests as its empty form, which
/// matches no other.
pub fn digest(call: &ApprovedCall) -> String {
    let wire = crate::store::rows::held::CallV1::from(call.clone());
    let value = serde_json::to_value(wire).unwrap_or_default();
    let hash = Sha256::digest(canonical_json(&value).as_bytes());
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::DesignCall;
    use serde_json::json;

    fn design(arguments: serde_json::Value) -> ApprovedCall {
        let input = json!({"operation": "delete_files", "arguments": arguments});
        let call = DesignCall::parse(input, None).unwrap_or_else(|error| panic!("{error:?}"));
        ApprovedCall::Design(call)
    }

    #[test]
    fn the_same_call_in_any_key_order_holds_and_any_other_argument_does_not() {
        let asked = design(json!({"project_id": "p1", "paths": ["a.txt", "b.txt"]}));
        let binding = Binding::of(&asked, "sha256:aaaa");
        assert!(binding.call.starts_with("sha256:") && binding.call.len() == 71);
        let reordered = design(json!({"paths": ["a.txt", "b.txt"], "project_id": "p1"}));
        assert_eq!(binding.holds_for(&reordered), Ok(()));
        let other = design(json!({"project_id": "p1", "paths": ["a.txt", "c.txt"]}));
        let changed = binding.holds_for(&other).expect_err("another path");
        assert_eq!(changed.approved, binding.call);
        assert_ne!(changed.held, binding.call);
        assert!(changed
            .to_string()
            .contains("not the call that was approved"));
    }

    #[test]
    fn a_policy_change_is_named_only_when_the_set_changed() {
        let binding = Binding::of(&design(json!({"project_id": "p1"})), "sha256:aaaa");
        assert_eq!(binding.policies_changed("sha256:aaaa"), None);
        assert_eq!(
            binding.policies_changed("sha256:bbbb").as_deref(),
            Some("the policies changed since it was asked (asked under sha256:aaaa, decided again under sha256:bbbb)")
        );
    }
}
