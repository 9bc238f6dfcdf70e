//! Display budgets: whether a plan (`jnS`) or a tokenless batch (`s8a`) can be shown within
//! the 2,000-character render cap. Lengths are JavaScript `.length` (UTF-16 code units) of
//! the paths given; it must not normalize or otherwise judge the paths.

use super::characters::rejected_character;
use super::{DISPLAY_BUDGET, MAX_DISPLAY_ENTRIES, MAX_PATH_DISPLAY};

/// Fixed frame of a plan ask, before its path lists.
const PLAN_FRAME: usize = 240;
/// Fixed cost of one non-empty path list in a plan ask.
const PLAN_LIST_FRAME: usize = 32;
/// Fixed frame of a tokenless batch ask.
const BATCH_FRAME: usize = 272;
/// Per-entry cost of a batch entry before its content preview.
const BATCH_ENTRY_FRAME: usize = 44;
/// Separator cost between two entries of a list.
const SEPARATOR: usize = 2;

/// Why a plan cannot be displayed, and so is not registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanDisplayRefusal {
    #[error("plan has {count} writes, more than 20")]
    TooManyWrites { count: usize },
    #[error("plan has {count} deletes, more than 20")]
    TooManyDeletes { count: usize },
    #[error("plan path `{path}` is {length} characters long, more than 80")]
    PathTooLong { path: String, length: usize },
    #[error("plan path `{path}` has a rejected character U+{:04X}", u32::from(*.character))]
    RejectedCharacter { path: String, character: char },
    #[error("plan renders to {cost} characters, more than 2000")]
    OverBudget { cost: usize },
}

