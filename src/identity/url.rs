//! identity::url: the checks on a project URL shown on the grant card (client-facts §5.3), made
//! on the URL's components as a WHATWG URL parser sees them (the `url` crate, as the reference's
//! `new URL`): scheme `https:` (so `HTTPS:` is `https:`), no userinfo, query or fragment, a
//! pathname — dot segments resolved (`%2e` included), percent-encoding kept — ending in
//! `/p/<project_id>`; and on the raw text, at most 200 characters with no invisible or
//! quote-like character. The card shows the parser's serialization, where the URL leads.

use super::*;

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

/// Checks `url` for the card of `project_id` and returns it as the parser serializes it.
pub(super) fn check_url(url: &str, project_id: &str) -> Result<String, IdentityRejection> {
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
    let parsed = ::url::Url::parse(url).map_err(|error| IdentityRejection::UrlUnparseable {
        url: url.to_owned(),
        reason: parse_reason(error),
    })?;
    let refused = |rejection: fn(String) -> IdentityRejection| Err(rejection(url.to_owned()));
    if parsed.scheme() != "https" {
        return refused(|url| IdentityRejection::UrlNotHttps { url });
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return refused(|url| IdentityRejection::UrlHasUserinfo { url });
    }
    // An empty `?` or `#` is a component too: the card would show it.
    if parsed.query().is_some() {
        return refused(|url| IdentityRejection::UrlHasQuery { url });
    }
    if parsed.fragment().is_some() {
        return refused(|url| IdentityRejection::UrlHasFragment { url });
    }
    if !parsed.path().ends_with(&format!("/p/{project_id}")) {
        let (url, project_id) = (url.to_owned(), project_id.to_owned());
        return Err(IdentityRejection::UrlWrongPath { url, project_id });
    }
    Ok(parsed.into())
}

/// The parser's reason, in words.
fn parse_reason(error: ::url::ParseError) -> &'static str {
    use ::url::ParseError;
    match error {
        ParseError::EmptyHost => "empty host",
        ParseError::IdnaError => "invalid international domain name",
        ParseError::InvalidPort => "invalid port",
        ParseError::InvalidIpv4Address => "invalid IPv4 address",
        ParseError::InvalidIpv6Address => "invalid IPv6 address",
        ParseError::InvalidDomainCharacter => "invalid domain character",
        ParseError::RelativeUrlWithoutBase => "no scheme",
        _ => "not a URL",
    }
}
