//! identity::url: the hand-written checks on a project URL shown on the grant card
//! (client-facts §5.3): https only, no userinfo, query or fragment, a path ending in
//! `/p/<project_id>`, at most 200 characters, no invisible or quote-like characters.

use super::*;

const HTTPS_PREFIX: &str = "https://";

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
pub(super) fn check_url(url: &str, project_id: &str) -> Result<(), IdentityRejection> {
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
        // A URL parser lower-cases the scheme (`HTTPS://` is `https:`), so the prefix is
        // compared as URLs compare it: ASCII case-insensitively.
        Some(_) => url
            .get(..HTTPS_PREFIX.len())
            .filter(|prefix| prefix.eq_ignore_ascii_case(HTTPS_PREFIX))
            .and_then(|_| url.get(HTTPS_PREFIX.len()..))
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
