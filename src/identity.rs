//! Sanitizing the server's `get_project` answer into the identity the grant card may show
//! (`moS`). It must not fetch the project, nor decide whether a grant is offered.

use crate::paths::{is_js_whitespace, is_strict_project_id, js_length};
use serde_json::Value;

/// Characters of the name shown before it is cut and given an ellipsis.
const MAX_NAME_DISPLAY: usize = 60;
/// Longest url, in JavaScript length.
const MAX_URL: usize = 200;
const ZERO_WIDTH_NON_JOINER: char = '\u{200C}';
const ZERO_WIDTH_JOINER: char = '\u{200D}';
const EMOJI_PRESENTATION: char = '\u{FE0F}';

/// The project identity a grant card may show.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProjectIdentity {
    pub project_id: String,
    /// Whitespace collapsed; at most 60 characters, then "…" when cut
    pub name: String,
    /// `invited`, `org` or `public`
    pub sharing_scope: String,
    pub sharing_label: String,
    pub url: String,
}

/// Why the server's answer cannot be shown; any of these denies the write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityRejection {
    #[error("project id `{project_id}` is not 1 to 78 letters, digits, `.`, `_` or `-`")]
    InvalidProjectId { project_id: String },
    #[error("project answer is not a json object")]
    NotAnObject,
    #[error("name is missing or not a string")]
    NameMissing,
    #[error("name is empty once whitespace is collapsed")]
    NameEmpty,
    #[error("name contains a {class} character {}", code_point(.character))]
    NameForbiddenCharacter {
        character: char,
        class: &'static str,
    },
    #[error("name contains {} that is not between two letters or emoji", code_point(.character))]
    NameMisplacedJoiner { character: char },
    #[error("name contains `://`")]
    NameContainsScheme,
    #[error("sharing.scope is missing or not a string")]
    SharingScopeMissing,
    #[error("sharing.scope `{scope}` is not `invited`, `org` or `public`")]
    SharingScopeUnknown { scope: String },
    #[error("url is missing or not a string")]
    UrlMissing,
    #[error("url is {length} characters long, more than 200")]
    UrlTooLong { length: usize },
    #[error("url contains a {class} character {}", code_point(.character))]
    UrlForbiddenCharacter {
        character: char,
        class: &'static str,
    },
    #[error("url `{url}` is not https")]
    UrlNotHttps { url: String },
    #[error("url `{url}` cannot be parsed: {reason}")]
    UrlUnparseable { url: String, reason: &'static str },
    #[error("url `{url}` has userinfo")]
    UrlHasUserinfo { url: String },
    #[error("url `{url}` has a query")]
    UrlHasQuery { url: String },
    #[error("url `{url}` has a fragment")]
    UrlHasFragment { url: String },
    #[error("url `{url}` does not end in `/p/{project_id}`")]
    UrlWrongPath { url: String, project_id: String },
}

fn code_point(character: &char) -> String {
    format!("U+{:04X}", u32::from(*character))
}

/// Sanitizes `raw`, the parsed first text block of `get_project`, for `project_id`.
pub fn sanitize_identity(
    project_id: &str,
    raw: &Value,
) -> Result<ProjectIdentity, IdentityRejection> {
    if !is_strict_project_id(project_id) {
        return Err(IdentityRejection::InvalidProjectId {
            project_id: project_id.to_owned(),
        });
    }
    let object = raw.as_object().ok_or(IdentityRejection::NotAnObject)?;
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .ok_or(IdentityRejection::NameMissing)?;
    let name = sanitize_name(name)?;
    let scope = raw.pointer("/sharing/scope").and_then(Value::as_str);
    let scope = scope.ok_or(IdentityRejection::SharingScopeMissing)?;
    let sharing_label = sharing_label(scope)?;
    let url = object
        .get("url")
        .and_then(Value::as_str)
        .ok_or(IdentityRejection::UrlMissing)?;
    check_url(url, project_id)?;
    Ok(ProjectIdentity {
        project_id: project_id.to_owned(),
        name,
        sharing_scope: scope.to_owned(),
        sharing_label: sharing_label.to_owned(),
        url: url.to_owned(),
    })
}

