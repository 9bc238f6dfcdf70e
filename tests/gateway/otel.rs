//! OpenTelemetry (issue 36 §1) through the real binary: `askgate serve` with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a real OTLP/HTTP receiver in this test. A call
//! held for a human is one trace under the client's `traceparent` — the call's span with its
//! decision attributes, its facts and its log sync — and the approver's answer is another,
//! whose release links back to the held call and whose upstream request carries the context
//! to the upstream (the sandbox's span is its child). On `/mcp` the `traceparent` of the
//! request's `_meta` is the parent, and the wait for the human is a child span. Decision
//! records arrive as OTLP log records when `telemetry.decision_records` is set. A call whose
//! client's trace is not sampled draws no span and passes the client's context on unchanged
//! (issue 36 §3: sampling is decided at the door).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::harness::{main_session, write_args, AGENT, APPROVER};
use crate::support::otlp::{Receiver, Span};
use crate::support::serve::Binary;

/// `askgate serve` exporting to `receiver`, and the HTTP client the test calls it with.
struct Serve {
    binary: Binary,
    http: reqwest::Client,
}

impl Serve {
    async fn start(receiver: &Receiver, work: &Path) -> Serve {
        let config = work.join("askgate.json");
        let mcp = json!({"approval_wait_seconds": 30, "progress_seconds": 1});
        let settings = json!({"telemetry": {"decision_records": true}, "mcp": mcp});
        std::fs::write(&config, settings.to_string()).unwrap();
        let logs = work.join("logs");
        let args = [
            "--config".as_ref(),
            config.as_os_str(),
            "--log-dir".as_ref(),
            logs.as_os_str(),
        ];
        let envs = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
            ("OTEL_BLRP_SCHEDULE_DELAY", "100"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "300"),
        ];
        Serve {
            binary: Binary::spawn(&args, &envs, work).await,
            http: reqwest::Client::new(),
        }
    }

    /// The in-process sandbox's `traceparent` last received (from its stats).
    async fn upstream_traceparent(&self) -> Value {
        let url = format!("{}/_sandbox/stats", self.binary.sandbox_url());
        let stats: Value = self
            .http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        stats["last_traceparent"].clone()
    }

    async fn post(&self, path: &str, token: &str, parent: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.binary.url))
            .bearer_auth(token)
            .header("traceparent", parent)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or_default())
    }
}

/// A client's sampled W3C context: (trace id, its span id, the header).
fn client_context(seed: u8) -> (String, String, String) {
    let trace = format!("{seed:02x}").repeat(16);
    let span = format!("{:02x}", seed.wrapping_add(1)).repeat(8);
    let header = format!("00-{trace}-{span}-01");
    (trace, span, header)
}

fn one<'a>(spans: &'a [Span], what: &str, test: impl Fn(&Span) -> bool) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|span| test(span)).collect();
    assert_eq!(found.len(), 1, "one {what}: {spans:#?}");
    found[0]
}

