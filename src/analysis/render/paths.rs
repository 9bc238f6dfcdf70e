//! analysis::render::paths: the paths a rendered Design call names. A call whose target
//! verdict is `pass` has only targets the target policies find ordinary — a fact of the
//! target environments, which the call's request cannot say — so a synthesized path that is
//! not plainly ordinary (empty, reserved-looking, odd characters) is written as a plain one,
//! the same one wherever it appears (targets, plan writes and deletes), which keeps every
//! set relation the call's policies read. A `blocked` verdict gets one reserved target.

use std::collections::BTreeMap;

use crate::authz::context::DesignContext;
use crate::paths::normalize;

/// The target a `blocked` call names (reserved by the baseline).
const RESERVED: &str = "CLAUDE.md";

/// How each synthesized path of `design` is written.
pub(super) fn renamed(design: &DesignContext) -> BTreeMap<String, String> {
    let all = design
        .targets
        .paths
        .iter()
        .chain(design.plan.writes.iter())
        .chain(design.plan.deletes.iter());
    let mut names = BTreeMap::new();
    for path in all {
        if names.contains_key(path) {
            continue;
        }
        let name = if plain(path) {
            path.clone()
        } else {
            format!("analysis-{}.html", names.len() + 1)
        };
        names.insert(path.clone(), name);
    }
    if design.targets.verdict == "blocked" {
        if let Some(first) = design.targets.paths.iter().next() {
            names.insert(first.clone(), RESERVED.to_string());
        }
    }
    names
}

/// A path every target policy of the baseline finds ordinary, whatever it is compared with.
fn plain(path: &str) -> bool {
    let characters = path
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_./".contains(c));
    characters
        && path.len() <= 60
        && normalize(path) == path
        && path.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && !segment.ends_with('.')
                && segment != "claude.md"
                && !segment.starts_with("analysis-")
        })
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn only_plainly_ordinary_paths_are_kept() {
        assert!(plain("index.html") && plain("a/b-c_1.js"));
        for odd in [
            "",
            "CLAUDE.md",
            ".claude/x",
            "a//b",
            "a/../b",
            "x~1",
            "A.html",
            "a/claude.md",
        ] {
            assert!(!plain(odd), "{odd}");
        }
    }
}
