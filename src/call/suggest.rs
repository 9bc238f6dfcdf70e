//! Builds "did you mean" hints for unknown keys; it must not decide whether a key is allowed.

/// Edit distance at or under which a known key is offered as a correction.
const CLOSE_MATCH_MAX_EDITS: usize = 2;

/// Keys longer than this are never compared by edit distance: no allowed key is near them, and
/// hostile input must not make the hint quadratic.
const COMPARED_KEY_MAX_CHARS: usize = 128;

/// User-supplied keys longer than this are cut in messages and field paths.
const SHOWN_KEY_MAX_CHARS: usize = 64;

/// `key` as shown to the user: cut to [`SHOWN_KEY_MAX_CHARS`] characters with `…`, so a
/// megabyte-long hostile key does not end up in every log line.
pub(crate) fn shown(key: &str) -> String {
    if key.chars().count() <= SHOWN_KEY_MAX_CHARS {
        return key.to_owned();
    }
    let mut cut: String = key.chars().take(SHOWN_KEY_MAX_CHARS).collect();
    cut.push('…');
    cut
}

/// The allowed key the user most likely meant by `unknown`.
///
/// A case-insensitive match wins; otherwise the allowed key with the smallest case-insensitive
/// edit distance of at most two (first in `allowed` order on ties).
pub(crate) fn closest_key<'a>(unknown: &str, allowed: &[&'a str]) -> Option<&'a str> {
    if let Some(same) = allowed
        .iter()
        .find(|candidate| candidate.eq_ignore_ascii_case(unknown))
    {
        return Some(same);
    }
    if unknown.chars().count() > COMPARED_KEY_MAX_CHARS {
        return None;
    }
    let unknown_lower = unknown.to_lowercase();
    allowed
        .iter()
        .map(|candidate| {
            (
                edit_distance(&unknown_lower, &candidate.to_lowercase()),
                candidate,
            )
        })
        .filter(|(distance, _)| *distance <= CLOSE_MATCH_MAX_EDITS)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| *candidate)
}

/// The message for an unknown key: the key, an optional correction and the allowed keys.
pub(crate) fn unknown_key_message(unknown: &str, place: &str, allowed: &[&str]) -> String {
    let mut message = format!("unknown key `{}` in {place}", shown(unknown));
    if let Some(meant) = closest_key(unknown, allowed) {
        message.push_str(&format!("; did you mean `{meant}`?"));
    }
    message.push_str(&format!("; allowed keys: {}", allowed_list(allowed)));
    message
}

/// `a`, `b`, `c` — or `none` for an operation that takes no arguments.
pub(crate) fn allowed_list(allowed: &[&str]) -> String {
    if allowed.is_empty() {
        return "none".to_owned();
    }
    allowed
        .iter()
        .map(|key| format!("`{key}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Levenshtein distance over Unicode scalar values, with a two-row table.
fn edit_distance(left: &str, right: &str) -> usize {
    let right: Vec<char> = right.chars().collect();
    let mut previous: Vec<usize> = (0..=right.len()).collect();
    for (row, left_char) in left.chars().enumerate() {
        let mut current = Vec::with_capacity(right.len() + 1);
        current.push(row + 1);
        for (column, right_char) in right.iter().enumerate() {
            let substitution = previous.get(column).copied().unwrap_or(usize::MAX);
            let deletion = previous.get(column + 1).copied().unwrap_or(usize::MAX);
            let insertion = current.last().copied().unwrap_or(usize::MAX);
            let cost = usize::from(left_char != *right_char);
            let best = substitution
                .saturating_add(cost)
                .min(deletion.saturating_add(1))
                .min(insertion.saturating_add(1));
            current.push(best);
        }
        previous = current;
    }
    previous.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &["project_id", "plan_token", "files"];

    #[test]
    fn prefers_a_case_insensitive_match() {
        assert_eq!(closest_key("Project_ID", KEYS), Some("project_id"));
        assert_eq!(closest_key("FILES", KEYS), Some("files"));
    }

    #[test]
    fn offers_matches_within_two_edits() {
        assert_eq!(closest_key("projectid", KEYS), Some("project_id"));
        assert_eq!(closest_key("file", KEYS), Some("files"));
        assert_eq!(closest_key("plan_tokn", KEYS), Some("plan_token"));
        assert_eq!(closest_key("Plan-Tokn", KEYS), Some("plan_token"));
    }

    #[test]
    fn offers_nothing_beyond_two_edits() {
        assert_eq!(closest_key("fi", &["files"]), None);
        assert_eq!(closest_key("token", KEYS), None);
        assert_eq!(closest_key("x", &[]), None);
    }

    #[test]
    fn ignores_very_long_keys() {
        let long = "a".repeat(COMPARED_KEY_MAX_CHARS + 1);
        assert_eq!(closest_key(&long, KEYS), None);
    }

    #[test]
    fn cuts_long_keys_for_display() {
        assert_eq!(shown("path"), "path");
        let exact = "é".repeat(SHOWN_KEY_MAX_CHARS);
        assert_eq!(shown(&exact), exact);
        let long = "é".repeat(SHOWN_KEY_MAX_CHARS + 1);
        assert_eq!(shown(&long), format!("{exact}…"));
    }

    #[test]
    fn measures_edit_distance() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    #[test]
    fn builds_the_unknown_key_message() {
        let message = unknown_key_message("Path", "`read_file` arguments", &["project_id", "path"]);
        assert_eq!(
            message,
            "unknown key `Path` in `read_file` arguments; did you mean `path`?; \
             allowed keys: `project_id`, `path`"
        );
        let none = unknown_key_message("zzz", "`list_projects` arguments", &[]);
        assert_eq!(
            none,
            "unknown key `zzz` in `list_projects` arguments; allowed keys: none"
        );
    }
}
