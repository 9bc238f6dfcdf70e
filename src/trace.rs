//! trace: the spans askgate draws for OpenTelemetry and the W3C trace context they carry
//! (issue 36 §1). Spans of [`TARGET`] go to the OTLP exporter only (`server::telemetry`
//! installs it when an endpoint is set). Whether a call is traced is decided once, where it
//! enters ([`Door`], by [`sampling`]): a call that is not sampled draws no span at all and
//! passes its caller's `traceparent` on unchanged; a child span is drawn only inside a traced
//! call. With export off nothing is decided and nothing drawn. This module names the spans
//! and their attributes, takes a caller's `traceparent` (HTTP headers, an MCP request's
//! `_meta`) and puts the current one on an outgoing request. It decides nothing else.
//!
//! Map: `sampling` (the door's decision).

pub mod sampling;

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use opentelemetry::propagation::{Injector, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing::{Instrument, Span};
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub use sampling::Sampling;

/// The target of askgate's own spans: exported over OTLP, never written to stderr.
pub const TARGET: &str = "askgate::trace";

/// The target of decision records exported as OTLP log records (`telemetry.decision_records`).
pub const RECORDS: &str = "askgate::decision_record";

/// Where a caller's W3C context (`traceparent`, `tracestate`) arrived.
#[derive(Clone, Copy)]
pub enum Carrier<'a> {
    Headers(&'a reqwest::header::HeaderMap),
    /// An MCP request's `_meta`.
    Meta(&'a serde_json::Map<String, serde_json::Value>),
}

impl Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match self {
            Carrier::Headers(headers) => headers.get(key).and_then(|value| value.to_str().ok()),
            Carrier::Meta(meta) => meta.get(key).and_then(serde_json::Value::as_str),
        }
    }

    /// The W3C fields it carries (none without a `traceparent`).
    fn fields(&self) -> Fields {
        let mut fields = Fields::new();
        if let Some(parent) = self.get("traceparent") {
            fields.insert("traceparent".to_string(), parent.to_string());
            if let Some(state) = self.get("tracestate") {
                fields.insert("tracestate".to_string(), state.to_string());
            }
        }
        fields
    }
}

/// The W3C fields of one context, by name.
type Fields = HashMap<String, String>;

tokio::task_local! {
    /// The caller's W3C fields within a call that is not sampled: passed on unchanged.
    static PASSTHROUGH: Option<Arc<Fields>>;
}

/// Work entering at a door (a call, an approver's answer, the sandbox's request): traced
/// when [`sampling`] keeps it, under the caller's context; else no span, and the caller's
/// context passed on to the upstream unchanged.
pub struct Door {
    span: Span,
    passthrough: Option<Arc<Fields>>,
}

impl Door {
    /// Work that is not traced and has no context to pass on.
    fn untraced() -> Self {
        Self {
            span: Span::none(),
            passthrough: None,
        }
    }

    fn enter(carrier: Carrier<'_>, draw: impl FnOnce() -> Span) -> Self {
        let Some(sampling) = sampling::current() else {
            return Self::untraced();
        };
        let fields = carrier.fields();
        let context = if fields.is_empty() {
            opentelemetry::Context::new()
        } else {
            TraceContextPropagator::new().extract(&fields)
        };
        let parent = context.span().span_context().clone();
        if !sampling.keeps(&parent) {
            return Self {
                passthrough: parent.is_valid().then(|| Arc::new(fields)),
                ..Self::untraced()
            };
        }
        let span = draw();
        if parent.is_valid() {
            // Fails only when the span is already started with another parent.
            let _ = span.set_parent(context);
        }
        Self {
            span,
            passthrough: None,
        }
    }

    /// The work's span (disabled when it is not traced).
    pub fn span(&self) -> &Span {
        &self.span
    }

    /// Runs `work` in this door's span, or with its caller's context to pass on.
    pub async fn run<F: Future>(self, work: F) -> F::Output {
        PASSTHROUGH
            .scope(self.passthrough, work.instrument(self.span))
            .await
    }
}

/// Keeps the current call's trace (its span, or the context it passes on) with `work` that
/// is spawned to go on without it (an approval's release).
pub fn carried<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let passthrough = PASSTHROUGH.try_with(Clone::clone).ok().flatten();
    PASSTHROUGH.scope(passthrough, work)
}

