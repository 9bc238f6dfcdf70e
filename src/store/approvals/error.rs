//! store::approvals::error: why an approval book could not answer — the approval is unknown,
//! it has already ended, or the store failed. The server maps it to its HTTP answer.

use crate::store::StoreError;

/// Whether `id` has the shape of an approval id askgate gives out (`ap_` and up to 64 letters,
/// digits, `_` or `-`). Anything else is unknown without asking a store (P4).
pub fn is_approval_id(id: &str) -> bool {
    id.strip_prefix("ap_").is_some_and(|rest| {
        (1..=64).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

/// The id as an answer names it: at most 64 characters, control characters escaped.
pub fn shown_id(id: &str) -> String {
    let mut shown: String = id.chars().take(64).flat_map(char::escape_default).collect();
    if id.chars().nth(64).is_some() {
        shown.push('…');
    }
    shown
}

/// Why an approval could not be read or moved.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("no approval `{0}`")]
    Unknown(String),
    #[error("approval `{id}` is already {status}")]
    Closed { id: String, status: String },
    /// The same approver approved twice: the second changes nothing (issue 35 §2).
    #[error("`{by}` already approved approval `{id}`: {tally}; waiting for another approver")]
    AlreadyApproved {
        id: String,
        by: String,
        tally: String,
    },
    #[error("{0}")]
    Store(#[from] StoreError),
}

impl ApprovalError {
    /// An unknown approval, named as an answer may show it.
    pub fn unknown(id: &str) -> Self {
        Self::Unknown(shown_id(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p4_only_ids_of_askgates_shape_are_approval_ids() {
        assert!(is_approval_id("ap_0123456789abcdef0123456789abcdef"));
        for hostile in [
            "ap_\u{0}x",
            "ap_",
            "ap_x y",
            "x",
            "ap_%00",
            "ap_' OR 1=1 --",
        ] {
            assert!(!is_approval_id(hostile), "{hostile:?}");
        }
        assert!(!is_approval_id(&format!("ap_{}", "a".repeat(65))));
        assert_eq!(shown_id("ap_\u{0}x"), "ap_\\u{0}x");
        assert_eq!(shown_id(&"a".repeat(100)).chars().count(), 65);
    }
}
