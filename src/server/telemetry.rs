//! server::telemetry: what the service tells its operator about itself — its own warnings and
//! errors (P7), written to stderr as human-readable lines (default) or JSON lines
//! (`logging.format: json`, `ASKGATE_LOG_FORMAT=json`), at the level `RUST_LOG` names (else
//! `logging.level`, default `info`). Distinct from the decision log (`log_dir`), which is the
//! record of decisions. Installed once per process by `askgate serve` and `askgate sandbox`;
//! it decides nothing and never sees a token (the sites that log never name one). Beside
//! them, when export is on (`otlp`), the spans of [`crate::trace`] and the decision records go
//! to an OpenTelemetry collector; they are never written to stderr.
//!
//! Map: `otlp` (the `telemetry` section and its exporters), `client` (their HTTP client),
//! `push` (`/metrics` as OTLP metrics).

mod client;
pub mod otlp;
pub mod push;

use opentelemetry::trace::TracerProvider;
use serde::Deserialize;
use tracing_subscriber::filter::{filter_fn, FilterExt};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

pub use otlp::{Exporting, RawTelemetry, Telemetry};

/// `logging` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RawLogging {
    /// `text` (default) or `json`.
    pub format: Option<String>,
    /// A `RUST_LOG`-style filter (`warn`, `info,askgate=debug`); `RUST_LOG` wins.
    pub level: Option<String>,
}

/// How the service's own messages are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// `logging`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logging {
    pub format: LogFormat,
    pub level: String,
}

impl Default for Logging {
    fn default() -> Self {
        Self {
            format: LogFormat::Text,
            level: DEFAULT_LEVEL.to_string(),
        }
    }
}

const DEFAULT_LEVEL: &str = "info";

impl Logging {
    /// The section, checked: `format` is `text` or `json`, `level` a filter `tracing` reads.
    pub fn validate(raw: RawLogging) -> Result<Self, (&'static str, String)> {
        let format = match raw.format.as_deref() {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => {
                return Err((
                    "logging.format",
                    format!("`{other}` is not a format: use `text` or `json`"),
                ))
            }
        };
        let level = raw.level.unwrap_or_else(|| DEFAULT_LEVEL.to_string());
        EnvFilter::try_new(&level).map_err(|error| {
            (
                "logging.level",
                format!(
                    "`{level}` is not a log filter like `warn` or `info,askgate=debug`: {error}"
                ),
            )
        })?;
        Ok(Self { format, level })
    }

    /// Installs the process's subscriber (the first call wins; a second is a no-op, as in
    /// tests that boot several services in one process).
    pub fn install(&self) {
        self.install_with(None);
    }

    /// [`Self::install`], with the spans and decision records going to `exporting`'s
    /// collector.
    pub fn install_with(&self, exporting: Option<&Exporting>) {
        let filter = std::env::var("RUST_LOG")
            .ok()
            .and_then(|filter| EnvFilter::try_new(filter).ok())
            .unwrap_or_else(|| EnvFilter::new(&self.level));
        let layer = match self.format {
            LogFormat::Text => tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_target(true)
                // Colours only for a person at a terminal (a file or a pipe gets plain text).
                .with_ansi(
                    std::io::IsTerminal::is_terminal(&std::io::stderr())
                        && std::env::var_os("NO_COLOR").is_none(),
                )
                .boxed(),
            LogFormat::Json => tracing_subscriber::fmt::layer()
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_writer(std::io::stderr)
                .boxed(),
        };
        // The spans and records for OpenTelemetry are never lines on stderr.
        let own = filter_fn(|meta| !exported(meta.target()));
        let spans = exporting.map(|exporting| {
            crate::trace::sampling::install(exporting.sampling);
            tracing_opentelemetry::layer()
                .with_tracer(exporting.tracer.tracer("askgate"))
                .with_filter(filter_fn(|meta| meta.target() == crate::trace::TARGET))
        });
        let records = exporting
            .and_then(|exporting| exporting.records.as_ref())
            .map(|records| {
                opentelemetry_appender_tracing::layer::OpenTelemetryTracingBridge::new(records)
                    .with_filter(filter_fn(|meta| meta.target() == crate::trace::RECORDS))
            });
        let _already = tracing_subscriber::registry()
            .with(layer.with_filter(filter.and(own)))
            .with(spans)
            .with(records)
            .try_init();
    }
}

/// Whether `target` is one of the OpenTelemetry-only targets.
fn exported(target: &str) -> bool {
    target == crate::trace::TARGET || target == crate::trace::RECORDS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_checked_by_name() {
        assert_eq!(
            Logging::validate(RawLogging::default()),
            Ok(Logging::default())
        );
        let json = Logging::validate(RawLogging {
            format: Some("json".into()),
            level: Some("warn".into()),
        });
        assert_eq!(json.map(|l| l.format), Ok(LogFormat::Json));
        let bad = Logging::validate(RawLogging {
            format: Some("xml".into()),
            level: None,
        });
        assert_eq!(bad.map_err(|(key, _)| key), Err("logging.format"));
    }
}
