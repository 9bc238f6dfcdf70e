//! analysis::wellformed::patterns: the `like` patterns the policies match a fact derived from
//! a path with, tied to the raw path by the fact's real definition (issue 38 §2), so the
//! solver proposes only the pairs a call produces. `lowercase` is the normalized path
//! lowercased (`paths::normalize`): it matches a pattern exactly when the path matches one of
//! the pattern's spellings (each ASCII letter in either case, `K` also as the Kelvin sign,
//! `i` before a wildcard also as `İ`: the only characters beyond ASCII whose lowercase is
//! ASCII). `resolved_path` is where `resolve_write` lands a Projects write: the path, the path
//! without one leading `./`, or under `claude/`.

use cedar_policy_core::ast::PatternElem;

use crate::analysis::expr::{self, Expr};

/// A `like` pattern: each element a character, or a wildcard (`None`).
pub type LikePattern = Vec<Option<char>>;

/// At most this many spellings of one pattern are written out; a pattern with more letters
/// is left untied (the probes and the scenario check still stand behind it).
const MAX_SPELLINGS: usize = 256;

/// The pattern of a Cedar `like`.
pub fn of(elements: &[PatternElem]) -> LikePattern {
    elements
        .iter()
        .map(|element| match element {
            PatternElem::Char(c) => Some(*c),
            PatternElem::Wildcard => None,
        })
        .collect()
}

/// Every raw spelling whose lowercase matches `pattern`, or `None` when the pattern has a
/// character beyond ASCII or an upper-case letter (no lowercase path matches one) or too
/// many spellings.
fn spellings(pattern: &[Option<char>]) -> Option<Vec<LikePattern>> {
    let mut all: Vec<LikePattern> = vec![Vec::new()];
    for (index, element) in pattern.iter().enumerate() {
        let choices: Vec<Option<char>> = match element {
            None => vec![None],
            Some(c) if !c.is_ascii() || c.is_ascii_uppercase() => return None,
            Some(c) if c.is_ascii_lowercase() => {
                let mut choices = vec![Some(*c), Some(c.to_ascii_uppercase())];
                if *c == 'k' {
                    choices.push(Some('\u{212A}'));
                }
                // `İ` lowercases to `i` and a combining dot, which only a wildcard takes.
                if *c == 'i' && pattern.get(index + 1) == Some(&None) {
                    choices.push(Some('\u{130}'));
                }
                choices
            }
            Some(c) => vec![Some(*c)],
        };
        if all.len() * choices.len() > MAX_SPELLINGS {
            return None;
        }
        all = all
            .iter()
            .flat_map(|prefix| {
                choices.iter().map(move |choice| {
                    let mut spelled = prefix.clone();
                    spelled.push(*choice);
                    spelled
                })
            })
            .collect();
    }
    Some(all)
}

/// For a target request: `lowercase like P` exactly when the path matches a spelling of P,
/// for each pattern P the policies match `lowercase` with; and `path like P` only with
/// `lowercase like` P lowercased, for each pattern they match `path` with.
pub fn lowercase_ties<'a>(
    on_lowercase: impl IntoIterator<Item = &'a LikePattern>,
    on_path: impl IntoIterator<Item = &'a LikePattern>,
) -> Expr {
    let path = || expr::context(&["path"]);
    let lowercase = || expr::context(&["lowercase"]);
    let mut ties = Vec::new();
    for pattern in on_lowercase {
        let Some(spellings) = spellings(pattern) else {
            continue;
        };
        let spelled = expr::any(
            spellings
                .iter()
                .map(|spelling| expr::like_chars(path(), spelling)),
        );
        ties.push(expr::eq(expr::like_chars(lowercase(), pattern), spelled));
    }
    for pattern in on_path {
        if pattern.iter().flatten().any(|c| !c.is_ascii()) {
            continue;
        }
        let lowered: LikePattern = pattern
            .iter()
            .map(|element| element.map(|c| c.to_ascii_lowercase()))
            .collect();
        ties.push(expr::implies(
            expr::like_chars(path(), pattern),
            expr::like_chars(lowercase(), &lowered),
        ));
    }
    expr::all(ties)
}

/// For a Projects write: for each pattern P the policies match `resolved_path` with, a
/// resolved path matching P comes from a path matching P or `./`P, or lies under `claude/`;
/// and when P has a `/` of its own (so the path is kept, not put under `claude/`), a path
/// matching `./`P, or P without a leading `./`, resolves to one matching P.
pub fn resolved_ties<'a>(on_resolved: impl IntoIterator<Item = &'a LikePattern>) -> Expr {
    let path = || expr::context(&["projects", "path"]);
    let resolved = || expr::context(&["projects", "resolved_path"]);
    let dotted = |pattern: &[Option<char>]| -> LikePattern {
        [Some('.'), Some('/')]
            .into_iter()
            .chain(pattern.iter().copied())
            .collect()
    };
    let claude: LikePattern = "claude/"
        .chars()
        .map(Some)
        .chain(std::iter::once(None))
        .collect();
    let dot_any: LikePattern = vec![Some('.'), Some('/'), None];
    let mut ties = Vec::new();
    for pattern in on_resolved {
        ties.push(expr::implies(
            expr::like_chars(resolved(), pattern),
            expr::any([
                expr::like_chars(path(), pattern),
                expr::like_chars(path(), &dotted(pattern)),
                expr::like_chars(resolved(), &claude),
            ]),
        ));
        if pattern.contains(&Some('/')) {
            ties.push(expr::implies(
                expr::like_chars(path(), &dotted(pattern)),
                expr::like_chars(resolved(), pattern),
            ));
            ties.push(expr::implies(
                expr::and(
                    expr::like_chars(path(), pattern),
                    expr::not(expr::like_chars(path(), &dot_any)),
                ),
                expr::like_chars(resolved(), pattern),
            ));
        }
    }
    expr::all(ties)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> LikePattern {
        text.chars().map(|c| (c != '*').then_some(c)).collect()
    }

    /// Every spelling lowercases onto the pattern, and the spellings are every way to write it.
    #[test]
    fn i38_spellings_are_exactly_the_paths_that_lowercase_onto_a_pattern() {
        let spelled = spellings(&pattern("*.pem")).unwrap();
        assert_eq!(spelled.len(), 8);
        assert!(spelled.contains(&pattern("*.PeM")));
        let kelvin = spellings(&pattern("*.key")).unwrap();
        assert_eq!(kelvin.len(), 12);
        assert!(kelvin.contains(&pattern("*.\u{212A}EY")));
        let dotted = spellings(&pattern("id*")).unwrap();
        assert!(!dotted.contains(&pattern("\u{130}D*")));
        assert!(spellings(&pattern("*i*"))
            .unwrap()
            .contains(&pattern("*\u{130}*")));
        assert!(spellings(&pattern("*.PEM")).is_none());
        assert!(spellings(&pattern("*.pém")).is_none());
        assert!(spellings(&pattern("abcdefghij")).is_none());
        // What each spelling stands for: a path written so lowercases onto the pattern.
        for (raw, lowered) in [("A.\u{212A}EY", "a.key"), ("\u{130}x", "i\u{307}x")] {
            assert_eq!(raw.to_lowercase(), lowered);
        }
    }
}
