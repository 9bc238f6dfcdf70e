//! The rejected-character set of target paths (`UnS`) and JavaScript's `\s` whitespace.
//! It classifies characters only; it must not judge whole paths.

/// Every rejected range, inclusive, with the class named in refusal messages.
const REJECTED_RANGES: [(char, char, &str); 20] = [
    ('\u{0000}', '\u{001F}', "control"),
    ('\u{007F}', '\u{009F}', "control"),
    ('#', '#', "ascii punctuation"),
    ('?', '?', "ascii punctuation"),
    (',', ',', "ascii punctuation"),
    (':', ':', "ascii punctuation"),
    ('[', '[', "ascii punctuation"),
    (']', ']', "ascii punctuation"),
    ('\u{00AD}', '\u{00AD}', "soft hyphen"),
    ('\u{061C}', '\u{061C}', "arabic letter mark"),
    ('\u{200B}', '\u{200F}', "zero-width or direction mark"),
    ('\u{2026}', '\u{2026}', "ellipsis"),
    ('\u{2028}', '\u{2029}', "line or paragraph separator"),
    ('\u{202A}', '\u{202E}', "bidi embedding or override"),
    ('\u{2066}', '\u{2069}', "bidi isolate"),
    ('\u{FEFF}', '\u{FEFF}', "byte order mark"),
    ('\u{FF0C}', '\u{FF0C}', "fullwidth confusable"),
    ('\u{FF1A}', '\u{FF1A}', "fullwidth confusable"),
    ('\u{FF3B}', '\u{FF3B}', "fullwidth confusable"),
    ('\u{FF3D}', '\u{FF3D}', "fullwidth confusable"),
];

/// The class of `c` when it is in the rejected set, `None` otherwise.
fn rejected_class(c: char) -> Option<&'static str> {
    REJECTED_RANGES
        .iter()
        .find(|(first, last, _)| (*first..=*last).contains(&c))
        .map(|(_, _, class)| *class)
}

/// The first character of `path` in the rejected set.
pub fn rejected_character(path: &str) -> Option<char> {
    path.chars().find(|c| is_rejected(*c))
}

/// `rejected_class(c).is_some()`, answering ASCII (nearly every path) without the table.
fn is_rejected(c: char) -> bool {
    if c.is_ascii() {
        return matches!(
            c,
            '\u{0000}'..='\u{001F}' | '\u{007F}' | '#' | '?' | ',' | ':' | '[' | ']'
        );
    }
    rejected_class(c).is_some()
}

/// Named class of a rejected character for messages; `"not rejected"` for any other character.
pub fn rejected_character_class(c: char) -> &'static str {
    rejected_class(c).unwrap_or("not rejected")
}