fn sharing_label(scope: &str) -> Result<&'static str, IdentityRejection> {
    match scope {
        "invited" => Ok("private: invited members only"),
        "org" => Ok("visible to your whole organization"),
        "public" => Ok("PUBLIC"),
        _ => Err(IdentityRejection::SharingScopeUnknown {
            scope: scope.to_owned(),
        }),
    }
}

/// Collapses whitespace (JavaScript `\s`, as the reference's `/\s+/g`), checks every
/// character class in the reference's order, then cuts the name for display.
fn sanitize_name(raw: &str) -> Result<String, IdentityRejection> {
    let name = raw
        .split(is_js_whitespace)
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if name.is_empty() {
        return Err(IdentityRejection::NameEmpty);
    }
    let forbidden = |class: &'static str, test: fn(char) -> bool| {
        let character = name.chars().find(|c| test(*c));
        character.map(|character| IdentityRejection::NameForbiddenCharacter { character, class })
    };
    if let Some(rejection) = forbidden(CONTROL_CLASS, is_control_or_format)
        .or_else(|| forbidden(TAG_CLASS, is_tag_or_variation_selector))
    {
        return Err(rejection);
    }
    if let Some(character) = misplaced_joiner(&name) {
        return Err(IdentityRejection::NameMisplacedJoiner { character });
    }
    if name.contains("://") {
        return Err(IdentityRejection::NameContainsScheme);
    }
    forbidden(QUOTE_CLASS, is_quote_like).map_or(Ok(()), Err)?;
    Ok(cut_for_display(&name))
}

/// Keeps 60 characters and adds "…"; a space or joiner left dangling at the cut is dropped
/// so the card never ends in an invisible character.
fn cut_for_display(name: &str) -> String {
    if name.chars().count() <= MAX_NAME_DISPLAY {
        return name.to_owned();
    }
    let kept: String = name.chars().take(MAX_NAME_DISPLAY).collect();
    let dangling = |c: char| c == ' ' || c == ZERO_WIDTH_JOINER || c == ZERO_WIDTH_NON_JOINER;
    format!("{}…", kept.trim_end_matches(dangling))
}

/// The first ZWNJ, ZWJ or VS16 out of place. Rule: ZWNJ and ZWJ need a letter or emoji on
/// both sides (before a ZWJ, an emoji already followed by VS16 also counts, as in 🏳️‍🌈);
/// VS16 needs an emoji right before it and may end the name, as in "❤️".
fn misplaced_joiner(name: &str) -> Option<char> {
    let characters: Vec<char> = name.chars().collect();
    let joinable = |c: Option<&char>| c.is_some_and(|c| c.is_alphabetic() || is_emoji(*c));
    characters
        .iter()
        .enumerate()
        .find_map(|(index, character)| {
            let before = index
                .checked_sub(1)
                .and_then(|before| characters.get(before));
            let after = characters.get(index + 1);
            let placed = match *character {
                ZERO_WIDTH_NON_JOINER => joinable(before) && joinable(after),
                ZERO_WIDTH_JOINER => {
                    (joinable(before) || before == Some(&EMOJI_PRESENTATION)) && joinable(after)
                }
                EMOJI_PRESENTATION => before.is_some_and(|c| is_emoji(*c)),
                _ => true,
            };
            (!placed).then_some(*character)
        })
}

const CONTROL_CLASS: &str = "control or format";
const TAG_CLASS: &str = "tag or variation selector";
const QUOTE_CLASS: &str = "quote-like";

