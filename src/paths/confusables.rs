//! Look-alike facts about a normalized target path: whether it holds a code point of
//! Unicode's Default_Ignorable_Code_Point property, and its case-insensitive confusable
//! skeleton (UTS #39). It computes facts only; which skeletons are reserved is written in
//! `policies/hardening/`.
//!
//! Both are computed from the *normalized* path (see the invariant on `target_facts`):
//! normalization only rewrites `\`, `/` and `.` segments, none of them default-ignorable, so
//! nothing is lost, and a target's answer may be remembered by its normalized path.

use std::sync::LazyLock;

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
    path.chars().any(is_default_ignorable)
}

/// Whether `c` is in Unicode's Default_Ignorable_Code_Point set.
pub fn is_default_ignorable(c: char) -> bool {
    !c.is_ascii() && CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
}

/// The case-insensitive confusable skeleton of `normalized`, normalized again as `mU` does:
/// UTS #39 `skeleton`, lowercased, then `skeleton` once more, so that a string confusable
/// with any capitalization of a name meets that name's skeleton (`ＣＬＡＵＤＥ.md`, Cyrillic
/// `Сlaude.md` and `cIaude.md` all give `claude.rnd`, the skeleton of `claude.md`). The
/// skeleton drops default-ignorable code points and maps look-alike slashes to `/`, so the
/// result is normalized again and a look-alike separator splits segments as `/` does.
pub fn skeleton(normalized: &str) -> String {
    let folded = uts39_skeleton(normalized).to_lowercase();
    normalize(&uts39_skeleton(&folded))
}

/// The crate's answer for each ASCII character, so that the ASCII parts of a path (nearly
/// every path) cost a table look-up instead of two NFD passes and a table search per
/// character. A table of constants, not a cache: it holds nothing a caller sent.
static ASCII_SKELETONS: LazyLock<Vec<String>> = LazyLock::new(|| {
    (0..128u8)
        .map(|byte| unicode_security::skeleton(char::from(byte).encode_utf8(&mut [0; 4])).collect())
        .collect()
});

/// UTS #39 `skeleton` of `text`, ASCII answered from `ASCII_SKELETONS`.
///
/// INVARIANT: this equals `unicode_security::skeleton(text)`. Cutting the text before and
/// after each ASCII character changes nothing: ASCII characters are starters whose skeletons
/// are made of starters (mostly ASCII; `%` is `°/₀`), and NFD never reorders across a starter.
fn uts39_skeleton(text: &str) -> String {
    let table = &*ASCII_SKELETONS;
    let mut skeleton = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let ascii_len = rest.find(|c: char| !c.is_ascii()).unwrap_or(rest.len());
        let (ascii, tail) = rest.split_at(ascii_len);
        for byte in ascii.bytes() {
            // INVARIANT: `ascii` is ASCII, so every byte has its entry in the 128-entry table.
            skeleton.push_str(table.get(usize::from(byte)).map_or("", String::as_str));
        }
        let other_len = tail.find(|c: char| c.is_ascii()).unwrap_or(tail.len());
        let (other, next) = tail.split_at(other_len);
        skeleton.extend(unicode_security::skeleton(other));
        rest = next;
    }
    skeleton
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
    fn ascii_skeletons_are_starters() {
        use unicode_normalization::char::canonical_combining_class;
        for prototype in ASCII_SKELETONS.iter() {
            let starters = prototype.chars().all(|c| canonical_combining_class(c) == 0);
            assert!(starters, "{prototype:?}");
        }
        assert_eq!(ASCII_SKELETONS.len(), 128);
        assert_eq!(ASCII_SKELETONS[usize::from(b'm')], "rn");
        assert_eq!(ASCII_SKELETONS[usize::from(b'a')], "a");
        // The one ASCII skeleton with a slash: it can never form a reserved segment.
        assert_eq!(ASCII_SKELETONS[usize::from(b'%')], "\u{B0}/\u{2080}");
    }

    /// The ASCII table gives the crate's skeleton, wherever ASCII meets combining marks,
    /// look-alikes, invisible characters and scripts that reorder under NFD.
    #[test]
    fn the_ascii_table_agrees_with_the_crate() {
        let pool: Vec<char> = "%\u{B0}aImM1|0/.\\ ~e\u{0301}\u{0323}\u{0345}\u{05B0}\u{0F71}\u{1DCE}\u{FF23}\u{0421}\u{0441}\u{2060}\u{FE0F}\u{E0041}\u{3164}\u{00C5}\u{212B}\u{1E9B}\u{AC00}\u{1100}\u{1161}\u{65E5}\u{2215}\u{FB01}"
            .chars()
            .collect();
        let crate_skeleton = |text: &str| unicode_security::skeleton(text).collect::<String>();
        for first in &pool {
            for second in &pool {
                for third in ['a', '\u{0301}', '\u{0421}'] {
                    let text: String = [*first, *second, third].iter().collect();
                    assert_eq!(uts39_skeleton(&text), crate_skeleton(&text), "{text:?}");
                }
            }
        }
        // Longer mixtures, drawn by a fixed linear congruential sequence.
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..2_000 {
            let text: String = (0..12)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    pool[(state >> 33) as usize % pool.len()]
                })
                .collect();
            assert_eq!(uts39_skeleton(&text), crate_skeleton(&text), "{text:?}");
        }
    }

    #[test]
    fn a_skeleton_is_its_own_skeleton() {
        for path in ["ＣＬＡＵＤＥ.md", "Dir/File.TXT", "Сlaude/ｘ", "ǅemo/ﬁle"] {
            let once = skeleton(path);
            assert_eq!(skeleton(&once), once, "{path:?}");
        }
    }
}
