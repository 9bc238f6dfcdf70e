//! server::telemetry::otlp: the `telemetry` section and the OpenTelemetry export it turns on
//! (issue 36 §1) — the service's spans (`crate::trace`) over OTLP/HTTP with protobuf, and,
//! when `decision_records` is set, every decision-log record as an OTLP log record (the file
//! log stays the record of truth). Off by default; an endpoint turns it on, from the section
//! or from the standard variables, which win as operators expect:
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`), `OTEL_TRACES_SAMPLER`(`_ARG`:
//! `always_on`, `always_off`, `traceidratio` and their `parentbased_` forms, decided by askgate
//! at the door, `crate::trace::sampling`),
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_BSP_*`; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off.
//! `/metrics` is pushed as OTLP metrics too (`push`; `OTEL_METRICS_EXPORTER=none` stops it).
//! Queues are the SDK's bounded batch queues (2,048 spans by default); a collector that is
//! away loses spans, never a decision.

use opentelemetry::KeyValue;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use serde::Deserialize;

use super::client::Client;
use crate::trace::Sampling;

/// `telemetry` as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RawTelemetry {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`); the signal paths
    /// (`/v1/traces`, `/v1/logs`) are added. `OTEL_EXPORTER_OTLP_ENDPOINT` wins.
    pub endpoint: Option<String>,
    /// The share of new traces kept, 0 to 1 (default [`DEFAULT_RATIO`]); a call whose client
    /// sent a sampled `traceparent` is kept whatever the ratio. `OTEL_TRACES_SAMPLER` wins.
    pub sample_ratio: Option<f64>,
    /// Also export each decision-log record as an OTLP log record (default `false`).
    pub decision_records: Option<bool>,
}

/// The share of new traces kept when nothing says otherwise: one call in ten.
pub const DEFAULT_RATIO: f64 = 0.1;

/// `telemetry`, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Telemetry {
    pub endpoint: Option<String>,
    pub sample_ratio: f64,
    pub decision_records: bool,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self {
            endpoint: None,
            sample_ratio: DEFAULT_RATIO,
            decision_records: false,
        }
    }
}

/// Where and how to export, once the section and the variables are read.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    /// The section's base URL, when no variable names one (else the SDK reads the variables).
    pub endpoint: Option<String>,
    /// Whether `/metrics` is pushed too (unless `OTEL_METRICS_EXPORTER=none`).
    pub metrics: bool,
    /// How calls are sampled (`OTEL_TRACES_SAMPLER`, else `sample_ratio` parent-based).
    pub sampling: Sampling,
    pub decision_records: bool,
}