/// `j0f`: controls and invisible format characters.
fn is_control_or_format(c: char) -> bool {
    matches!(c,
        '\u{0000}'..='\u{001F}' | '\u{007F}'..='\u{009F}' | '\u{00AD}' | '\u{061C}' | '\u{180E}'
        | '\u{200B}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{2026}' | '\u{2800}' | '\u{3164}' | '\u{FE00}'..='\u{FE0E}'
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{FFA0}')
}

/// `z0f`: tag characters, supplementary variation selectors and musical format controls.
fn is_tag_or_variation_selector(c: char) -> bool {
    matches!(c, '\u{E0020}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}' | '\u{1D173}'..='\u{1D17A}')
}

/// `G0f`: quotation marks and look-alikes, plus the em dash and horizontal bar.
fn is_quote_like(c: char) -> bool {
    matches!(c,
        '"' | '\u{201C}'..='\u{201F}' | '\u{FF02}' | '\u{2033}' | '\u{2036}' | '\u{02BA}' | '\u{02DD}'
        | '\u{02EE}' | '\u{05F4}' | '\u{3003}' | '\u{301D}'..='\u{301F}' | '\u{275D}' | '\u{275E}'
        | '\u{2014}' | '\u{2015}')
}

/// Pictographic blocks and the emoji-capable symbols outside them; an approximation of
/// `Extended_Pictographic` that errs towards treating symbols as emoji.
fn is_emoji(c: char) -> bool {
    matches!(c,
        '\u{00A9}' | '\u{00AE}' | '\u{203C}' | '\u{2049}' | '\u{2122}' | '\u{2139}'
        | '\u{2190}'..='\u{21FF}' | '\u{2300}'..='\u{23FF}' | '\u{24C2}' | '\u{25A0}'..='\u{25FF}'
        | '\u{2600}'..='\u{27BF}' | '\u{2900}'..='\u{297F}' | '\u{2B00}'..='\u{2BFF}'
        | '\u{3030}' | '\u{303D}' | '\u{3297}' | '\u{3299}' | '\u{1F000}'..='\u{1FAFF}')
}

/// Why a url character is refused: whitespace, controls, tags, joiners or quotes.
fn url_character_class(c: char) -> Option<&'static str> {
    if is_js_whitespace(c) {
        Some("whitespace")
    } else if is_control_or_format(c) {
        Some(CONTROL_CLASS)
    } else if is_tag_or_variation_selector(c) {
        Some(TAG_CLASS)
    } else if matches!(
        c,
        ZERO_WIDTH_NON_JOINER | ZERO_WIDTH_JOINER | EMOJI_PRESENTATION
    ) {
        Some("joiner or emoji presentation")
    } else if is_quote_like(c) {
        Some(QUOTE_CLASS)
    } else {
        None
    }
}

/// Checks the url by hand, accepting only the plain shape `https://host[:port]/path`
/// ending in `/p/<project_id>`; anything a WHATWG parser would rewrite (backslashes,
/// dot segments, non-ASCII, a scheme without `//`) is refused rather than guessed at.
fn check_url(url: &str, project_id: &str) -> Result<(), IdentityRejection> {
    let length = js_length(url);
    if length > MAX_URL {
        return Err(IdentityRejection::UrlTooLong { length });
    }
    let forbidden = url
        .chars()
        .find_map(|c| url_character_class(c).map(|class| (c, class)));
    if let Some((character, class)) = forbidden {
        return Err(IdentityRejection::UrlForbiddenCharacter { character, class });
    }
    let path = url_path(url)?;
    let dot_segment = |segment: &str| segment == "." || segment == "..";
    if path.split('/').any(dot_segment) || path.to_ascii_lowercase().contains("%2e") {
        return Err(unparseable(url, "dot segments"));
    }
    if !path.ends_with(&format!("/p/{project_id}")) {
        let (url, project_id) = (url.to_owned(), project_id.to_owned());
        return Err(IdentityRejection::UrlWrongPath { url, project_id });
    }
    Ok(())
}

fn unparseable(url: &str, reason: &'static str) -> IdentityRejection {
    IdentityRejection::UrlUnparseable {
        url: url.to_owned(),
        reason,
    }
}

