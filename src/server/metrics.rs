//! server::metrics: counters and histograms rendered as Prometheus text — decisions by tool,
//! operation and outcome, decision latency, upstream errors, pending approvals.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use dashmap::DashMap;

/// Upper bounds (seconds) of the latency buckets.
const BUCKETS: [f64; 12] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 0.5, 2.0,
];

#[derive(Debug, Default)]
pub struct Histogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Histogram {
    pub fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            if seconds <= *bound {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {}",
                count.load(Ordering::Relaxed)
            );
        }
        let total = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {total}");
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {sum}");
        let _ = writeln!(out, "{name}_count{braces} {total}");
    }
}

#[derive(Debug, Default)]
pub struct Metrics {
    decisions: DashMap<(String, String, String), AtomicU64>,
    upstream_errors: DashMap<String, AtomicU64>,
    shadow: DashMap<&'static str, AtomicU64>,
    pub decision_latency: Histogram,
    pub upstream_latency: Histogram,
    /// 2026-07-28 approval links: offered, redeemed by a retry, refused.
    approval_links: [AtomicU64; 3],
}

/// A step of a 2026-07-28 approval link (`server::mcp::link`).
#[derive(Debug, Clone, Copy)]
pub enum LinkStep {
    Offered = 0,
    Redeemed = 1,
    Refused = 2,
}

impl Metrics {
    pub fn decision_made(&self, tool: &str, operation: &str, outcome: &str, elapsed: Duration) {
        let key = (tool.to_string(), operation.to_string(), outcome.to_string());
        self.decisions
            .entry(key)
            .or_default()
            .fetch_add(1, Ordering::Relaxed);
        self.decision_latency.observe(elapsed);
    }

    pub fn upstream_failed(&self, kind: &str) {
        self.upstream_errors
            .entry(kind.to_string())
            .or_default()
            .fetch_add(1, Ordering::Relaxed);
    }

    pub fn approval_link(&self, step: LinkStep) {
        if let Some(count) = self.approval_links.get(step as usize) {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A shadow policy set agreed (or not) with the live one.
    pub fn shadow_compared(&self, agreed: bool) {
        let key = if agreed { "agree" } else { "disagree" };
        self.shadow
            .entry(key)
            .or_default()
            .fetch_add(1, Ordering::Relaxed);
    }

    pub fn render(&self, pending_approvals: usize, webhook: &super::notify::Deliveries) -> String {
        let mut out = String::new();
        out.push_str("# HELP askgate_decisions_total Decisions by tool, operation and outcome.\n# TYPE askgate_decisions_total counter\n");
        let mut rows: Vec<_> = self
            .decisions
            .iter()
            .map(|entry| (entry.key().clone(), entry.value().load(Ordering::Relaxed)))
            .collect();
        rows.sort();
        for ((tool, operation, outcome), count) in rows {
            let _ = writeln!(out, "askgate_decisions_total{{tool=\"{}\",operation=\"{}\",outcome=\"{outcome}\"}} {count}", escape(&tool), escape(&operation));
        }
        out.push_str("# HELP askgate_decision_seconds Time to gather facts and decide.\n# TYPE askgate_decision_seconds histogram\n");
        self.decision_latency
            .render(&mut out, "askgate_decision_seconds", "");
        out.push_str("# HELP askgate_upstream_seconds Time of upstream calls.\n# TYPE askgate_upstream_seconds histogram\n");
        self.upstream_latency
            .render(&mut out, "askgate_upstream_seconds", "");
        out.push_str("# HELP askgate_upstream_errors_total Upstream failures by kind.\n# TYPE askgate_upstream_errors_total counter\n");
        let mut errors: Vec<_> = self
            .upstream_errors
            .iter()
            .map(|e| (e.key().clone(), e.value().load(Ordering::Relaxed)))
            .collect();
        errors.sort();
        for (kind, count) in errors {
            let _ = writeln!(
                out,
                "askgate_upstream_errors_total{{kind=\"{}\"}} {count}",
                escape(&kind)
            );
        }
        out.push_str("# HELP askgate_shadow_decisions_total Shadow policy comparisons.\n# TYPE askgate_shadow_decisions_total counter\n");
        for key in ["agree", "disagree"] {
            let count = self
                .shadow
                .get(key)
                .map_or(0, |count| count.load(Ordering::Relaxed));
            let _ = writeln!(
                out,
                "askgate_shadow_decisions_total{{result=\"{key}\"}} {count}"
            );
        }
        out.push_str("# HELP askgate_pending_approvals Approvals waiting for a human (expired ones not counted).\n# TYPE askgate_pending_approvals gauge\n");
        let _ = writeln!(out, "askgate_pending_approvals {pending_approvals}");
        out.push_str("# HELP askgate_webhook_messages_total Approval webhook messages by result.\n# TYPE askgate_webhook_messages_total counter\n");
        for (result, count) in [
            ("delivered", &webhook.delivered),
            ("failed", &webhook.failed),
            ("dropped", &webhook.dropped),
        ] {
            let count = count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "askgate_webhook_messages_total{{result=\"{result}\"}} {count}"
            );
        }
        out.push_str("# HELP askgate_webhook_attempt_failures_total Webhook attempts that failed (each retry counts).\n# TYPE askgate_webhook_attempt_failures_total counter\n");
        let failures = webhook.attempt_failures.load(Ordering::Relaxed);
        let _ = writeln!(out, "askgate_webhook_attempt_failures_total {failures}");
        out.push_str("# HELP askgate_mcp_approval_links_total 2026-07-28 approval links (input_required) by step.\n# TYPE askgate_mcp_approval_links_total counter\n");
        for (step, count) in ["offered", "redeemed", "refused"]
            .iter()
            .zip(&self.approval_links)
        {
            let count = count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "askgate_mcp_approval_links_total{{step=\"{step}\"}} {count}"
            );
        }
        out
    }
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
