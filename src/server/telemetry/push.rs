//! server::telemetry::push: `/metrics` pushed as OTLP metrics when export is on (issue 36 §1).
//! One source of truth: the same OpenMetrics text `/metrics` serves is read every
//! [`REFRESH`] on the runtime, and each of its families is an observable instrument of the same
//! name whose callback reports the last reading — counters as cumulative sums (`_total`
//! dropped, as OpenTelemetry names them), gauges as gauges, a histogram as its `_sum` and
//! `_count` (its buckets stay in `/metrics`). The SDK's periodic reader exports them every
//! `OTEL_METRIC_EXPORT_INTERVAL` (60 s by default). Nothing here is on a call's path.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use opentelemetry::metrics::{Meter, MeterProvider};
use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::SdkMeterProvider;

/// How often `/metrics`' text is read for the next export.
pub const REFRESH: Duration = Duration::from_secs(1);

/// A family of `/metrics`, as its `# TYPE` line names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: String,
    pub kind: Kind,
    pub help: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One sample line: its metric name (`askgate_decisions_total`), labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// A reading of `/metrics`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Reading {
    pub families: Vec<Family>,
    pub samples: Vec<Sample>,
}

impl Reading {
    /// Parses OpenMetrics (or Prometheus) text; a line it does not understand is skipped.
    pub fn parse(text: &str) -> Reading {
        let mut reading = Reading::default();
        let mut help = std::collections::HashMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                if let Some((name, text)) = rest.split_once(' ') {
                    help.insert(name.to_string(), text.to_string());
                }
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let mut words = rest.split_whitespace();
                let (Some(name), Some(kind)) = (words.next(), words.next()) else {
                    continue;
                };
                let kind = match kind {
                    "counter" => Kind::Counter,
                    "gauge" => Kind::Gauge,
                    "histogram" => Kind::Histogram,
                    _ => continue,
                };
                reading.families.push(Family {
                    name: name.to_string(),
                    kind,
                    help: help.get(name).cloned().unwrap_or_default(),
                });
            } else if !line.starts_with('#') && !line.trim().is_empty() {
                if let Some(sample) = sample(line) {
                    reading.samples.push(sample);
                }
            }
        }
        reading
    }

    /// The samples named `name`.
    fn named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples
            .iter()
            .filter(move |sample| sample.name == name)
    }
}

/// `name{a="x",b="y"} value [timestamp]` or `name value`.
fn sample(line: &str) -> Option<Sample> {
    let (name, labels, rest) = match line.find('{') {
        Some(open) => {
            let close = line.rfind('}')?;
            let name = line.get(..open)?;
            let labels = labels(line.get(open + 1..close)?)?;
            (name, labels, line.get(close + 1..)?)
        }
        None => {
            let (name, rest) = line.split_once(' ')?;
            (name, Vec::new(), rest)
        }
    };
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        other => other.parse().ok()?,
    };
    Some(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// `a="x",b="y\"z"` into pairs (escapes `\"`, `\\` and `\n` undone).
fn labels(text: &str) -> Option<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek() == Some(&',') || chars.peek() == Some(&' ') {
            chars.next();
        }
        if chars.peek().is_none() {
            return Some(pairs);
        }
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if chars.next() != Some('"') {
            return None;
        }
        let mut value = String::new();
        loop {
            match chars.next()? {
                '"' => break,
                '\\' => match chars.next()? {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                other => value.push(other),
            }
        }
        pairs.push((key.trim().to_string(), value));
    }
}

/// The instruments over the last reading; dropped with the meter provider.
pub struct Push {
    reading: Arc<ArcSwap<Reading>>,
    meter: Meter,
    /// The families with an instrument (a labelled family appears with its first series).
    registered: std::collections::HashSet<String>,
}

