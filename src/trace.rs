//! trace: the spans askgate draws for OpenTelemetry and the W3C trace context they carry
//! (issue 36 §1). Spans of [`TARGET`] go to the OTLP exporter only (`server::telemetry`
//! installs it when an endpoint is set); with export off no layer wants them, so a call pays
//! for a disabled span and nothing else. This module names the spans and their attributes,
//! takes a caller's `traceparent` (HTTP headers, an MCP request's `_meta`) and puts the
//! current span's on an outgoing request. It decides nothing.

use std::collections::HashMap;

use opentelemetry::propagation::{Extractor, Injector};
use opentelemetry::trace::TraceContextExt;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The target of askgate's own spans: exported over OTLP, never written to stderr.
pub const TARGET: &str = "askgate::trace";

/// The target of decision records exported as OTLP log records (`telemetry.decision_records`).
pub const RECORDS: &str = "askgate::decision_record";

/// The span of one call at a front door, named after the GenAI and MCP semantic conventions
/// (`execute_tool ClaudeDesign`; on `/mcp`: `tools/call ClaudeDesign`). Its decision
/// attributes are recorded once decided ([`record_decision`]).
pub fn call_span(name: &str, door: &str, tool: &str) -> Span {
    tracing::info_span!(
        target: "askgate::trace",
        "call",
        otel.name = name,
        otel.kind = "server",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        mcp.method.name = tracing::field::Empty,
        mcp.session.id = tracing::field::Empty,
        jsonrpc.request.id = tracing::field::Empty,
        askgate.front_door = door,
        askgate.principal = tracing::field::Empty,
        askgate.acting_user = tracing::field::Empty,
        askgate.attested = tracing::field::Empty,
        askgate.operation = tracing::field::Empty,
        askgate.decision_id = tracing::field::Empty,
        askgate.decision = tracing::field::Empty,
        askgate.policies = tracing::field::Empty,
        askgate.policy_set = tracing::field::Empty,
        askgate.approval.id = tracing::field::Empty,
    )
}

/// The span of an approval's release (its re-decision and run), in the trace of the answer
/// that released it and linked to the held call's span ([`link`]).
pub fn release_span(approval_id: &str) -> Span {
    tracing::info_span!(
        target: "askgate::trace",
        "askgate.approval.release",
        askgate.approval.id = approval_id,
        askgate.operation = tracing::field::Empty,
        askgate.decision_id = tracing::field::Empty,
        askgate.decision = tracing::field::Empty,
        askgate.policies = tracing::field::Empty,
        askgate.policy_set = tracing::field::Empty,
    )
}

/// The span of an approver's answer; the release it starts is its child.
pub fn answer_span(approval_id: &str, approver: &str) -> Span {
    tracing::info_span!(
        target: "askgate::trace",
        "askgate.approval.answer",
        otel.kind = "server",
        askgate.approval.id = approval_id,
        askgate.approver = approver,
    )
}

/// Who the call is for: its principal, the person behind it (their email, when known) and
/// whether the client's hook attested its session (`attested`, `unattested`, …).
pub fn record_caller(span: &Span, principal: &str, person: &str, attestation: &str) {
    if span.is_disabled() {
        return;
    }
    span.record("askgate.principal", principal);
    if !person.is_empty() {
        span.record("askgate.acting_user", person);
    }
    span.record("askgate.attested", attestation);
}

/// The child span of gathering a call's facts (observations upstream included).
pub fn facts_span() -> Span {
    tracing::info_span!(target: "askgate::trace", "askgate.facts")
}

/// The child span of writing a record to the decision log durably.
pub fn log_sync_span(kind: &'static str) -> Span {
    tracing::info_span!(target: "askgate::trace", "askgate.log.sync", askgate.record = kind)
}