/// The path of `url` once the scheme and authority are checked; refuses a query or fragment.
fn url_path(url: &str) -> Result<&str, IdentityRejection> {
    let rest = match url.split_once(':') {
        None => return Err(unparseable(url, "no scheme")),
        Some((scheme, _)) if !scheme.eq_ignore_ascii_case("https") => {
            return Err(IdentityRejection::UrlNotHttps {
                url: url.to_owned(),
            });
        }
        Some(_) => url
            .strip_prefix("https://")
            .ok_or_else(|| unparseable(url, "scheme is not `https://`"))?,
    };
    if !url.is_ascii() || url.contains('\\') {
        return Err(unparseable(url, "non-ascii characters or backslash"));
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, rest) = rest
        .split_at_checked(authority_end)
        .ok_or_else(|| unparseable(url, "authority"))?;
    check_authority(url, authority)?;
    match rest.find(['?', '#']).and_then(|index| rest.get(index..)) {
        Some(tail) if tail.starts_with('?') => Err(IdentityRejection::UrlHasQuery {
            url: url.to_owned(),
        }),
        Some(_) => Err(IdentityRejection::UrlHasFragment {
            url: url.to_owned(),
        }),
        None => Ok(rest),
    }
}

/// `host[:port]` with DNS-style labels only; userinfo is its own refusal.
fn check_authority(url: &str, authority: &str) -> Result<(), IdentityRejection> {
    if authority.contains('@') {
        return Err(IdentityRejection::UrlHasUserinfo {
            url: url.to_owned(),
        });
    }
    let (host, port) = authority.rsplit_once(':').unwrap_or((authority, "443"));
    let label = |label: &str| {
        !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    let port_digits =
        !port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit());
    if host.split('.').all(label) && port_digits {
        Ok(())
    } else {
        Err(unparseable(url, "host"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )]
    use super::*;
    use serde_json::json;

    const ID: &str = "0a1b-2c";
    const URL: &str = "https://claude.ai/design/p/0a1b-2c";

    fn sanitize(name: &str, scope: &str, url: &str) -> Result<ProjectIdentity, IdentityRejection> {
        let raw = json!({"name": name, "sharing": {"scope": scope}, "url": url, "extra": 1});
        sanitize_identity(ID, &raw)
    }

    fn name_error(name: &str) -> IdentityRejection {
        sanitize(name, "org", URL).unwrap_err()
    }

    fn url_error(url: &str) -> String {
        sanitize("Deck", "org", url).unwrap_err().to_string()
    }

    #[test]
    fn a_clean_answer_gives_the_card_with_each_label() {
        let labels = [
            ("invited", "private: invited members only"),
            ("org", "visible to your whole organization"),
            ("public", "PUBLIC"),
        ];
        for (scope, label) in labels {
            let identity = sanitize("  Launch \t deck\n", scope, URL).unwrap();
            let expected = ProjectIdentity {
                project_id: ID.to_owned(),
                name: "Launch deck".to_owned(),
                sharing_scope: scope.to_owned(),
                sharing_label: label.to_owned(),
                url: URL.to_owned(),
            };
            assert_eq!(identity, expected);
        }
    }

    #[test]
    fn shape_rejections_name_the_field() {
        let reject = |raw: Value| sanitize_identity(ID, &raw).unwrap_err();
        assert_eq!(reject(json!([1])), IdentityRejection::NotAnObject);
        assert_eq!(reject(json!({"name": 3})), IdentityRejection::NameMissing);
        let no_scope = json!({"name": "a", "sharing": "org", "url": URL});
        assert_eq!(reject(no_scope), IdentityRejection::SharingScopeMissing);
        let no_url = json!({"name": "a", "sharing": {"scope": "org"}});
        assert_eq!(reject(no_url), IdentityRejection::UrlMissing);
        let unknown = sanitize("a", "Public", URL).unwrap_err().to_string();
        assert_eq!(
            unknown,
            "sharing.scope `Public` is not `invited`, `org` or `public`"
        );
        let bad_id = sanitize_identity("a b", &json!({})).unwrap_err();
        assert!(matches!(bad_id, IdentityRejection::InvalidProjectId { .. }));
    }

    #[test]
    fn name_whitespace_is_collapsed_and_must_leave_something() {
        assert_eq!(
            name_error(" \u{3000}\u{FEFF}\n"),
            IdentityRejection::NameEmpty
        );
        assert_eq!(
            sanitize("a\u{2028}\u{00A0}b", "org", URL).unwrap().name,
            "a b"
        );
    }

    #[test]
    fn name_refuses_each_forbidden_class() {
        let classes = [
            (
                CONTROL_CLASS,
                "\u{1}\u{85}\u{AD}\u{61C}\u{180E}\u{200B}\u{200E}\u{200F}\u{202A}\u{202E}",
            ),
            (
                CONTROL_CLASS,
                "\u{2060}\u{2064}\u{2066}\u{2069}\u{2026}\u{2800}\u{3164}\u{FE00}\u{FE0E}",
            ),
            (CONTROL_CLASS, "\u{FFF9}\u{FFFB}\u{FFA0}"),
            (
                TAG_CLASS,
                "\u{E0020}\u{E007F}\u{E0100}\u{E01EF}\u{1D173}\u{1D17A}",
            ),
            (
                QUOTE_CLASS,
                "\"\u{201C}\u{201F}\u{FF02}\u{2033}\u{2036}\u{2BA}\u{2DD}\u{2EE}\u{5F4}",
            ),
            (
                QUOTE_CLASS,
                "\u{3003}\u{301D}\u{301F}\u{275D}\u{275E}\u{2014}\u{2015}",
            ),
        ];
        for (class, characters) in classes {
            for character in characters.chars() {
                let expected = IdentityRejection::NameForbiddenCharacter { character, class };
                assert_eq!(
                    name_error(&format!("a{character}b")),
                    expected,
                    "{character:?}"
                );
            }
        }
        let message = name_error("x\u{0007}").to_string();
        assert_eq!(
            message,
            "name contains a control or format character U+0007"
        );
        for allowed in "\u{2013}\u{2018}'\u{3165}\u{2027}\u{FFA1}\u{E0080}".chars() {
            assert!(
                sanitize(&format!("a{allowed}b"), "org", URL).is_ok(),
                "{allowed:?}"
            );
        }
    }

    #[test]
    fn name_refuses_a_scheme() {
        assert_eq!(
            name_error("see https://evil"),
            IdentityRejection::NameContainsScheme
        );
        assert_eq!(
            sanitize("ratio 1:2 / 3", "org", URL).unwrap().name,
            "ratio 1:2 / 3"
        );
    }

    #[test]
    fn joiners_must_sit_between_letters_or_emoji() {
        let placed = [
            "می\u{200C}خواهم",
            "👨\u{200D}👩\u{200D}👧",
            "🏳\u{FE0F}\u{200D}🌈",
            "Love ❤\u{FE0F}",
        ];
        for name in placed {
            assert!(sanitize(name, "org", URL).is_ok(), "{name:?}");
        }
        let misplaced = [
            ("\u{200C}abc", '\u{200C}'),
            ("abc\u{200D}", '\u{200D}'),
            ("a \u{200D}b", '\u{200D}'),
            ("a\u{200C}\u{200C}b", '\u{200C}'),
            ("a\u{FE0F}", '\u{FE0F}'),
            ("1\u{FE0F}\u{20E3}", '\u{FE0F}'),
            ("🏳\u{FE0F}\u{FE0F}", '\u{FE0F}'),
        ];
        for (name, character) in misplaced {
            let expected = IdentityRejection::NameMisplacedJoiner { character };
            assert_eq!(name_error(name), expected, "{name:?}");
        }
    }

    #[test]
    fn long_names_are_cut_at_sixty_characters() {
        let sixty = "é".repeat(60);
        assert_eq!(sanitize(&sixty, "org", URL).unwrap().name, sixty);
        let cut = sanitize(&format!("{sixty}x"), "org", URL).unwrap().name;
        assert_eq!(cut, format!("{sixty}…"));
        let spaced = format!("{} tail", "a".repeat(59));
        assert_eq!(
            sanitize(&spaced, "org", URL).unwrap().name,
            format!("{}…", "a".repeat(59))
        );
    }

    #[test]
    fn url_limits_length_and_characters() {
        let at_limit = format!("https://claude.ai/{}/p/{ID}", "x".repeat(172));
        assert_eq!(at_limit.len(), 200);
        assert!(sanitize("a", "org", &at_limit).is_ok());
        let over = format!("https://claude.ai/{}/p/{ID}", "x".repeat(173));
        assert_eq!(
            url_error(&over),
            "url is 201 characters long, more than 200"
        );
        let classes = [
            ("whitespace", " \u{FEFF}\u{3000}"),
            (CONTROL_CLASS, "\u{0}\u{7F}\u{202E}\u{2060}"),
            (TAG_CLASS, "\u{E0041}"),
            ("joiner or emoji presentation", "\u{200C}\u{200D}\u{FE0F}"),
            (QUOTE_CLASS, "\"\u{201C}\u{2014}"),
        ];
        for (class, characters) in classes {
            for character in characters.chars() {
                let url = format!("https://claude.ai/de{character}sign/p/{ID}");
                let rejection = IdentityRejection::UrlForbiddenCharacter { character, class };
                assert_eq!(url_error(&url), rejection.to_string());
            }
        }
    }

    #[test]
    fn url_must_be_plain_https_to_the_project() {
        for url in [
            "http://claude.ai/p/0a1b-2c",
            "javascript:alert(1)//p/0a1b-2c",
        ] {
            assert_eq!(url_error(url), format!("url `{url}` is not https"));
        }
        let refusals = [
            ("https://u:p@claude.ai/p/0a1b-2c", "has userinfo"),
            ("https://claude.ai/p/0a1b-2c?x=1", "has a query"),
            ("https://claude.ai/p/0a1b-2c?", "has a query"),
            ("https://claude.ai/p/0a1b-2c#top", "has a fragment"),
            (
                "https://claude.ai/p/0a1b-2cd",
                "does not end in `/p/0a1b-2c`",
            ),
            (
                "https://claude.ai/p/0a1b-2c/",
                "does not end in `/p/0a1b-2c`",
            ),
            ("https://claude.ai", "does not end in `/p/0a1b-2c`"),
            (
                "https://claude.ai/P/0a1b-2c",
                "does not end in `/p/0a1b-2c`",
            ),
        ];
        for (url, refusal) in refusals {
            assert_eq!(url_error(url), format!("url `{url}` {refusal}"));
        }
        assert!(sanitize("a", "org", "https://claude.ai:8443/p/0a1b-2c").is_ok());
        assert!(sanitize("a", "org", "https://x.claude.ai/p/0a1b-2c").is_ok());
    }

    #[test]
    fn urls_a_browser_would_rewrite_are_unparseable() {
        let unparseable = [
            "claude.ai/p/0a1b-2c",
            "HTTPS://claude.ai/p/0a1b-2c",
            "https:claude.ai/p/0a1b-2c",
            "https:///p/0a1b-2c",
            "https://claude.ai\\p/0a1b-2c",
            "https://claudé.ai/p/0a1b-2c",
            "https://a/p/x/../p/0a1b-2c",
            "https://a/%2E%2e/p/0a1b-2c",
            "https://[::1]/p/0a1b-2c",
            "https://a:/p/0a1b-2c",
            "https://a:123456/p/0a1b-2c",
            "https://a..b/p/0a1b-2c",
            "https://a_b/p/0a1b-2c",
        ];
        for url in unparseable {
            assert!(url_error(url).contains("cannot be parsed"), "{url}");
        }
    }
}
