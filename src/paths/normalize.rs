//! Normalization of target paths (`mU`) and the per-target facts Cedar policies read
//! (`GnS` inputs). It computes facts only; it must not decide that a path is reserved.

use super::characters::{is_js_whitespace, rejected_character};
use std::sync::OnceLock;

use super::confusables::{has_default_ignorable, skeleton, skeleton_segments};

/// Facts about one raw target path, the inputs of the target policies.
///
/// The look-alike facts (default-ignorables, the confusable skeleton) cost far more than the
/// rest and only the hardening pack reads them, so they are derived from `normalized` the
/// first time they are asked for. All facts are a function of `raw` (and the look-alike ones
/// of `normalized`), so equality compares what was given, never what was derived yet.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TargetFacts {
    pub raw: String,
    /// `normalize(raw)`
    pub normalized: String,
    /// `normalized.to_lowercase()`; 8.3 short names such as `claude~1.md` stay visible here
    pub lowercase: String,
    /// Every segment of `normalized`, folded as `GnS` step 3 does (lowercased, leading
    /// whitespace and trailing whitespace and dots trimmed), in first-seen order, without
    /// duplicates. A segment that folds to nothing appears as `""`.
    pub folded_segments: Vec<String>,
    /// The first character of `raw` in the rejected set
    pub rejected_character: Option<char>,
    /// False when `GnS` step 4 applies: the path normalizes to empty, a segment matches
    /// `^\s*\.\.[\s.]*$` (JavaScript `\s`), or the path contains NUL
    pub normalizes: bool,
    #[serde(skip)]
    look_alike: OnceLock<LookAlike>,
}

/// The facts about how `normalized` may look like another path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookAlike {
    /// Whether `normalized` holds a Default_Ignorable_Code_Point (`paths::confusables`)
    pub default_ignorable: bool,
    /// The case-insensitive UTS #39 skeleton of `normalized`, itself normalized
    pub skeleton: String,
    /// The segments of `skeleton`, folded as `folded_segments` are
    pub skeleton_segments: Vec<String>,
}

impl PartialEq for TargetFacts {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
            && self.normalized == other.normalized
            && self.lowercase == other.lowercase
            && self.folded_segments == other.folded_segments
            && self.rejected_character == other.rejected_character
            && self.normalizes == other.normalizes
    }
}

impl Eq for TargetFacts {}

/// Bytes a string costs besides its text (its `String` and a share of the collection holding
/// it), for bounding memory by what is held rather than by a count.
pub const STRING_OVERHEAD: usize = 48;

impl TargetFacts {
    /// Facts as given (a decision record's), the look-alike facts derived when read.
    pub fn given(
        raw: String,
        normalized: String,
        lowercase: String,
        folded_segments: Vec<String>,
        rejected_character: Option<char>,
        normalizes: bool,
    ) -> Self {
        Self {
            raw,
            normalized,
            lowercase,
            folded_segments,
            rejected_character,
            normalizes,
            look_alike: OnceLock::new(),
        }
    }

    pub fn look_alike(&self) -> &LookAlike {
        self.look_alike.get_or_init(|| {
            let skeleton = skeleton(&self.normalized);
            LookAlike {
                default_ignorable: has_default_ignorable(&self.normalized),
                skeleton_segments: skeleton_segments(&skeleton),
                skeleton,
            }
        })
    }

    /// About how many bytes these facts hold (the look-alike facts once derived).
    pub fn footprint(&self) -> usize {
        let derived = self.look_alike.get();
        let strings = [&self.raw, &self.normalized, &self.lowercase]
            .into_iter()
            .chain(&self.folded_segments)
            .chain(derived.map(|facts| &facts.skeleton))
            .chain(
                derived
                    .into_iter()
                    .flat_map(|facts| &facts.skeleton_segments),
            );
        strings.map(|text| text.len() + STRING_OVERHEAD).sum()
    }
}

/// Backslash becomes `/`, the path is split on `/`, empty and `.` segments are dropped and
/// the rest joined with `/`. No case folding; `..` is kept.
pub fn normalize(path: &str) -> String {
    let slashed = path.replace('\\', "/");
    let segments: Vec<&str> = slashed
        .split('/')
        .filter(|segment| !segment.is_empty() && *segment != ".")
        .collect();
    segments.join("/")
}