/// The child span of one request to the upstream (W3C context injected within it).
pub fn upstream_span(method: &str, url: &str) -> Span {
    let (host, path) = url::Url::parse(url)
        .map(|url| {
            (
                url.host_str().unwrap_or("").to_string(),
                url.path().to_string(),
            )
        })
        .unwrap_or_default();
    tracing::info_span!(
        target: "askgate::trace",
        "askgate.upstream",
        otel.name = format!("{method} {path}"),
        otel.kind = "client",
        http.request.method = method,
        server.address = host,
        url.path = path,
        http.response.status_code = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// The child span of an MCP request holding a call open for a human's answer.
pub fn wait_span(approval_id: &str) -> Span {
    tracing::info_span!(
        target: "askgate::trace",
        "askgate.approval.wait",
        askgate.approval.id = approval_id,
        askgate.approval.status = tracing::field::Empty,
    )
}

/// The server span the sandbox (the upstream's stand-in) draws for a request that carried a
/// `traceparent`: in a trace it shows the context reached the upstream.
pub fn upstream_server_span(
    method: &str,
    path: &str,
    headers: &reqwest::header::HeaderMap,
) -> Span {
    if !headers.contains_key("traceparent") {
        return Span::none();
    }
    let span = tracing::info_span!(
        target: "askgate::trace",
        "sandbox",
        otel.name = format!("sandbox {method} {path}"),
        otel.kind = "server",
        http.request.method = method,
        url.path = path,
    );
    adopt_headers(&span, headers);
    span
}

/// The decision attributes of a call's (or a release's) span.
pub struct Decided<'a> {
    pub decision_id: &'a str,
    pub operation: &'a str,
    pub outcome: &'a str,
    pub policies: &'a [String],
    pub policy_set: &'a str,
}

/// Records `decided` on `span` (a span without these fields ignores them).
pub fn record_decision(span: &Span, decided: &Decided<'_>) {
    if span.is_disabled() {
        return;
    }
    span.record("askgate.decision_id", decided.decision_id);
    span.record("askgate.operation", decided.operation);
    span.record("askgate.decision", decided.outcome);
    span.record("askgate.policies", decided.policies.join(","));
    span.record("askgate.policy_set", decided.policy_set);
}

/// Makes the context in `carrier` (`traceparent`, `tracestate`) the parent of `span`; a
/// missing or malformed `traceparent` leaves the span a root.
fn adopt(span: &Span, carrier: &dyn Extractor) {
    if span.is_disabled() {
        return;
    }
    let context =
        opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(carrier));
    if context.span().span_context().is_valid() {
        // Fails only when the span is already started with another parent.
        let _ = span.set_parent(context);
    }
}

/// The parent named by an HTTP request's `traceparent` header.
pub fn adopt_headers(span: &Span, headers: &reqwest::header::HeaderMap) {
    adopt(span, &HeaderCarrier(headers));
}

/// The parent named by an MCP request's `_meta` (`traceparent`, `tracestate`).
pub fn adopt_meta(span: &Span, meta: &serde_json::Map<String, serde_json::Value>) {
    let fields: HashMap<String, String> = ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|key| {
            let value = meta.get(key)?.as_str()?;
            Some((key.to_string(), value.to_string()))
        })
        .collect();
    adopt(span, &fields);
}

/// The current span's context as `traceparent` (and `tracestate`) headers on `request`, so
/// the upstream's spans join the call's trace. Nothing when export is off.
pub fn inject(request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    current_fields()
        .into_iter()
        .fold(request, |request, (name, value)| {
            request.header(name, value)
        })
}

/// [`inject`] on a built request's headers.
pub fn inject_headers(headers: &mut reqwest::header::HeaderMap) {
    for (name, value) in current_fields() {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes());
        let value = reqwest::header::HeaderValue::from_str(&value);
        if let (Ok(name), Ok(value)) = (name, value) {
            headers.insert(name, value);
        }
    }
}

/// The current span's W3C fields; none when its span is not exported.
fn current_fields() -> HashMap<String, String> {
    let span = Span::current();
    let mut fields = HashMap::new();
    if span.is_disabled() {
        return fields;
    }
    let context = span.context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut Fields(&mut fields));
    });
    fields
}

/// The current span's `traceparent`, kept with a held call so that its release links back
/// to it; `None` when export is off.
pub fn traceparent() -> Option<String> {
    current_fields().remove("traceparent")
}

/// Links `span` to the span `traceparent` names (a held call, from its release: the wait for
/// a human can last minutes, so the two are linked rather than nested).
pub fn link(span: &Span, traceparent: Option<&str>) {
    let Some(traceparent) = traceparent else {
        return;
    };
    if span.is_disabled() {
        return;
    }
    let fields = HashMap::from([("traceparent".to_string(), traceparent.to_string())]);
    let context =
        opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(&fields));
    let linked = context.span().span_context().clone();
    if linked.is_valid() {
        span.add_link(linked);
    }
}

struct HeaderCarrier<'a>(&'a reqwest::header::HeaderMap);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .keys()
            .map(reqwest::header::HeaderName::as_str)
            .collect()
    }
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Injector for Fields<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
}