impl Telemetry {
    /// The section, checked: the endpoint an `http(s)` URL, the ratio within 0 to 1.
    pub fn validate(raw: RawTelemetry) -> Result<Self, (&'static str, String)> {
        if let Some(endpoint) = &raw.endpoint {
            let url = url::Url::parse(endpoint).map_err(|error| {
                (
                    "telemetry.endpoint",
                    format!("`{endpoint}` is not a URL: {error}"),
                )
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err((
                    "telemetry.endpoint",
                    format!("`{endpoint}` is not an OTLP/HTTP endpoint: use http:// or https://"),
                ));
            }
        }
        let sample_ratio = raw.sample_ratio.unwrap_or(DEFAULT_RATIO);
        if !(0.0..=1.0).contains(&sample_ratio) {
            return Err((
                "telemetry.sample_ratio",
                format!("{sample_ratio} is not a share of traces: use a number from 0 to 1"),
            ));
        }
        Ok(Self {
            endpoint: raw.endpoint,
            sample_ratio,
            decision_records: raw.decision_records.unwrap_or(false),
        })
    }

    /// What to export with the variables `get` reads: `None` when export is off, an error
    /// naming the variable when one asks for what askgate does not speak.
    pub fn export(&self, get: impl Fn(&str) -> Option<String>) -> Result<Option<Export>, String> {
        let set = |name: &str| get(name).filter(|value| !value.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|value| value.eq_ignore_ascii_case("true"))
            || set("OTEL_TRACES_EXPORTER").is_some_and(|value| value == "none")
        {
            return Ok(None);
        }
        for name in [
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        ] {
            if let Some(protocol) = set(name) {
                if protocol != "http/protobuf" {
                    return Err(format!(
                        "{name}={protocol}: askgate exports OTLP over HTTP with protobuf only; \
                         set http/protobuf and the collector's HTTP port (4318 by default)"
                    ));
                }
            }
        }
        let from_env = set("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
            || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some();
        if !from_env && self.endpoint.is_none() {
            return Ok(None);
        }
        Ok(Some(Export {
            endpoint: (!from_env).then(|| self.endpoint.clone()).flatten(),
            metrics: set("OTEL_METRICS_EXPORTER").is_none_or(|value| value != "none"),
            sampling: match set("OTEL_TRACES_SAMPLER") {
                Some(sampler) => sampler_named(&sampler, set("OTEL_TRACES_SAMPLER_ARG"))?,
                None => Sampling::parent_based(self.sample_ratio),
            },
            decision_records: self.decision_records,
        }))
    }
}

/// The sampler `OTEL_TRACES_SAMPLER` names, with its `_ARG` (a ratio, 1.0 when unset).
fn sampler_named(name: &str, arg: Option<String>) -> Result<Sampling, String> {
    let ratio = || match &arg {
        None => Ok(1.0),
        Some(arg) => arg
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|ratio| (0.0..=1.0).contains(ratio))
            .ok_or_else(|| {
                format!("OTEL_TRACES_SAMPLER_ARG={arg}: use a share of traces from 0 to 1")
            }),
    };
    let (parent_based, ratio) = match name.trim() {
        "always_on" => (false, 1.0),
        "always_off" => (false, 0.0),
        "traceidratio" => (false, ratio()?),
        "parentbased_always_on" => (true, 1.0),
        "parentbased_always_off" => (true, 0.0),
        "parentbased_traceidratio" => (true, ratio()?),
        other => {
            return Err(format!(
                "OTEL_TRACES_SAMPLER={other}: askgate samples with always_on, always_off, \
                 traceidratio and their parentbased_ forms"
            ))
        }
    };
    Ok(Sampling {
        parent_based,
        ratio,
    })
}

/// The running exporters; flushed and stopped by [`Exporting::shutdown`].
pub struct Exporting {
    /// Decided at the door; the SDK keeps every span askgate draws.
    pub sampling: Sampling,
    pub tracer: SdkTracerProvider,
    pub records: Option<SdkLoggerProvider>,
    pub meters: Option<SdkMeterProvider>,
}

impl Exporting {
    /// Builds the exporters; their requests run on `runtime`.
    pub fn start(export: &Export, runtime: tokio::runtime::Handle) -> Result<Self, String> {
        let client = Client::new(runtime);
        let mut spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_protocol(Protocol::HttpBinary);
        if let Some(base) = &export.endpoint {
            spans = spans.with_endpoint(signal(base, "traces"));
        }
        let spans = spans
            .build()
            .map_err(|error| format!("cannot export traces: {error}"))?;
        let resource = resource();
        let tracer = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_sampler(Sampler::AlwaysOn)
            .with_resource(resource.clone());
        let meters = if export.metrics {
            let mut metrics = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_http_client(client.clone())
                .with_protocol(Protocol::HttpBinary);
            if let Some(base) = &export.endpoint {
                metrics = metrics.with_endpoint(signal(base, "metrics"));
            }
            let metrics = metrics
                .build()
                .map_err(|error| format!("cannot export metrics: {error}"))?;
            Some(
                SdkMeterProvider::builder()
                    .with_periodic_exporter(metrics)
                    .with_resource(resource.clone())
                    .build(),
            )
        } else {
            None
        };
        let records = if export.decision_records {
            let mut logs = opentelemetry_otlp::LogExporter::builder()
                .with_http()
                .with_http_client(client)
                .with_protocol(Protocol::HttpBinary);
            if let Some(base) = &export.endpoint {
                logs = logs.with_endpoint(signal(base, "logs"));
            }
            let logs = logs
                .build()
                .map_err(|error| format!("cannot export decision records: {error}"))?;
            Some(
                SdkLoggerProvider::builder()
                    .with_batch_exporter(logs)
                    .with_resource(resource)
                    .build(),
            )
        } else {
            None
        };
        Ok(Self {
            sampling: export.sampling,
            tracer: tracer.build(),
            records,
            meters,
        })
    }

