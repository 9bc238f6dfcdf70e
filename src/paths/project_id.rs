//! Project id checks: displayable (`znS`), strict (`needs_project_grant`, finalize_plan)
//! and the comparison key (`o3e`). It must not decide what a failed check leads to.

use super::budget::js_length;
use super::characters::rejected_character;
use super::{MAX_PATH_DISPLAY, MAX_PROJECT_ID};

/// `znS`: non-empty, JSON-quoted length at most 80, and free of rejected characters.
pub fn is_displayable_project_id(id: &str) -> bool {
    let quoted_length = serde_json::to_string(id).map_or(usize::MAX, |quoted| js_length(&quoted));
    !id.is_empty() && quoted_length <= MAX_PATH_DISPLAY && rejected_character(id).is_none()
}

/// `^[A-Za-z0-9._-]+$` and at most 78 characters.
pub fn is_strict_project_id(id: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    !id.is_empty() && id.len() <= MAX_PROJECT_ID && id.chars().all(allowed)
}

/// `o3e`: lowercase, strip a leading `urn:uuid:`, remove every `{`, `}` and `-`, so the
/// spellings of one UUID compare equal.
pub fn project_key(id: &str) -> String {
    let lower = id.to_lowercase();
    let bare = lower.strip_prefix("urn:uuid:").unwrap_or(&lower);
    bare.chars()
        .filter(|c| !matches!(c, '{' | '}' | '-'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displayable_project_id_limits_the_quoted_length() {
        assert!(is_displayable_project_id("p"));
        assert!(is_displayable_project_id(&"x".repeat(78)));
        assert!(!is_displayable_project_id(&"x".repeat(79)));
        assert!(!is_displayable_project_id(""));
        // A backslash is escaped: 77 characters ending in one quote to 80, 78 to 81.
        assert!(is_displayable_project_id(&format!("{}\\", "x".repeat(76))));
        assert!(!is_displayable_project_id(&format!("{}\\", "x".repeat(77))));
        // Non-ASCII is not strict but can be displayed.
        assert!(is_displayable_project_id("projet-é"));
    }

    #[test]
    fn displayable_project_id_refuses_rejected_characters() {
        for id in ["a:b", "a#b", "a\u{202E}b", "a\u{FEFF}", "\u{0000}"] {
            assert!(!is_displayable_project_id(id), "{id:?}");
        }
    }

    #[test]
    fn strict_project_id_allows_only_the_safe_alphabet() {
        assert!(is_strict_project_id("0f9a-B_c.d"));
        assert!(is_strict_project_id(&"a".repeat(78)));
        assert!(!is_strict_project_id(&"a".repeat(79)));
        assert!(!is_strict_project_id(""));
        for id in ["a b", "a/b", "a:b", "{a}", "é", "a\n", "a+b", "a\u{FF10}"] {
            assert!(!is_strict_project_id(id), "{id:?}");
        }
    }

    #[test]
    fn project_key_folds_uuid_spellings() {
        assert_eq!(project_key("urn:uuid:{AB-cd}"), "abcd");
        assert_eq!(project_key("URN:UUID:1234-ABCD"), "1234abcd");
        assert_eq!(project_key("{1234-abcd}"), "1234abcd");
        assert_eq!(project_key("x-urn:uuid:a"), "xurn:uuid:a");
        assert_eq!(project_key("urn:uuid:urn:uuid:a"), "urn:uuid:a");
        assert_eq!(project_key(""), "");
        assert_eq!(project_key("urn:uuid:"), "");
    }
}
