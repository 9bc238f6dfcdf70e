//! server::auth::fetch::tests: how long a key set is kept from its `Cache-Control`.

use reqwest::header::HeaderValue;

use super::*;

fn age(header: &str) -> Span {
    max_age(Some(
        &HeaderValue::from_str(header).unwrap_or(HeaderValue::from_static("")),
    ))
}

#[test]
fn max_age_is_honoured_within_its_bounds() {
    assert_eq!(age("public, max-age=3600"), Span::hours(1));
    assert_eq!(age("max-age=5"), MIN_MAX_AGE);
    assert_eq!(age("max-age=31536000, immutable"), MAX_MAX_AGE);
    assert_eq!(age("no-cache"), MIN_MAX_AGE);
    assert_eq!(age("Max-Age=\"600\""), Span::minutes(10));
    assert_eq!(age("max-age=soon"), DEFAULT_MAX_AGE);
    assert_eq!(age("private"), DEFAULT_MAX_AGE);
    assert_eq!(max_age(None), DEFAULT_MAX_AGE);
}
