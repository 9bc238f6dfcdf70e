//! server::config::escalation: escalation as configured (the `escalation` object of the config
//! file) and validated: an approval still pending `after_seconds` after it was asked is sent,
//! once, to `webhook_url` — a second group's channel. Like the webhook's, the URL is never
//! shown in an error (it often carries its own secret).

use std::time::Duration;

use serde::Deserialize;

use super::notify::{console_base, is_http};
use super::ConfigError;
use crate::server::notify::Escalation;

/// The `escalation` object as written; both keys or neither.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawEscalation {
    /// How long an approval may stay unanswered before it is escalated (1–86,400 s).
    pub after_seconds: Option<u64>,
    /// Receives one JSON message per escalated approval (the webhook's format).
    pub webhook_url: Option<String>,
}

impl RawEscalation {
    /// The escalation; `None` when none is configured. `console_url` is `notify.console_url`
    /// (links in the messages), else `http://<listen>`.
    pub fn validate(
        self,
        console_url: Option<&str>,
        listen: &str,
    ) -> Result<Option<Escalation>, ConfigError> {
        let (after, url) = match (self.after_seconds, self.webhook_url) {
            (None, None) => return Ok(None),
            (Some(after), Some(url)) => (after, url),
            (None, Some(_)) => return Err(missing("escalation.after_seconds")),
            (Some(_), None) => return Err(missing("escalation.webhook_url")),
        };
        if !(1..=86_400).contains(&after) {
            return Err(ConfigError::new(
                "escalation.after_seconds",
                format!("{after} is outside 1..=86400"),
            ));
        }
        if !is_http(&url) {
            return Err(ConfigError::new(
                "escalation.webhook_url",
                "is not an http(s) URL (the value is not shown: it may hold a secret)".to_string(),
            ));
        }
        let console_base = match console_url {
            Some(console) if is_http(console) => console_base(console),
            _ => format!("http://{listen}"),
        };
        Ok(Some(Escalation {
            url,
            after: Duration::from_secs(after),
            console_base,
        }))
    }
}

fn missing(key: &str) -> ConfigError {
    ConfigError::new(
        key,
        "is missing: an escalation needs both `after_seconds` and `webhook_url`".to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i35_an_escalation_needs_both_keys_a_bound_and_an_http_url_never_shown() {
        let none = RawEscalation::default().validate(None, "127.0.0.1:8080");
        assert_eq!(none.unwrap(), None);
        let half = RawEscalation {
            after_seconds: Some(60),
            webhook_url: None,
        };
        let error = half.validate(None, "127.0.0.1:8080").unwrap_err();
        assert_eq!(error.field, "escalation.webhook_url");
        let zero = RawEscalation {
            after_seconds: Some(0),
            webhook_url: Some("https://hooks.example/x".to_string()),
        };
        assert_eq!(
            zero.validate(None, "h").unwrap_err().field,
            "escalation.after_seconds"
        );
        let secret = RawEscalation {
            after_seconds: Some(60),
            webhook_url: Some("hooks.example/T000/SECRET".to_string()),
        };
        let error = secret.validate(None, "h").unwrap_err();
        assert!(!error.to_string().contains("SECRET"), "{error}");
        let good = RawEscalation {
            after_seconds: Some(600),
            webhook_url: Some("https://hooks.example/owners".to_string()),
        };
        let escalation = good
            .validate(Some("https://askgate.example/console"), "h")
            .unwrap()
            .unwrap();
        assert_eq!(escalation.after, Duration::from_secs(600));
        assert_eq!(escalation.console_base, "https://askgate.example");
    }
}
