//! OpenTelemetry (issue 36 §1) through the real binary: `askgate serve` with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a real OTLP/HTTP receiver in this test. A call
//! held for a human is one trace under the client's `traceparent` — the call's span with its
//! decision attributes, its facts and its log sync — and the approver's answer is another,
//! whose release links back to the held call and whose upstream request carries the context
//! to the upstream (the sandbox's span is its child). On `/mcp` the `traceparent` of the
//! request's `_meta` is the parent, and the wait for the human is a child span. Decision
//! records arrive as OTLP log records when `telemetry.decision_records` is set.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::harness::{main_session, write_args, AGENT, APPROVER};
use crate::support::otlp::{Receiver, Span};

/// `askgate serve` exporting to `receiver`; killed when dropped.
struct Serve {
    child: Child,
    url: String,
    http: reqwest::Client,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    async fn start(receiver: &Receiver, work: &Path) -> Serve {
        let config = work.join("askgate.json");
        let mcp = json!({"approval_wait_seconds": 30, "progress_seconds": 1});
        let settings = json!({"telemetry": {"decision_records": true}, "mcp": mcp});
        std::fs::write(&config, settings.to_string()).unwrap();
        let port = crate::support::free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_askgate"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--config")
            .arg(&config)
            .arg("--log-dir")
            .arg(work.join("logs"))
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url)
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .env("OTEL_BLRP_SCHEDULE_DELAY", "100")
            .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
            .env_remove("OTEL_TRACES_SAMPLER")
            .current_dir(work)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("askgate starts");
        let serve = Serve {
            child,
            url: format!("http://127.0.0.1:{port}"),
            http: reqwest::Client::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        while serve
            .http
            .get(format!("{}/healthz", serve.url))
            .send()
            .await
            .is_err()
        {
            assert!(Instant::now() < deadline, "askgate did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        serve
    }

    async fn post(&self, path: &str, token: &str, parent: &str, body: Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
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
        .post(format!("{}/mcp", serve.url))
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
                .get(format!("{}/v1/approvals", serve.url))
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