/// JavaScript's `\s`: WhiteSpace (incl. U+FEFF and the Zs category) plus LineTerminator.
/// Unlike `char::is_whitespace` it excludes U+0085 and includes U+FEFF, which is what the
/// reference's regular expressions see.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_shortcut_agrees_with_the_table_for_every_code_point() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(is_rejected(c), rejected_class(c).is_some(), "{:?}", c);
        }
    }

    /// (first, last, class, code point just below, code point just above); a neighbour is
    /// `None` when it belongs to the adjacent rejected range instead (U+2029 / U+202A) or
    /// does not exist (below U+0000).
    type Edge = (u32, u32, &'static str, Option<u32>, Option<u32>);

    const EDGES: [Edge; 14] = [
        (0x0000, 0x001F, "control", None, Some(0x0020)),
        (0x007F, 0x009F, "control", Some(0x007E), Some(0x00A0)),
        (0x00AD, 0x00AD, "soft hyphen", Some(0x00AC), Some(0x00AE)),
        (
            0x061C,
            0x061C,
            "arabic letter mark",
            Some(0x061B),
            Some(0x061D),
        ),
        (
            0x200B,
            0x200F,
            "zero-width or direction mark",
            Some(0x200A),
            Some(0x2010),
        ),
        (0x2026, 0x2026, "ellipsis", Some(0x2025), Some(0x2027)),
        (
            0x2028,
            0x2029,
            "line or paragraph separator",
            Some(0x2027),
            None,
        ),
        (
            0x202A,
            0x202E,
            "bidi embedding or override",
            None,
            Some(0x202F),
        ),
        (0x2066, 0x2069, "bidi isolate", Some(0x2065), Some(0x206A)),
        (
            0xFEFF,
            0xFEFF,
            "byte order mark",
            Some(0xFEFE),
            Some(0xFF00),
        ),
        (
            0xFF0C,
            0xFF0C,
            "fullwidth confusable",
            Some(0xFF0B),
            Some(0xFF0D),
        ),
        (
            0xFF1A,
            0xFF1A,
            "fullwidth confusable",
            Some(0xFF19),
            Some(0xFF1B),
        ),
        (
            0xFF3B,
            0xFF3B,
            "fullwidth confusable",
            Some(0xFF3A),
            Some(0xFF3C),
        ),
        (
            0xFF3D,
            0xFF3D,
            "fullwidth confusable",
            Some(0xFF3C),
            Some(0xFF3E),
        ),
    ];

    fn char_of(code: u32) -> char {
        char::from_u32(code).unwrap()
    }

    #[test]
    fn every_range_is_rejected_at_both_ends_and_allowed_just_outside() {
        for (first, last, class, below, above) in EDGES {
            for code in [first, last] {
                let c = char_of(code);
                assert_eq!(
                    rejected_character(&format!("a{c}b")),
                    Some(c),
                    "U+{code:04X}"
                );
                assert_eq!(rejected_character_class(c), class, "U+{code:04X}");
            }
            for code in [below, above].into_iter().flatten() {
                let path = format!("a{}b", char_of(code));
                assert_eq!(rejected_character(&path), None, "U+{code:04X}");
            }
        }
    }

    #[test]
    fn adjacent_ranges_keep_their_own_class() {
        assert_eq!(
            rejected_character_class('\u{2029}'),
            "line or paragraph separator"
        );
        assert_eq!(
            rejected_character_class('\u{202A}'),
            "bidi embedding or override"
        );
    }

    #[test]
    fn ascii_punctuation_is_rejected_and_its_neighbours_are_not() {
        for c in ['#', '?', ',', ':', '[', ']'] {
            assert_eq!(rejected_character(&format!("x{c}")), Some(c));
            assert_eq!(rejected_character_class(c), "ascii punctuation");
        }
        for c in [
            '"', '$', '+', '-', '.', '/', ';', '>', '@', '\\', '^', '_', '{', '~', ' ',
        ] {
            assert_eq!(rejected_character(&format!("x{c}")), None, "{c:?}");
        }
    }

    #[test]
    fn rejected_character_reports_the_first_one() {
        assert_eq!(rejected_character("ok/a?b#c"), Some('?'));
        assert_eq!(rejected_character("plain/path.txt"), None);
        assert_eq!(rejected_character(""), None);
        assert_eq!(rejected_character_class('a'), "not rejected");
    }

    #[test]
    fn js_whitespace_differs_from_rust_at_nel_and_bom() {
        assert!(is_js_whitespace('\u{FEFF}') && !'\u{FEFF}'.is_whitespace());
        assert!(!is_js_whitespace('\u{0085}') && '\u{0085}'.is_whitespace());
        for c in [
            ' ', '\t', '\n', '\u{000B}', '\u{00A0}', '\u{3000}', '\u{2009}', '\u{2029}',
        ] {
            assert!(is_js_whitespace(c), "{c:?}");
        }
        for c in ['a', '.', '\u{200B}', '\u{180E}', '\u{0000}'] {
            assert!(!is_js_whitespace(c), "{c:?}");
        }
    }
}