fn children<'a>(spans: &'a [Span], parent: &Span) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|span| span.trace_id == parent.trace_id && span.parent == parent.span_id)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_a_held_call_is_one_trace_under_the_clients_traceparent_and_its_release_links_back() {
    let receiver = Receiver::start().await;
    let work = tempfile::tempdir().unwrap();
    let serve = Serve::start(&receiver, work.path()).await;
    let (trace, client_span, header) = client_context(0x1a);

    let body = json!({"session": main_session("s-otel"), "input": {"operation": "read_file",
        "arguments": {"project_id": "p1", "path": "index.html"}}});
    let (status, asked) = serve.post("/v1/design/call", AGENT, &header, body).await;
    assert_eq!(status, 202, "{asked}");
    let approval = asked["approval"]["id"].as_str().unwrap().to_string();
    let decision_id = asked["decision_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    let spans = receiver
        .spans_until("held call with its children", |spans| {
            spans.iter().any(|s| s.name == "execute_tool ClaudeDesign")
                && spans.iter().any(|s| s.name == "askgate.log.sync")
        })
        .await;
    let call = one(&spans, "call span", |s| {
        s.name == "execute_tool ClaudeDesign"
    });
    assert_eq!(call.trace_id, trace, "the client's trace");
    assert_eq!(call.parent, client_span, "the client's span is the parent");
    assert_eq!(call.kind, 2, "a server span");
    assert_eq!(call.service, "askgate");
    assert_eq!(call.attribute("gen_ai.tool.name"), "ClaudeDesign");
    assert_eq!(call.attribute("gen_ai.operation.name"), "execute_tool");
    assert_eq!(call.attribute("askgate.front_door"), "http");
    assert_eq!(call.attribute("askgate.decision"), "ask");
    assert_eq!(call.attribute("askgate.operation"), "read_file");
    assert_eq!(call.attribute("askgate.principal"), "demo-agent");
    assert_eq!(call.attribute("askgate.attested"), "none");
    assert_eq!(call.attribute("askgate.approval.id"), approval);
    if !decision_id.is_empty() {
        assert_eq!(call.attribute("askgate.decision_id"), decision_id);
    }
    assert!(
        call.attribute("askgate.policy_set").starts_with("sha256:"),
        "{call:?}"
    );
    assert!(!call.attribute("askgate.policies").is_empty(), "{call:?}");
    let names: Vec<&str> = children(&spans, call)
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert!(names.contains(&"askgate.facts"), "{names:?}");
    assert!(names.contains(&"askgate.log.sync"), "{names:?}");

    // The approver answers under a trace of their own; the release links to the held call.
    let (answer_trace, answer_client, answer_header) = client_context(0x2b);
    let path = format!("/v1/approvals/{approval}/approve");
    let (status, approved) = serve.post(&path, APPROVER, &answer_header, json!({})).await;
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["status"], "completed", "{approved}");
    let spans = receiver
        .spans_until("the release and the upstream's span", |spans| {
            spans.iter().any(|s| s.name.starts_with("sandbox "))
                && spans.iter().any(|s| s.name == "askgate.approval.answer")
        })
        .await;
    let answer = one(&spans, "answer span", |s| {
        s.name == "askgate.approval.answer"
    });
    assert_eq!(answer.trace_id, answer_trace);
    assert_eq!(answer.parent, answer_client);
    assert_eq!(answer.attribute("askgate.approval.id"), approval);
    let release = one(&spans, "release span", |s| {
        s.name == "askgate.approval.release"
    });
    assert_eq!(
        release.parent, answer.span_id,
        "the release is the answer's child"
    );
    assert_eq!(
        release.links,
        vec![(call.trace_id.clone(), call.span_id.clone())],
        "the release links to the held call"
    );
    assert_eq!(
        release.attribute("askgate.decision"),
        "allow",
        "{release:?}"
    );
    let upstream: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("POST ") && s.trace_id == answer_trace)
        .collect();
    assert!(
        !upstream.is_empty(),
        "an upstream request in the answer's trace: {spans:#?}"
    );
    for request in &upstream {
        assert_eq!(request.kind, 3, "a client span");
        assert_eq!(request.attribute("http.request.method"), "POST");
        assert_eq!(request.attribute("http.response.status_code"), "200");
    }
    // The upstream received the context: its span is the request's child.
    let sandbox = spans
        .iter()
        .filter(|s| s.name.starts_with("sandbox "))
        .collect::<Vec<_>>();
    assert!(
        sandbox.iter().any(|s| upstream
            .iter()
            .any(|u| s.parent == u.span_id && s.trace_id == u.trace_id)),
        "the upstream's span is a child of askgate's request: {sandbox:#?}"
    );

    // Every decision record went out as an OTLP log record too (the file log is unchanged).
    let logs = receiver
        .logs_until("the decision records", |logs| {
            logs.iter()
                .filter(|l| l.attribute_is("askgate.record", "decision"))
                .count()
                >= 2
        })
        .await;
    let first = logs
        .iter()
        .find(|l| l.attribute_is("askgate.record", "decision"))
        .unwrap();
    let record: Value = serde_json::from_str(&first.body).expect("the record's JSON line");
    assert_eq!(record["kind"], "decision", "{record}");
    assert!(
        !first.body.contains(AGENT),
        "no token in an exported record"
    );

    // `/metrics` is pushed as OTLP metrics: the ask by its card kind, the answer by action,
    // the decisions by outcome and by determining policy.
    let policy = call
        .attribute("askgate.policies")
        .split(',')
        .next()
        .unwrap_or("")
        .to_string();
    let points = receiver
        .points_until("the pushed metrics", |points| {
            points.iter().any(|p| {
                p.metric == "askgate_approval_answers"
                    && p.attributes.get("action").is_some_and(|a| a == "approved")
                    && p.value >= 1.0
            })
        })
        .await;
    let has = |metric: &str, key: &str, value: &str| {
        points.iter().any(|p| {
            p.metric == metric
                && p.attributes.get(key).is_some_and(|v| v == value)
                && p.value >= 1.0
        })
    };
    assert!(has("askgate_decisions", "outcome", "ask"), "{points:#?}");
    assert!(
        has("askgate_approvals_asked", "kind", "consent"),
        "{points:#?}"
    );
    assert!(
        has("askgate_policy_decisions", "policy", &policy),
        "{policy}: {points:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_an_mcp_call_takes_its_parent_from_meta_and_the_human_wait_is_a_child() {
    let receiver = Receiver::start().await;
    let work = tempfile::tempdir().unwrap();
    let serve = Serve::start(&receiver, work.path()).await;
    let (consent_trace, _, consent_header) = client_context(0x3c);
    let (status, body) = serve
        .post("/v1/design/consent", APPROVER, &consent_header, json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let (trace, client_span, header) = client_context(0x4d);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "ClaudeDesign",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "askgate-tests", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "traceparent": header},
        "arguments": {"operation": "write_files", "arguments": write_args("p1", &["held.html"])}}});
    let request = serve
        .http
        .post(format!("{}/mcp", serve.binary.url))
        .bearer_auth(AGENT)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ClaudeDesign")
        // A header context the `_meta` one wins over.
        .header(
            "traceparent",
            format!("00-{consent_trace}-{}-01", "77".repeat(8)),
        )
        .body(call.to_string())
        .send();
    let approve = async {
        let deadline = Instant::now() + Duration::from_secs(15);
        let id = loop {
            let listed: Value = serve
                .http
                .get(format!("{}/v1/approvals", serve.binary.url))
                .bearer_auth(APPROVER)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if let Some(id) = listed["approvals"][0]["id"].as_str() {
                break id.to_string();
            }
            assert!(Instant::now() < deadline, "no approval held");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let path = format!("/v1/approvals/{id}/approve");
        let (_, _, answer_header) = client_context(0x5e);
        serve.post(&path, APPROVER, &answer_header, json!({})).await
    };
    let (answered, (status, approved)) = tokio::join!(request, approve);
    assert_eq!(status, 200, "{approved}");
    let text = answered.unwrap().text().await.unwrap();
    assert!(text.contains("held.html"), "the held call ran: {text}");

    let spans = receiver
        .spans_until("the MCP call and its wait", |spans| {
            spans.iter().any(|s| s.name == "tools/call ClaudeDesign")
                && spans.iter().any(|s| s.name == "askgate.approval.wait")
        })
        .await;
    let call = one(&spans, "MCP call span", |s| {
        s.name == "tools/call ClaudeDesign"
    });
    assert_eq!(call.trace_id, trace, "the `_meta` traceparent's trace");
    assert_eq!(call.parent, client_span);
    assert_eq!(call.attribute("mcp.method.name"), "tools/call");
    assert_eq!(call.attribute("askgate.front_door"), "mcp");
    assert_eq!(call.attribute("askgate.decision"), "ask");
    let wait = one(&spans, "wait span", |s| s.name == "askgate.approval.wait");
    assert_eq!(wait.parent, call.span_id, "the wait is the call's child");
    assert_eq!(
        wait.attribute("askgate.approval.id"),
        call.attribute("askgate.approval.id")
    );
    assert_eq!(wait.attribute("askgate.approval.status"), "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn i36_a_call_whose_trace_is_not_sampled_draws_no_span_and_passes_the_context_on() {
    let receiver = Receiver::start().await;
    let work = tempfile::tempdir().unwrap();
    let serve = Serve::start(&receiver, work.path()).await;
    let (status, body) = serve
        .post("/v1/design/consent", APPROVER, "", json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let read = |session: &str| {
        json!({"session": main_session(session), "input": {"operation": "read_file",
            "arguments": {"project_id": "p1", "path": "index.html"}}})
    };

    // The client's trace is not sampled (flags 00): askgate draws nothing and passes the
    // client's context to the upstream as it came.
    let (unsampled_trace, _, sampled_header) = client_context(0x6f);
    let unsampled_header = sampled_header.replace("-01", "-00");
    let (status, body) = serve
        .post(
            "/v1/design/call",
            AGENT,
            &unsampled_header,
            read("s-unsampled"),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serve.upstream_traceparent().await, json!(unsampled_header));

    // A sampled call after it: its spans arrive, and none of the unsampled call's did.
    let (trace, client_span, header) = client_context(0x70);
    let (status, body) = serve
        .post("/v1/design/call", AGENT, &header, read("s-sampled"))
        .await;
    assert_eq!(status, 200, "{body}");
    let spans = receiver
        .spans_until("the sampled call and its upstream request", |spans| {
            spans
                .iter()
                .any(|s| s.trace_id == trace && s.name.starts_with("sandbox "))
                && spans.iter().any(|s| s.name == "execute_tool ClaudeDesign")
        })
        .await;
    let unsampled: Vec<&Span> = spans
        .iter()
        .filter(|s| s.trace_id == unsampled_trace)
        .collect();
    assert!(
        unsampled.is_empty(),
        "spans of an unsampled call: {unsampled:#?}"
    );
    let call = one(&spans, "the sampled call's span", |s| {
        s.name == "execute_tool ClaudeDesign"
    });
    assert_eq!(call.parent, client_span);
    // The sampled call's upstream request carried askgate's own span, not the client's.
    let sent = serve.upstream_traceparent().await;
    let sent = sent.as_str().unwrap_or_default();
    assert!(sent.starts_with(&format!("00-{trace}-")), "{sent}");
    assert!(!sent.contains(&client_span), "{sent}");
}