/// Computes the facts about `raw` that the path policies need (the look-alike facts when
/// first read).
pub fn target_facts(raw: &str) -> TargetFacts {
    let normalized = normalize(raw);
    let lowercase = normalized.to_lowercase();
    let normalizes = !normalized.is_empty()
        && !raw.contains('\0')
        && !normalized.split('/').any(is_parent_segment);
    let folded_segments = folded_segments(&normalized);
    TargetFacts::given(
        raw.to_owned(),
        normalized,
        lowercase,
        folded_segments,
        rejected_character(raw),
        normalizes,
    )
}

/// `GnS` step 3 folding: lowercase, trim trailing whitespace and dots, trim leading whitespace.
fn fold_segment(segment: &str) -> String {
    segment
        .to_lowercase()
        .trim_end_matches(|c: char| c == '.' || is_js_whitespace(c))
        .trim_start_matches(is_js_whitespace)
        .to_owned()
}

fn folded_segments(normalized: &str) -> Vec<String> {
    let mut folded: Vec<String> = Vec::new();
    // An empty normalized path has no segments at all, not one empty segment.
    for segment in normalized.split('/').filter(|segment| !segment.is_empty()) {
        let segment = fold_segment(segment);
        if !folded.contains(&segment) {
            folded.push(segment);
        }
    }
    folded
}

