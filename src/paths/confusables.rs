//! Look-alike facts about a normalized target path: whether it holds a code point of
//! Unicode's Default_Ignorable_Code_Point property, and its case-insensitive confusable
//! skeleton (UTS #39). It computes facts only; which skeletons are reserved is written in
//! `policies/hardening/`.
//!
//! Both are computed from the *normalized* path (see the invariant on `target_facts`):
//! normalization only rewrites `\`, `/` and `.` segments, none of them default-ignorable, so
//! nothing is lost, and a target's answer may be remembered by its normalized path.

use icu_properties::props::DefaultIgnorableCodePoint;
use icu_properties::CodePointSetData;

use super::characters::is_js_whitespace;
use super::normalize::normalize;

/// Whether `path` holds a code point of Unicode's Default_Ignorable_Code_Point set: word
/// joiner, Mongolian vowel separator, combining grapheme joiner, variation selectors, tag
/// characters, Hangul fillers and the rest. Renderers draw them as nothing, so two paths that
/// differ only by them look the same to the person approving.
pub fn has_default_ignorable(path: &str) -> bool {
    // Every default-ignorable code point is outside ASCII: the common path costs one scan.
    if path.is_ascii() {
        return false;
    }
    let ignorable = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    path.chars().any(|c| ignorable.contains(c))
}

/// The case-insensitive confusable skeleton of `normalized`, normalized again as `mU` does:
/// UTS #39 `skeleton`, lowercased, then `skeleton` once more, so that a string confusable
/// with any capitalization of a name meets that name's skeleton (`ＣＬＡＵＤＥ.md`, Cyrillic
/// `Сlaude.md` and `cIaude.md` all give `claude.rnd`, the skeleton of `claude.md`). The
/// skeleton drops default-ignorable code points and maps look-alike slashes to `/`, so the
/// result is normalized again and a look-alike separator splits segments as `/` does.
pub fn skeleton(normalized: &str) -> String {
    let first: String = unicode_security::skeleton(normalized).collect();
    let folded = first.to_lowercase();
    let second: String = unicode_security::skeleton(&folded).collect();
    normalize(&second)
}

/// Every segment of a skeleton, folded as the reserved-segment rule folds segments
/// (`GnS` step 3: leading whitespace and trailing whitespace and dots trimmed), in first-seen
/// order without duplicates. The skeleton is lowercase already.
pub fn skeleton_segments(skeleton: &str) -> Vec<String> {
    let mut segments: Vec<String> = Vec::new();
    for segment in skeleton.split('/').filter(|segment| !segment.is_empty()) {
        let folded = segment
            .trim_end_matches(|c: char| c == '.' || is_js_whitespace(c))
            .trim_start_matches(is_js_whitespace);
        if !segments.iter().any(|known| known == folded) {
            segments.push(folded.to_owned());
        }
    }
    segments
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn the_default_ignorables_of_the_finding_are_found() {
        for c in [
            '\u{2060}',
            '\u{180E}',
            '\u{034F}',
            '\u{FE00}',
            '\u{FE0F}',
            '\u{E0100}',
            '\u{E01EF}',
            '\u{E0000}',
            '\u{E0041}',
            '\u{E007F}',
            '\u{115F}',
            '\u{1160}',
            '\u{3164}',
            '\u{FFA0}',
            '\u{200B}',
            '\u{00AD}',
            '\u{FEFF}',
            '\u{2064}',
            '\u{1D173}',
        ] {
            assert!(has_default_ignorable(&format!("in{c}dex.html")), "{c:?}");
        }
    }

    /// DerivedCoreProperties.txt: "Total code points: 4174" (stable since Unicode 6.1).
    #[test]
    fn the_whole_default_ignorable_set_is_known() {
        let count = (0..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|c| has_default_ignorable(&c.to_string()))
            .count();
        assert_eq!(count, 4174);
    }

    #[test]
    fn visible_characters_are_not_default_ignorable() {
        for path in [
            "index.html",
            "ＣＬＡＵＤＥ.md",
            "Сlaude.md",
            "naïve/café.html",
            "日本語/ファイル.txt",
            "a\u{3000}b",
            "emoji-\u{1F600}.png",
            "\u{2065}-is-unassigned-but-ignorable",
        ] {
            let expected = path.contains('\u{2065}');
            assert_eq!(has_default_ignorable(path), expected, "{path:?}");
        }
    }

    #[test]
    fn look_alikes_of_claude_md_share_its_skeleton() {
        let reserved = skeleton("claude.md");
        assert_eq!(reserved, "claude.rnd");
        for look_alike in [
            "CLAUDE.md",
            "CLAUDE.MD",
            "ＣＬＡＵＤＥ.md",
            "ＣＬＡＵＤＥ．ｍｄ",
            "\u{0421}LAUDE.md",
            "\u{0441}laude.md",
            "cIaude.md",
            "CLAUDE.md\u{2060}",
            "C\u{034F}LAUDE.md",
        ] {
            assert_eq!(skeleton(look_alike), reserved, "{look_alike:?}");
        }
        assert_eq!(skeleton(".claude"), ".claude");
        assert_eq!(skeleton(".ＣＬＡＵＤＥ"), ".claude");
        assert_ne!(skeleton("claude.mdx"), reserved);
        assert_ne!(skeleton("index.html"), reserved);
    }

    #[test]
    fn ascii_look_alikes_are_look_alikes_too() {
        for look_alike in ["c1aude.md", "cIaude.md", "claude.rnd", "CLAUDE.RND"] {
            assert_eq!(skeleton(look_alike), "claude.rnd", "{look_alike:?}");
        }
    }

    /// The hardening pack writes reserved names as skeletons; they must be these names'.
    #[test]
    fn the_hardening_pack_names_the_skeletons_of_the_reserved_names() {
        let pack = include_str!("../../policies/hardening/reserved-look-alikes.cedar");
        for name in ["claude.md", ".claude"] {
            let reserved = skeleton(name);
            for written in [
                format!("context.skeleton == \"{reserved}\""),
                format!("context.skeleton like \"{reserved}/*\""),
                format!("context.skeleton_segments.contains(\"{reserved}\")"),
            ] {
                assert!(pack.contains(&written), "the pack lacks `{written}`");
            }
        }
    }

    #[test]
    fn a_look_alike_slash_separates_segments() {
        let path = skeleton("docs\u{2215}ＣＬＡＵＤＥ.md\u{FF3C}x");
        assert_eq!(path, "docs/claude.rnd/x");
        assert_eq!(skeleton_segments(&path), ["docs", "claude.rnd", "x"]);
    }

    #[test]
    fn skeleton_segments_trim_as_reserved_segments_do() {
        let path = skeleton("a/ＣＬＡＵＤＥ.md. /\u{3000}.claude/a");
        assert_eq!(skeleton_segments(&path), ["a", "claude.rnd", ".claude"]);
        assert!(skeleton_segments("").is_empty());
    }

    #[test]
    fn a_skeleton_is_its_own_skeleton() {
        for path in ["ＣＬＡＵＤＥ.md", "Dir/File.TXT", "Сlaude/ｘ", "ǅemo/ﬁle"] {
            let once = skeleton(path);
            assert_eq!(skeleton(&once), once, "{path:?}");
        }
    }
}
