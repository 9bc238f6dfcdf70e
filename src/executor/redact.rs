//! The one bearer-token redactor: every text the executor hands back, on both surfaces
//! (client-facts §6, `n6r`).
//! It must not decide which token is secret; callers pass every token they used.

/// What a bearer token is replaced with in every error or body text.
pub const REDACTED: &str = "[redacted-oauth-token]";

/// `text` with every occurrence of `token` replaced by [`REDACTED`]; an empty token redacts nothing.
pub fn redact(text: &str, token: &str) -> String {
    if token.is_empty() {
        return text.to_owned();
    }
    text.replace(token, REDACTED)
}

/// `text` with every one of `tokens` redacted, longest first so a token that contains another is
/// never left half visible.
pub fn redact_all<T: AsRef<str>>(text: &str, tokens: &[T]) -> String {
    let mut ordered: Vec<&str> = tokens.iter().map(AsRef::as_ref).collect();
    ordered.sort_by_key(|token| std::cmp::Reverse(token.len()));
    ordered
        .into_iter()
        .fold(text.to_owned(), |acc, token| redact(&acc, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_is_replaced() {
        let text = "Bearer tok-1 and again tok-1tok-1";
        assert_eq!(
            redact(text, "tok-1"),
            "Bearer [redacted-oauth-token] and again [redacted-oauth-token][redacted-oauth-token]"
        );
    }

    #[test]
    fn an_empty_token_redacts_nothing() {
        assert_eq!(redact("anything", ""), "anything");
    }

    #[test]
    fn text_without_the_token_is_unchanged() {
        assert_eq!(redact("HTTP 500 oops", "secret"), "HTTP 500 oops");
    }

    #[test]
    fn a_token_inside_another_is_redacted_longest_first() {
        let text = "old=abc new=abcdef";
        let redacted = redact_all(text, &["abc", "abcdef"]);
        assert_eq!(
            redacted,
            "old=[redacted-oauth-token] new=[redacted-oauth-token]"
        );
        assert!(!redacted.contains("def"));
    }

    #[test]
    fn multibyte_text_around_the_token_survives() {
        assert_eq!(redact("é—tok—é", "tok"), "é—[redacted-oauth-token]—é");
    }
}