    /// Exports what is queued and stops (at the end of `serve`).
    pub fn shutdown(&self) {
        if let Err(error) = self.tracer.shutdown() {
            tracing::warn!(%error, "spans not exported at shutdown");
        }
        if let Some(records) = &self.records {
            if let Err(error) = records.shutdown() {
                tracing::warn!(%error, "decision records not exported at shutdown");
            }
        }
        if let Some(meters) = &self.meters {
            if let Err(error) = meters.shutdown() {
                tracing::warn!(%error, "metrics not exported at shutdown");
            }
        }
    }
}

/// `base` with the signal's path (`http://c:4318` → `http://c:4318/v1/traces`).
fn signal(base: &str, name: &str) -> String {
    format!("{}/v1/{name}", base.trim_end_matches('/'))
}

/// Who exports: `askgate` (unless `OTEL_SERVICE_NAME` says otherwise) at this version, with
/// what `OTEL_RESOURCE_ATTRIBUTES` adds.
fn resource() -> Resource {
    let builder = Resource::builder();
    let builder = if std::env::var_os("OTEL_SERVICE_NAME").is_some() {
        builder
    } else {
        builder.with_service_name("askgate")
    };
    builder
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn export_is_off_until_an_endpoint_is_named() {
        let section = Telemetry::default();
        assert_eq!(section.export(vars(&[])), Ok(None));
        let on = section.export(vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]));
        assert_eq!(
            on,
            Ok(Some(Export {
                endpoint: None,
                metrics: true,
                sampling: Sampling::parent_based(DEFAULT_RATIO),
                decision_records: false
            }))
        );
        let off = section.export(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ]));
        assert_eq!(off, Ok(None));
    }

    #[test]
    fn the_variables_win_over_the_section() {
        let section = Telemetry::validate(RawTelemetry {
            endpoint: Some("http://section:4318".into()),
            sample_ratio: Some(0.5),
            decision_records: Some(true),
        })
        .unwrap_or_default();
        let export = section.export(vars(&[]));
        assert_eq!(
            export.map(|e| e.map(|e| (e.endpoint, e.sampling))),
            Ok(Some((
                Some("http://section:4318".into()),
                Sampling::parent_based(0.5)
            )))
        );
        let export = section.export(vars(&[
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://env:4318/v1/traces",
            ),
            ("OTEL_TRACES_SAMPLER", "always_on"),
        ]));
        let always = Sampling {
            parent_based: false,
            ratio: 1.0,
        };
        assert_eq!(
            export.map(|e| e.map(|e| (e.endpoint, e.sampling))),
            Ok(Some((None, always)))
        );
    }

    #[test]
    fn what_askgate_does_not_speak_is_refused_by_name() {
        let grpc = Telemetry::default().export(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]));
        assert!(grpc.is_err_and(|message| message.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc")));
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        let remote = Telemetry::default()
            .export(vars(&[endpoint, ("OTEL_TRACES_SAMPLER", "jaeger_remote")]));
        assert!(remote.is_err_and(|message| message.contains("OTEL_TRACES_SAMPLER=jaeger_remote")));
        let arg = Telemetry::default().export(vars(&[
            endpoint,
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "2"),
        ]));
        assert!(arg.is_err_and(|message| message.contains("OTEL_TRACES_SAMPLER_ARG=2")));
        let quarter = Telemetry::default().export(vars(&[
            endpoint,
            ("OTEL_TRACES_SAMPLER", "traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
        ]));
        let expected = Sampling {
            parent_based: false,
            ratio: 0.25,
        };
        assert_eq!(quarter.map(|e| e.map(|e| e.sampling)), Ok(Some(expected)));
        let ratio = Telemetry::validate(RawTelemetry {
            sample_ratio: Some(1.5),
            ..RawTelemetry::default()
        });
        assert_eq!(ratio.map_err(|(key, _)| key), Err("telemetry.sample_ratio"));
        let scheme = Telemetry::validate(RawTelemetry {
            endpoint: Some("grpc://c:4317".into()),
            ..RawTelemetry::default()
        });
        assert_eq!(scheme.map_err(|(key, _)| key), Err("telemetry.endpoint"));
    }
}