/// Whether `segment` matches `^\s*\.\.[\s.]*$`: a parent reference however it is padded.
fn is_parent_segment(segment: &str) -> bool {
    segment
        .trim_start_matches(is_js_whitespace)
        .strip_prefix("..")
        .is_some_and(|rest| rest.chars().all(|c| c == '.' || is_js_whitespace(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference decision, only to cross-check that the facts carry enough information.
    fn is_reserved_reference(facts: &TargetFacts) -> bool {
        let lower = facts.lowercase.as_str();
        let reserved_path = ["claude.md", ".claude"]
            .iter()
            .any(|name| lower == *name || lower.starts_with(&format!("{name}/")));
        let short_name = |segment: &str| {
            segment
                .split('~')
                .skip(1)
                .any(|after| after.starts_with(|c: char| c.is_ascii_digit()))
        };
        let reserved_segment = facts
            .folded_segments
            .iter()
            .any(|segment| segment == "claude.md" || segment == ".claude" || short_name(segment));
        reserved_path || reserved_segment
    }

    #[test]
    fn normalization_table() {
        let table = [
            ("a\\b\\c", "a/b/c"),
            ("./a//b/.", "a/b"),
            ("a/../b", "a/../b"),
            ("", ""),
            ("/", ""),
            ("./.", ""),
            ("\\\\server\\share", "server/share"),
            ("A/B.txt", "A/B.txt"),
            ("a/ ./b", "a/ ./b"),
            ("..", ".."),
            ("a/.../b", "a/.../b"),
        ];
        for (raw, normalized) in table {
            assert_eq!(normalize(raw), normalized, "{raw:?}");
        }
    }

    #[test]
    fn folded_segments_trim_and_lowercase() {
        assert_eq!(target_facts("CLAUDE.md. ").folded_segments, ["claude.md"]);
        assert_eq!(target_facts(" .claude").folded_segments, [".claude"]);
        assert_eq!(
            target_facts("a/Claude.MD/b").folded_segments,
            ["a", "claude.md", "b"]
        );
        assert_eq!(target_facts("x/X /x.. ").folded_segments, ["x"]);
        assert_eq!(
            target_facts("\u{FEFF}.claude\u{3000}.").folded_segments,
            [".claude"]
        );
        assert_eq!(target_facts("a/ . /b").folded_segments, ["a", "", "b"]);
        assert!(target_facts("").folded_segments.is_empty());
    }

    #[test]
    fn leading_dots_are_kept_but_trailing_dots_are_not() {
        assert_eq!(target_facts(". .claude. .").folded_segments, [". .claude"]);
    }

    #[test]
    fn short_names_stay_visible_in_lowercase() {
        let facts = target_facts("CLAUDE~1.MD");
        assert_eq!(facts.lowercase, "claude~1.md");
        assert_eq!(facts.normalized, "CLAUDE~1.MD");
        assert!(is_reserved_reference(&facts));
        assert!(is_reserved_reference(&target_facts("docs/PROGRA~2/x")));
        assert!(!is_reserved_reference(&target_facts("docs/a~b/x")));
    }

    #[test]
    fn reserved_reference_agrees_with_the_facts() {
        for raw in [
            "CLAUDE.md",
            ".Claude/x",
            "./claude.md/y",
            "a/Claude.MD/b",
            "a\\.claude ",
        ] {
            assert!(is_reserved_reference(&target_facts(raw)), "{raw:?}");
        }
        for raw in [
            "claude.mdx",
            "a/claudemd",
            "src/index.html",
            ".claudeignore",
        ] {
            assert!(!is_reserved_reference(&target_facts(raw)), "{raw:?}");
        }
    }

    #[test]
    fn paths_that_do_not_normalize() {
        for raw in [
            " .. ",
            "a/.../b",
            "",
            "\0",
            "a/\0",
            "./",
            "..",
            "a/..",
            "\u{FEFF}..\u{2028}.",
        ] {
            assert!(!target_facts(raw).normalizes, "{raw:?}");
        }
        for raw in ["a", "a/b", "..a", "a..", ". ./x", "a/.b/c", "...x"] {
            assert!(target_facts(raw).normalizes, "{raw:?}");
        }
    }

    #[test]
    fn facts_record_the_rejected_character_and_forms() {
        let facts = target_facts("Dir\\Sub/File?.TXT");
        assert_eq!(facts.raw, "Dir\\Sub/File?.TXT");
        assert_eq!(facts.normalized, "Dir/Sub/File?.TXT");
        assert_eq!(facts.lowercase, "dir/sub/file?.txt");
        assert_eq!(facts.rejected_character, Some('?'));
        assert!(facts.normalizes);
        assert_eq!(target_facts("a/b").rejected_character, None);
    }

    #[test]
    fn every_fact_but_raw_is_a_function_of_the_normalized_path() {
        for raw in [
            "a\\CLAUDE.md\u{2060}",
            "./in\u{2060}dex.html",
            "docs//ＣＬＡＵＤＥ.md/.",
            "\\\u{0421}LAUDE.md",
            "x/./a\u{E0041}\\b?",
            "a/\0/.",
            "./",
            "a\\..\\b",
        ] {
            let facts = target_facts(raw);
            let again = target_facts(&facts.normalized);
            assert_eq!(
                TargetFacts {
                    raw: again.normalized.clone(),
                    ..facts.clone()
                },
                TargetFacts {
                    raw: again.normalized.clone(),
                    ..again
                },
                "{raw:?}"
            );
        }
    }

    #[test]
    fn look_alike_facts_of_a_target() {
        let facts = target_facts("Docs\\ＣＬＡＵＤＥ.md\u{2060}");
        assert_eq!(facts.normalized, "Docs/ＣＬＡＵＤＥ.md\u{2060}");
        assert!(facts.look_alike().default_ignorable);
        assert_eq!(facts.rejected_character, None);
        assert_eq!(facts.look_alike().skeleton, "docs/claude.rnd");
        assert_eq!(facts.look_alike().skeleton_segments, ["docs", "claude.rnd"]);
        let plain = target_facts("src/index.html");
        assert!(!plain.look_alike().default_ignorable);
        assert_eq!(plain.look_alike().skeleton_segments, ["src", "index.htrnl"]);
    }

    #[test]
    fn facts_round_trip_through_json() {
        let facts = target_facts("a/\u{202E}b");
        let json = serde_json::to_string(&facts).unwrap();
        assert_eq!(serde_json::from_str::<TargetFacts>(&json).unwrap(), facts);
    }

    /// `authz::targets` asks one request per distinct normalized path: that is exact only
    /// because every fact of a target's context is the same for a raw path and for its
    /// normalized form (normalization neither adds nor removes NUL or a rejected character).
    #[test]
    fn every_context_fact_is_a_function_of_the_normalized_path() {
        use crate::authz::context::TargetContext;
        use proptest::prelude::*;
        let piece = proptest::sample::select(
            &[
                "a",
                "B",
                ".",
                "..",
                "",
                " ",
                "\\",
                "/",
                "./",
                "#",
                "?",
                ":",
                "\0",
                "\u{7f}",
                "\u{200b}",
                "\u{2060}",
                "CLAUDE.md",
                "ＣＬＡＵＤＥ",
                "~1",
                "é",
                "e\u{301}",
            ][..],
        );
        let raw = proptest::collection::vec(piece, 1..8).prop_map(|pieces| pieces.concat());
        let mut runner = proptest::test_runner::TestRunner::default();
        let outcome = runner.run(&raw, |raw| {
            let facts = target_facts(&raw);
            let again = target_facts(&facts.normalized);
            let context = |facts: &TargetFacts| TargetContext::of(facts, "p1", "write_files");
            prop_assert_eq!(context(&facts), context(&again), "{:?}", raw);
            Ok(())
        });
        if let Err(error) = outcome {
            panic!("{error}");
        }
    }
}
