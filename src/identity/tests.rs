//! identity::tests: every rejection and label of client-facts §5.3.
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

/// The url the card shows for `url`, or the refusal.
fn shown_url(url: &str) -> Result<String, String> {
    sanitize("Deck", "org", url)
        .map(|identity| identity.url)
        .map_err(|rejection| rejection.to_string())
}

/// Issue 18 §7: each class a URL parser normalizes is judged on the parsed components (as the
/// reference's `new URL`) and shown as the parser serializes it.
#[test]
fn i18_identity_url_scheme_case_is_the_parsers() {
    let shown = "https://claude.ai/design/p/0a1b-2c";
    for url in [
        "HTTPS://claude.ai/design/p/0a1b-2c",
        "Https://claude.ai/design/p/0a1b-2c",
        "hTTpS://Claude.AI/design/p/0a1b-2c",
        // A special scheme's slashes are the parser's to supply or skip.
        "HTTPS:claude.ai/design/p/0a1b-2c",
        "https:/claude.ai/design/p/0a1b-2c",
        "https:///claude.ai/design/p/0a1b-2c",
    ] {
        assert_eq!(shown_url(url).as_deref(), Ok(shown), "{url}");
    }
    for url in [
        "HTTP://claude.ai/design/p/0a1b-2c",
        "wss://claude.ai/design/p/0a1b-2c",
        "javascript:alert(1)//p/0a1b-2c",
    ] {
        assert_eq!(shown_url(url), Err(format!("url `{url}` is not https")));
    }
}

#[test]
fn i18_identity_url_dot_segments_are_resolved_before_the_path_is_read() {
    let shown = "https://claude.ai/design/p/0a1b-2c";
    for url in [
        "https://claude.ai/design/x/../p/0a1b-2c",
        "https://claude.ai/./design/p/0a1b-2c",
        "https://claude.ai/design/p/other/../0a1b-2c",
        "https://claude.ai/design/x/%2e%2e/p/0a1b-2c",
        "https://claude.ai/design/x/%2E%2e/p/0a1b-2c",
        "https://claude.ai/design/x/.%2E/p/0a1b-2c",
        "https://claude.ai/design/%2e/p/0a1b-2c",
    ] {
        assert_eq!(shown_url(url).as_deref(), Ok(shown), "{url}");
    }
    for url in [
        "https://claude.ai/design/p/0a1b-2c/.",
        "https://claude.ai/design/p/0a1b-2c/..",
        "https://claude.ai/design/p/0a1b-2c/%2e",
        "https://claude.ai/design/p/0a1b-2c/x/..",
    ] {
        assert!(
            shown_url(url)
                .unwrap_err()
                .ends_with("does not end in `/p/0a1b-2c`"),
            "{url}"
        );
    }
}

#[test]
fn i18_identity_url_percent_encoding_is_kept_in_the_path_and_decoded_in_the_host() {
    for url in [
        "https://claude.ai/design/p/%30a1b-2c",
        "https://claude.ai/design/p/0a1b%2D2c",
        "https://claude.ai/design%2Fp%2F0a1b-2c",
        "https://claude.ai/design/p/0a1b-2c%23top",
        "https://claude.ai/design/p/0a1b-2c%3F",
    ] {
        assert!(
            shown_url(url)
                .unwrap_err()
                .ends_with("does not end in `/p/0a1b-2c`"),
            "{url}"
        );
    }
    assert_eq!(
        shown_url("https://claude%2Eai/design/p/0a1b-2c").as_deref(),
        Ok("https://claude.ai/design/p/0a1b-2c")
    );
    assert_eq!(
        shown_url("https://claude.ai/dé/p/0a1b-2c").as_deref(),
        Ok("https://claude.ai/d%C3%A9/p/0a1b-2c")
    );
    assert_eq!(
        shown_url("https://claude%00.ai/design/p/0a1b-2c"),
        Err("url `https://claude%00.ai/design/p/0a1b-2c` cannot be parsed: invalid international domain name".to_string())
    );
}

#[test]
fn i18_identity_url_shows_where_the_parser_leads() {
    let cases = [
        // Backslashes separate segments in a special URL.
        (
            "https://claude.ai\\design\\p\\0a1b-2c",
            "https://claude.ai/design/p/0a1b-2c",
        ),
        // A look-alike host is shown in punycode, so it cannot pass for claude.ai.
        (
            "https://claudé.ai/design/p/0a1b-2c",
            "https://xn--claud-fsa.ai/design/p/0a1b-2c",
        ),
        (
            "https://claude.ai:443/design/p/0a1b-2c",
            "https://claude.ai/design/p/0a1b-2c",
        ),
        (
            "https://claude.ai:8443/design/p/0a1b-2c",
            "https://claude.ai:8443/design/p/0a1b-2c",
        ),
        (
            "https://@claude.ai/design/p/0a1b-2c",
            "https://claude.ai/design/p/0a1b-2c",
        ),
        ("https://[::1]/p/0a1b-2c", "https://[::1]/p/0a1b-2c"),
    ];
    for (url, shown) in cases {
        assert_eq!(shown_url(url).as_deref(), Ok(shown), "{url}");
    }
    for (url, reason) in [
        ("claude.ai/p/0a1b-2c", "no scheme"),
        ("https://claude.ai:123456/p/0a1b-2c", "invalid port"),
        ("https://[::1/p/0a1b-2c", "invalid IPv6 address"),
        ("https:///p/0a1b-2c", "does not end in"),
    ] {
        assert!(shown_url(url).unwrap_err().contains(reason), "{url}");
    }
}

#[test]
fn name_is_cut_at_60_utf16_code_units() {
    let emoji = "😀".repeat(30);
    assert_eq!(sanitize(&emoji, "org", URL).unwrap().name, emoji);
    let cut = sanitize(&format!("{emoji}a"), "org", URL).unwrap().name;
    assert_eq!(cut, format!("{emoji}…"));
    // A cut never splits a surrogate pair: 59 units of ASCII, then an emoji, keeps 59.
    let name = format!("{}😀😀", "a".repeat(59));
    assert_eq!(
        sanitize(&name, "org", URL).unwrap().name,
        format!("{}…", "a".repeat(59))
    );
}