impl Push {
    /// The instruments of `first`'s families on `provider`.
    pub fn start(provider: &SdkMeterProvider, first: Reading) -> Push {
        let mut push = Push {
            reading: Arc::new(ArcSwap::from_pointee(Reading::default())),
            meter: provider.meter("askgate"),
            registered: std::collections::HashSet::new(),
        };
        push.update(first);
        push
    }

    /// Takes a new reading (every [`REFRESH`]); a family seen for the first time gets its
    /// instrument.
    pub fn update(&mut self, reading: Reading) {
        for family in &reading.families {
            if self.registered.insert(family.name.clone()) {
                instruments(&self.meter, family, &self.reading);
            }
        }
        self.reading.store(Arc::new(reading));
    }
}

fn instruments(meter: &Meter, family: &Family, reading: &Arc<ArcSwap<Reading>>) {
    let report = |series: String| {
        let reading = reading.clone();
        move |observer: &dyn opentelemetry::metrics::AsyncInstrument<f64>| {
            for sample in reading.load().named(&series) {
                let attributes: Vec<KeyValue> = sample
                    .labels
                    .iter()
                    .map(|(key, value)| KeyValue::new(key.clone(), value.clone()))
                    .collect();
                observer.observe(sample.value, &attributes);
            }
        }
    };
    let name = family.name.clone();
    let help = family.help.clone();
    match family.kind {
        Kind::Counter => {
            meter
                .f64_observable_counter(name.clone())
                .with_description(help)
                .with_callback(report(format!("{name}_total")))
                .build();
        }
        Kind::Gauge => {
            meter
                .f64_observable_gauge(name.clone())
                .with_description(help)
                .with_callback(report(name))
                .build();
        }
        Kind::Histogram => {
            for part in ["sum", "count"] {
                meter
                    .f64_observable_counter(format!("{name}_{part}"))
                    .with_description(help.clone())
                    .with_callback(report(format!("{name}_{part}")))
                    .build();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_of_metrics_reads_as_families_and_samples() {
        let text = "# HELP askgate_decisions Decisions by tool.\n\
                    # TYPE askgate_decisions counter\n\
                    askgate_decisions_total{tool=\"ClaudeDesign\",outcome=\"ask\"} 3\n\
                    # TYPE askgate_pending_approvals gauge\n\
                    askgate_pending_approvals 2\n\
                    # TYPE askgate_decision_seconds histogram\n\
                    askgate_decision_seconds_bucket{le=\"+Inf\"} 4\n\
                    askgate_decision_seconds_sum 0.5\n\
                    askgate_decision_seconds_count 4\n\
                    weird_total{a=\"x\\\"y\"} 1\n\
                    # EOF\n";
        let reading = Reading::parse(text);
        assert_eq!(
            reading
                .families
                .iter()
                .map(|f| (f.name.as_str(), f.kind))
                .collect::<Vec<_>>(),
            [
                ("askgate_decisions", Kind::Counter),
                ("askgate_pending_approvals", Kind::Gauge),
                ("askgate_decision_seconds", Kind::Histogram),
            ]
        );
        assert_eq!(
            reading.families.first().map(|f| f.help.as_str()),
            Some("Decisions by tool.")
        );
        let decisions: Vec<_> = reading.named("askgate_decisions_total").collect();
        assert_eq!(decisions.len(), 1);
        assert_eq!(
            decisions.first().map(|s| (s.labels.clone(), s.value)),
            Some((
                vec![
                    ("tool".to_string(), "ClaudeDesign".to_string()),
                    ("outcome".to_string(), "ask".to_string())
                ],
                3.0
            ))
        );
        let bucket: Vec<_> = reading.named("askgate_decision_seconds_bucket").collect();
        assert_eq!(
            bucket.first().map(|s| (s.labels.clone(), s.value)),
            Some((vec![("le".to_string(), "+Inf".to_string())], 4.0))
        );
        let weird: Vec<_> = reading.named("weird_total").collect();
        assert_eq!(
            weird.first().map(|s| s.labels.clone()),
            Some(vec![("a".to_string(), "x\"y".to_string())])
        );
    }
}
