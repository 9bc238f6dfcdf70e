//! An OTLP/HTTP receiver for the tests: a collector's `/v1/traces` and `/v1/logs` on a
//! loopback port, decoding what the service exports (protobuf, as OpenTelemetry's own
//! `opentelemetry-proto` types read it) and keeping the spans and log records.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use axum::Router;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as Number;
use opentelemetry_proto::tonic::metrics::v1::NumberDataPoint;
use prost::Message;

/// A span as received: ids in hex, attributes as text.
#[derive(Debug, Clone)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    /// The parent's span id ("" for a root).
    pub parent: String,
    pub name: String,
    /// `SpanKind` as the protocol numbers it (2 server, 3 client).
    pub kind: i32,
    pub attributes: BTreeMap<String, String>,
    /// The spans this one links to, as (trace id, span id).
    pub links: Vec<(String, String)>,
    /// The resource's `service.name`.
    pub service: String,
}

impl Span {
    pub fn attribute(&self, key: &str) -> &str {
        self.attributes.get(key).map(String::as_str).unwrap_or("")
    }
}

/// A log record as received: its body and attributes.
#[derive(Debug, Clone)]
pub struct LogRecord {
    pub body: String,
    pub attributes: BTreeMap<String, String>,
}

impl LogRecord {
    pub fn attribute_is(&self, key: &str, value: &str) -> bool {
        self.attributes.get(key).is_some_and(|found| found == value)
    }
}

/// A metric's data point as received (sums and gauges): its name, attributes and value.
#[derive(Debug, Clone)]
pub struct Point {
    pub metric: String,
    pub attributes: BTreeMap<String, String>,
    pub value: f64,
}

#[derive(Default)]
struct Received {
    spans: Mutex<Vec<Span>>,
    logs: Mutex<Vec<LogRecord>>,
    points: Mutex<Vec<Point>>,
}

/// The receiver; it stops with the test's runtime.
pub struct Receiver {
    /// The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    pub url: String,
    received: Arc<Received>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let received = Arc::new(Received::default());
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .route("/v1/logs", post(logs))
            .route("/v1/metrics", post(metrics))
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, received }
    }

    /// The spans received once `done` holds of them (within 20 s; else the test fails and
    /// shows what came).
    pub async fn spans_until(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        until(&self.received.spans, what, done).await
    }

    /// The log records received once `done` holds of them (within 20 s).
    pub async fn logs_until(
        &self,
        what: &str,
        done: impl Fn(&[LogRecord]) -> bool,
    ) -> Vec<LogRecord> {
        until(&self.received.logs, what, done).await
    }

    /// The metric points received once `done` holds of them (within 20 s).
    pub async fn points_until(&self, what: &str, done: impl Fn(&[Point]) -> bool) -> Vec<Point> {
        until(&self.received.points, what, done).await
    }
}

/// What `received` holds once `done` holds of it, within 20 s.
async fn until<T: Clone + std::fmt::Debug>(
    received: &Mutex<Vec<T>>,
    what: &str,
    done: impl Fn(&[T]) -> bool,
) -> Vec<T> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = received.lock().unwrap().clone();
        if done(&now) {
            return now;
        }
        assert!(
            Instant::now() < deadline,
            "no {what} within 20 s; received: {now:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn traces(State(received): State<Arc<Received>>, body: Bytes) -> Vec<u8> {
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP trace export");
    let mut spans = received.spans.lock().unwrap();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .as_ref()
            .map(|resource| attributes(&resource.attributes))
            .and_then(|attributes| attributes.get("service.name").cloned())
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                spans.push(Span {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    attributes: attributes(&span.attributes),
                    links: span
                        .links
                        .iter()
                        .map(|link| (hex(&link.trace_id), hex(&link.span_id)))
                        .collect(),
                    service: service.clone(),
                });
            }
        }
    }
    Vec::new()
}

async fn metrics(State(received): State<Arc<Received>>, body: Bytes) -> Vec<u8> {
    let request = ExportMetricsServiceRequest::decode(body).expect("an OTLP metrics export");
    let mut points = received.points.lock().unwrap();
    for resource in request.resource_metrics {
        for scope in resource.scope_metrics {
            for metric in scope.metrics {
                let numbers: &[NumberDataPoint] = match &metric.data {
                    Some(Data::Sum(sum)) => &sum.data_points,
                    Some(Data::Gauge(gauge)) => &gauge.data_points,
                    _ => &[],
                };
                for point in numbers {
                    let value = match point.value {
                        Some(Number::AsDouble(value)) => value,
                        Some(Number::AsInt(value)) => value as f64,
                        None => continue,
                    };
                    points.push(Point {
                        metric: metric.name.clone(),
                        attributes: attributes(&point.attributes),
                        value,
                    });
                }
            }
        }
    }
    Vec::new()
}

async fn logs(State(received): State<Arc<Received>>, body: Bytes) -> Vec<u8> {
    let request = ExportLogsServiceRequest::decode(body).expect("an OTLP logs export");
    let mut logs = received.logs.lock().unwrap();
    for resource in request.resource_logs {
        for scope in resource.scope_logs {
            for record in scope.log_records {
                logs.push(LogRecord {
                    body: record.body.as_ref().map(text).unwrap_or_default(),
                    attributes: attributes(&record.attributes),
                });
            }
        }
    }
    Vec::new()
}

fn attributes(pairs: &[KeyValue]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|pair| {
            let value = pair.value.as_ref().map(text).unwrap_or_default();
            (pair.key.clone(), value)
        })
        .collect()
}

fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(Any::StringValue(text)) => text.clone(),
        Some(Any::BoolValue(flag)) => flag.to_string(),
        Some(Any::IntValue(number)) => number.to_string(),
        Some(Any::DoubleValue(number)) => number.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
