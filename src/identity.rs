//! Sanitizing the server's `get_project` answer into the identity the grant card may show
//! (`moS`). It must not fetch the project, nor decide whether a grant is offered.

use crate::paths::{is_js_whitespace, is_strict_project_id, js_length};
use serde_json::Value;

/// Length of the name shown before it is cut and given an ellipsis, in UTF-16 code units
/// (JavaScript `.length`/`.slice`); a cut never splits a surrogate pair.
const MAX_NAME_DISPLAY: usize = 60;
/// Longest url, in UTF-16 code units (JavaScript `.length`).
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
    /// As a URL parser serializes it: scheme and host lower-cased, dot segments resolved,
    /// an international host in punycode — where the link actually leads.
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
    let url = check_url(url, project_id)?;
    Ok(ProjectIdentity {
        project_id: project_id.to_owned(),
        name,
        sharing_scope: scope.to_owned(),
        sharing_label: sharing_label.to_owned(),
        url,
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

/// Keeps 60 UTF-16 code units and adds "…"; a space or joiner left dangling at the cut is dropped
/// so the card never ends in an invisible character.
fn cut_for_display(name: &str) -> String {
    if js_length(name) <= MAX_NAME_DISPLAY {
        return name.to_owned();
    }
    let mut units = 0;
    let kept: String = name
        .chars()
        .take_while(|c| {
            units += c.len_utf16();
            units <= MAX_NAME_DISPLAY
        })
        .collect();
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

mod url;
use url::check_url;

#[cfg(test)]
mod tests;