/// JavaScript string length: UTF-16 code units.
pub fn js_length(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// JavaScript length of the JSON-quoted form of `s`, as the batch display shows it.
fn quoted_length(s: &str) -> usize {
    // Serializing a string cannot fail; if it ever did, the path counts as too long.
    serde_json::to_string(s).map_or(usize::MAX, |quoted| js_length(&quoted))
}

/// Whether a tokenless batch of `paths` can be displayed (`s8a`). Path lengths in the sum
/// are `js_length` of the raw path; only the 80 limit applies to the JSON-quoted form.
pub fn fits_batch_display<S: AsRef<str>>(paths: &[S]) -> bool {
    let count = paths.len();
    if count == 0 || count > MAX_DISPLAY_ENTRIES {
        return false;
    }
    if paths
        .iter()
        .any(|path| quoted_length(path.as_ref()) > MAX_PATH_DISPLAY)
    {
        return false;
    }
    let entry_frame = BATCH_ENTRY_FRAME + preview_cost(count);
    let entries: usize = paths
        .iter()
        .map(|path| js_length(path.as_ref()) + entry_frame)
        .sum();
    BATCH_FRAME + entries + SEPARATOR * (count - 1) <= DISPLAY_BUDGET
}

/// Content-preview cost per entry: preview = max(0, min(200, floor(1800/n) − 95)), plus
/// 3 for the ellipsis when there is a preview at all.
fn preview_cost(count: usize) -> usize {
    let preview = (1800 / count).min(295).saturating_sub(95);
    if preview > 0 {
        preview + 3
    } else {
        0
    }
}

/// Whether a plan with these writes and deletes can be displayed and registered (`jnS`).
pub fn fits_plan_display(writes: &[String], deletes: &[String]) -> bool {
    check_plan_display(writes, deletes).is_ok()
}

/// [`fits_plan_display`] with the reason for a refusal, for logs.
pub fn check_plan_display(writes: &[String], deletes: &[String]) -> Result<(), PlanDisplayRefusal> {
    if writes.len() > MAX_DISPLAY_ENTRIES {
        return Err(PlanDisplayRefusal::TooManyWrites {
            count: writes.len(),
        });
    }
    if deletes.len() > MAX_DISPLAY_ENTRIES {
        return Err(PlanDisplayRefusal::TooManyDeletes {
            count: deletes.len(),
        });
    }
    for path in writes.iter().chain(deletes) {
        check_plan_path(path)?;
    }
    let cost = PLAN_FRAME + plan_list_cost(writes) + plan_list_cost(deletes);
    if cost > DISPLAY_BUDGET {
        return Err(PlanDisplayRefusal::OverBudget { cost });
    }
    Ok(())
}

fn check_plan_path(path: &str) -> Result<(), PlanDisplayRefusal> {
    let length = js_length(path);
    if length > MAX_PATH_DISPLAY {
        return Err(PlanDisplayRefusal::PathTooLong {
            path: path.to_owned(),
            length,
        });
    }
    match rejected_character(path) {
        Some(character) => Err(PlanDisplayRefusal::RejectedCharacter {
            path: path.to_owned(),
            character,
        }),
        None => Ok(()),
    }
}

/// 0 for an empty list, else 32 + Σ length + 2×(n−1).
fn plan_list_cost(paths: &[String]) -> usize {
    if paths.is_empty() {
        return 0;
    }
    let lengths: usize = paths.iter().map(|path| js_length(path)).sum();
    PLAN_LIST_FRAME + lengths + SEPARATOR * (paths.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One path of each given length, made of `x`.
    fn paths_of(lengths: &[usize]) -> Vec<String> {
        lengths.iter().map(|length| "x".repeat(*length)).collect()
    }

    /// `count` paths whose lengths sum to exactly `total`, as evenly as possible.
    fn paths_summing(count: usize, total: usize) -> Vec<String> {
        let lengths: Vec<usize> = (0..count)
            .map(|index| total / count + usize::from(index < total % count))
            .collect();
        paths_of(&lengths)
    }

    #[test]
    fn js_length_counts_utf16_code_units() {
        assert_eq!(js_length(""), 0);
        assert_eq!(js_length("abc"), 3);
        assert_eq!(js_length("\u{e9}"), 1);
        assert_eq!(js_length("\u{1F600}"), 2);
        assert_eq!(js_length("a\u{10FFFF}b"), 4);
    }

    #[test]
    fn batch_needs_between_one_and_twenty_paths() {
        assert!(!fits_batch_display::<&str>(&[]));
        assert!(fits_batch_display(&paths_of(&[1])));
        assert!(fits_batch_display(&paths_of(&[5; 20])));
        assert!(!fits_batch_display(&paths_of(&[5; 21])));
    }

    #[test]
    fn batch_limits_the_json_quoted_path_to_eighty() {
        assert!(fits_batch_display(&paths_of(&[78])));
        assert!(!fits_batch_display(&paths_of(&[79])));
        // A quote is escaped, so 77 characters with one `"` quote to 81.
        let quoted = format!("{}\"", "x".repeat(76));
        assert_eq!(js_length(&quoted), 77);
        assert!(fits_batch_display(std::slice::from_ref(&quoted)));
        let too_long = format!("{}\"", "x".repeat(77));
        assert!(!fits_batch_display(&[too_long]));
        assert!(!fits_batch_display(&["a\u{0001}".repeat(12)]));
    }

    #[test]
    fn batch_budget_at_exactly_two_thousand() {
        // n = 20: no preview, 272 + Σ + 20×44 + 38 ≤ 2000, so Σ ≤ 810.
        assert!(fits_batch_display(&paths_summing(20, 810)));
        assert!(!fits_batch_display(&paths_summing(20, 811)));
        // n = 19: floor(1800/19) − 95 < 0, no preview: Σ ≤ 2000 − 272 − 836 − 36 = 856.
        assert!(fits_batch_display(&paths_summing(19, 856)));
        assert!(!fits_batch_display(&paths_summing(19, 857)));
        // n = 18: preview 5, entry 52: Σ ≤ 2000 − 272 − 936 − 34 = 758.
        assert!(fits_batch_display(&paths_summing(18, 758)));
        assert!(!fits_batch_display(&paths_summing(18, 759)));
        // n = 10: preview 85, entry 132: Σ ≤ 2000 − 272 − 1320 − 18 = 390.
        assert!(fits_batch_display(&paths_summing(10, 390)));
        assert!(!fits_batch_display(&paths_summing(10, 391)));
    }

    #[test]
    fn batch_sums_utf16_lengths_of_raw_paths() {
        // n = 20 allows Σ = 810; twenty emoji count 40, not 20.
        let mut paths = paths_summing(19, 770);
        paths.push("\u{1F600}".repeat(20));
        assert!(fits_batch_display(&paths));
        paths.push("\u{1F600}".repeat(21));
        paths.swap_remove(19);
        assert_eq!(paths.len(), 20);
        assert!(!fits_batch_display(&paths));
    }

    #[test]
    fn preview_cost_follows_the_formula() {
        assert_eq!(preview_cost(1), 203);
        assert_eq!(preview_cost(6), 203);
        assert_eq!(preview_cost(7), 165);
        assert_eq!(preview_cost(18), 8);
        assert_eq!(preview_cost(19), 0);
    }

    #[test]
    fn plan_counts_are_limited_to_twenty_each() {
        assert!(fits_plan_display(&[], &[]));
        assert!(fits_plan_display(&paths_of(&[1; 20]), &paths_of(&[1; 20])));
        assert_eq!(
            check_plan_display(&paths_of(&[1; 21]), &[]),
            Err(PlanDisplayRefusal::TooManyWrites { count: 21 })
        );
        assert_eq!(
            check_plan_display(&[], &paths_of(&[1; 21])),
            Err(PlanDisplayRefusal::TooManyDeletes { count: 21 })
        );
    }

    #[test]
    fn plan_limits_the_raw_path_to_eighty() {
        assert!(fits_plan_display(&paths_of(&[80]), &[]));
        let refusal = check_plan_display(&[], &paths_of(&[81]));
        assert!(matches!(
            refusal,
            Err(PlanDisplayRefusal::PathTooLong { length: 81, .. })
        ));
        // The raw length counts here, so a quote does not push an 80-character path over.
        assert!(fits_plan_display(&[format!("{}\"", "x".repeat(79))], &[]));
    }

    #[test]
    fn plan_refuses_rejected_characters() {
        let refusal = check_plan_display(&["ok".to_owned()], &["a:b".to_owned()]);
        let expected = PlanDisplayRefusal::RejectedCharacter {
            path: "a:b".to_owned(),
            character: ':',
        };
        assert_eq!(refusal, Err(expected.clone()));
        assert_eq!(
            expected.to_string(),
            "plan path `a:b` has a rejected character U+003A"
        );
    }

    #[test]
    fn plan_budget_at_exactly_two_thousand() {
        // 240 + (32 + 1600 + 38) + (32 + 20 + 38) = 2000
        let writes = paths_of(&[80; 20]);
        assert!(fits_plan_display(&writes, &paths_of(&[1; 20])));
        let over = paths_summing(20, 21);
        assert_eq!(
            check_plan_display(&writes, &over),
            Err(PlanDisplayRefusal::OverBudget { cost: 2001 })
        );
        // 240 + 32 + 1728 = 2000 cannot be reached by one list alone (at most 1670), so both
        // lists share it: 240 + (32 + 800 + 38) + (32 + 820 + 38) = 2000.
        assert!(fits_plan_display(
            &paths_summing(20, 800),
            &paths_summing(20, 820)
        ));
        assert!(!fits_plan_display(
            &paths_summing(20, 801),
            &paths_summing(20, 820)
        ));
    }
}
