//! server::config::notify: the approval webhook as configured (the `notify` object of the
//! config file) and validated. A webhook URL often carries its own secret (a Slack incoming
//! webhook's path is one), so no error ever shows it.

use serde::Deserialize;

use super::ConfigError;
use crate::server::notify::WebhookTarget;

/// The `notify` object as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawNotify {
    /// Receives one JSON message per new pending approval.
    pub webhook_url: Option<String>,
    /// Where people reach the console (links in messages): the console URL `serve` prints
    /// (`http://HOST/console`) or the server's base URL; default `http://<listen>`.
    pub console_url: Option<String>,
}

impl RawNotify {
    /// The webhook target; `None` when no webhook is configured.
    pub fn validate(self, listen: &str) -> Result<Option<WebhookTarget>, ConfigError> {
        let Some(url) = self.webhook_url else {
            return Ok(None);
        };
        if !is_http(&url) {
            return Err(ConfigError::new(
                "notify.webhook_url",
                "is not an http(s) URL (the value is not shown: it may hold a secret)".to_string(),
            ));
        }
        let console_base = match self.console_url {
            Some(console) if is_http(&console) => console_base(&console),
            Some(console) => {
                return Err(ConfigError::new(
                    "notify.console_url",
                    format!("`{console}` is not an http(s) URL"),
                ))
            }
            None => format!("http://{listen}"),
        };
        Ok(Some(WebhookTarget { url, console_base }))
    }
}

/// The base the console's pages hang off: `console_url` as written, with a trailing `/` and the
/// console's own `/console` taken off (A7), so both the URL `serve` prints for the console
/// (`http://HOST/console`) and the server's base URL give `http://HOST/console/approvals/…`.
pub(super) fn console_base(console: &str) -> String {
    let base = console.trim_end_matches('/');
    let base = base.strip_suffix("/console").unwrap_or(base);
    base.trim_end_matches('/').to_string()
}

pub(super) fn is_http(text: &str) -> bool {
    url::Url::parse(text)
        .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_webhook_url_is_refused_without_being_shown() {
        let raw = RawNotify {
            webhook_url: Some("hooks.example/T000/SECRET".to_string()),
            console_url: None,
        };
        let error = raw.validate("127.0.0.1:8080").unwrap_err();
        assert_eq!(error.field, "notify.webhook_url");
        assert!(!error.to_string().contains("SECRET"), "{error}");
    }

    /// A7: the console URL `serve` prints and the base URL give the same links; `/console` is
    /// never doubled.
    #[test]
    fn a7_console_url_takes_the_printed_console_url_or_the_base_url() {
        for written in [
            "https://askgate.example/console",
            "https://askgate.example/console/",
            "https://askgate.example",
            "https://askgate.example/",
        ] {
            let raw = RawNotify {
                webhook_url: Some("http://127.0.0.1:9/hook".to_string()),
                console_url: Some(written.to_string()),
            };
            let target = raw.validate("127.0.0.1:8080").unwrap().unwrap();
            assert_eq!(target.console_base, "https://askgate.example", "{written}");
        }
    }

    #[test]
    fn the_console_link_defaults_to_the_listen_address() {
        let raw = RawNotify {
            webhook_url: Some("http://127.0.0.1:9/hook".to_string()),
            console_url: None,
        };
        let target = raw.validate("127.0.0.1:8080").unwrap().unwrap();
        assert_eq!(target.console_base, "http://127.0.0.1:8080");
        assert_eq!(RawNotify::default().validate("x").unwrap(), None);
    }
}
