//! server::present::shown: untrusted text (paths, project names, reasons, ids) rendered so that
//! a person sees exactly what it holds. HTML is escaped (maud); control, bidi, zero-width and
//! other invisible or default-ignorable code points become visible `\u202e`-style badges; other
//! non-ASCII characters (possible look-alikes, e.g. Cyrillic `С`) are marked with their code
//! point. Nothing untrusted is ever rendered as markup or as a link.

use maud::{html, Markup};

/// `text` as a person should see it.
pub fn shown(text: &str) -> Markup {
    render(pieces(text, Style::Exact))
}

/// Prose that quotes untrusted text (a card's message, a reason): invisible characters become
/// badges, but visible non-ASCII is left as written (typographic dashes and quotes); the
/// untrusted parts are also shown on their own with [`shown`].
pub fn shown_prose(text: &str) -> Markup {
    render(pieces(text, Style::Prose))
}

/// A multi-line dump (the Cedar requests of a logged decision, as pretty JSON): like [`shown`],
/// but its line breaks stay line breaks.
pub fn shown_dump(text: &str) -> Markup {
    render(pieces(text, Style::Dump))
}

/// How much of a text is marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Invisible characters as badges, other non-ASCII with its code point.
    Exact,
    /// Invisible characters as badges only.
    Prose,
    /// As `Exact`, with `\n` kept.
    Dump,
}

fn render(pieces: Vec<Piece>) -> Markup {
    html! {
        span.untrusted {
            @for piece in pieces {
                @match piece {
                    Piece::Plain(plain) => (plain),
                    Piece::Invisible(code) => span.badge.invisible title="invisible or control character" { (code) },
                    Piece::NonAscii(character, code) => span.nonascii title=(format!("non-ASCII character {code}")) {
                        (character) sup { (code) }
                    },
                }
            }
        }
    }
}

/// `text` for a terminal: invisible characters as `\u202e`-style escapes and other non-ASCII
/// characters followed by their code point in brackets (`С[U+0421]`).
pub fn visible_text(text: &str) -> String {
    pieces(text, Style::Exact)
        .into_iter()
        .map(|piece| match piece {
            Piece::Plain(plain) => plain,
            Piece::Invisible(code) => code,
            Piece::NonAscii(character, code) => format!("{character}[{code}]"),
        })
        .collect()
}

/// Whether `text` holds anything a person could misread (invisible or non-ASCII characters).
pub fn needs_care(text: &str) -> bool {
    text.chars().any(|character| !is_plain(character))
}

#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Plain(String),
    /// `\u202e`
    Invisible(String),
    /// The character and `U+0421`.
    NonAscii(char, String),
}

fn pieces(text: &str, style: Style) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut plain = String::new();
    for character in text.chars() {
        let kept = match style {
            Style::Exact => false,
            Style::Prose => !is_invisible(character),
            Style::Dump => character == '\n',
        };
        if is_plain(character) || kept {
            plain.push(character);
            continue;
        }
        if !plain.is_empty() {
            pieces.push(Piece::Plain(std::mem::take(&mut plain)));
        }
        let code = u32::from(character);
        pieces.push(if is_invisible(character) {
            Piece::Invisible(if code <= 0xFFFF {
                format!("\\u{code:04x}")
            } else {
                format!("\\u{{{code:x}}}")
            })
        } else {
            Piece::NonAscii(character, format!("U+{code:04X}"))
        });
    }
    if !plain.is_empty() {
        pieces.push(Piece::Plain(plain));
    }
    pieces
}

fn is_plain(character: char) -> bool {
    character == ' ' || character.is_ascii_graphic()
}

/// Controls, non-ASCII whitespace, Unicode's Default_Ignorable_Code_Point set (bidi controls,
/// zero-width characters, variation selectors, tags, fillers: the set the hardening pack reads,
/// `paths::is_default_ignorable`) and the few other format characters outside it: characters
/// that render as nothing or move other text. Approvers' notes refuse them
/// (`approving::approval_note`).
pub fn is_invisible(character: char) -> bool {
    const OTHER_FORMAT: &[(u32, u32)] = &[
        (0x0600, 0x0605),
        (0x06DD, 0x06DD),
        (0x070F, 0x070F),
        (0x08E2, 0x08E2),
        (0xFFF9, 0xFFFB),
        (0x110BD, 0x110BD),
        (0x110CD, 0x110CD),
    ];
    let code = u32::from(character);
    character.is_control()
        || (character.is_whitespace() && character != ' ')
        || crate::paths::is_default_ignorable(character)
        || OTHER_FORMAT
            .iter()
            .any(|(low, high)| (*low..=*high).contains(&code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_escapes_what_a_terminal_would_render() {
        assert_eq!(visible_text("a\u{202e}b\n"), "a\\u202eb\\u000a");
        assert_eq!(visible_text("\u{421}x"), "\u{421}[U+0421]x");
        assert_eq!(visible_text("plain/path.html"), "plain/path.html");
    }

    #[test]
    fn markup_is_escaped_and_plain_text_kept() {
        let out = shown("<script>alert(1)</script> & \"x\"").into_string();
        assert!(!out.contains("<script>"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(out.contains("&amp;"), "{out}");
    }

    #[test]
    fn bidi_zero_width_and_controls_become_badges() {
        let out = shown("a\u{202e}lmth.exe\u{200b}\u{0}\n\u{e0041}").into_string();
        for badge in ["\\u202e", "\\u200b", "\\u0000", "\\u000a", "\\u{e0041}"] {
            assert!(out.contains(badge), "{badge} in {out}");
        }
        for raw in ['\u{202e}', '\u{200b}', '\u{0}', '\u{e0041}'] {
            assert!(!out.contains(raw), "{raw:?} rendered raw in {out}");
        }
    }

    #[test]
    fn prose_keeps_typography_but_not_invisible_characters() {
        let out = shown_prose("a \u{2014} b\u{202e}").into_string();
        assert!(out.contains('\u{2014}'), "{out}");
        assert!(!out.contains("U+2014"), "{out}");
        assert!(out.contains("\\u202e"), "{out}");
    }

    #[test]
    fn a_dump_keeps_its_lines_and_badges_the_rest() {
        let out = shown_dump("{\n  \"path\": \"a\u{202e}b\u{421}\"\n}").into_string();
        assert_eq!(out.matches('\n').count(), 2, "{out}");
        assert!(
            out.contains("\\u202e") && !out.contains('\u{202e}'),
            "{out}"
        );
        assert!(out.contains("U+0421"), "{out}");
    }

    #[test]
    fn look_alikes_are_marked_with_their_code_point() {
        let out = shown("\u{421}LAUDE.md ＣＬＡＵＤＥ").into_string();
        assert!(out.contains("U+0421"), "{out}");
        assert!(out.contains("U+FF23"), "{out}");
        assert!(needs_care("\u{421}LAUDE.md"));
        assert!(!needs_care("CLAUDE.md"));
    }
}