/// Whether the current span is a traced call's (or one of its children's).
fn in_trace() -> bool {
    let span = Span::current();
    !span.is_disabled() && span.metadata().is_some_and(|meta| meta.target() == TARGET)
}

/// A child span drawn by `draw` inside a traced call; nothing outside one.
fn child(draw: impl FnOnce() -> Span) -> Span {
    if in_trace() {
        draw()
    } else {
        Span::none()
    }
}

/// One call at a front door, named after the GenAI and MCP semantic conventions
/// (`execute_tool ClaudeDesign`; on `/mcp`: `tools/call ClaudeDesign`). Its decision
/// attributes are recorded once decided ([`record_decision`]).
pub fn call(name: &str, door: &str, tool: &str, carrier: Carrier<'_>) -> Door {
    Door::enter(carrier, || {
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
    })
}

/// An approver's answer; the release it starts is its child.
pub fn answer(approval_id: &str, approver: &str, headers: &reqwest::header::HeaderMap) -> Door {
    Door::enter(Carrier::Headers(headers), || {
        tracing::info_span!(
            target: "askgate::trace",
            "askgate.approval.answer",
            otel.kind = "server",
            askgate.approval.id = approval_id,
            askgate.approver = approver,
        )
    })
}

/// The request the sandbox (the upstream's stand-in) serves: traced only when it carried a
/// sampled `traceparent`, so a test's trace shows the context reached the upstream.
pub fn upstream_server(method: &str, path: &str, headers: &reqwest::header::HeaderMap) -> Door {
    if !headers.contains_key("traceparent") {
        return Door::untraced();
    }
    Door::enter(Carrier::Headers(headers), || {
        tracing::info_span!(
            target: "askgate::trace",
            "sandbox",
            otel.name = format!("sandbox {method} {path}"),
            otel.kind = "server",
            http.request.method = method,
            url.path = path,
        )
    })
}

/// The span of an approval's release (its re-decision and run), in the trace of the answer
/// that released it and linked to the held call's span ([`link`]).
pub fn release_span(approval_id: &str) -> Span {
    child(|| {
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
    })
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
    child(|| tracing::info_span!(target: "askgate::trace", "askgate.facts"))
}

/// The child span of writing a record to the decision log durably.
pub fn log_sync_span(kind: &'static str) -> Span {
    child(
        || tracing::info_span!(target: "askgate::trace", "askgate.log.sync", askgate.record = kind),
    )
}

/// The child span of one request to the upstream (W3C context injected within it).
pub fn upstream_span(method: &str, url: &str) -> Span {
    child(|| {
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
    })
}

/// The child span of an MCP request holding a call open for a human's answer.
pub fn wait_span(approval_id: &str) -> Span {
    child(|| {
        tracing::info_span!(
            target: "askgate::trace",
            "askgate.approval.wait",
            askgate.approval.id = approval_id,
            askgate.approval.status = tracing::field::Empty,
        )
    })
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

/// The current context as `traceparent` (and `tracestate`) headers on `request`, so the
/// upstream's spans join the call's trace. Nothing when export is off.
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

/// The W3C fields to send on: the traced span's, else the untraced call's caller's.
fn current_fields() -> Fields {
    if in_trace() {
        return traced_fields();
    }
    PASSTHROUGH
        .try_with(|fields| fields.as_deref().cloned())
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// The current (traced) span's W3C fields.
fn traced_fields() -> Fields {
    let mut fields = Fields::new();
    TraceContextPropagator::new()
        .inject_context(&Span::current().context(), &mut Sink(&mut fields));
    fields
}

/// The current traced call's `traceparent`, kept with a held call so that its release links
/// back to it; `None` when the call is not traced.
pub fn traceparent() -> Option<String> {
    if !in_trace() {
        return None;
    }
    traced_fields().remove("traceparent")
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
    let fields = Fields::from([("traceparent".to_string(), traceparent.to_string())]);
    let context = TraceContextPropagator::new().extract(&fields);
    let linked = context.span().span_context().clone();
    if linked.is_valid() {
        span.add_link(linked);
    }
}

struct Sink<'a>(&'a mut Fields);

impl Injector for Sink<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
}
