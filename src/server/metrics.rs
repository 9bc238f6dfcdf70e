//! server::metrics: the service's own metrics in a `prometheus-client` registry — decisions by
//! tool, operation and outcome, decision and upstream latency, upstream errors by kind, shadow
//! policy comparisons and flips, decisions by determining policy, asks by card kind,
//! 2026-07-28 approval links, MCP calls by the path that served them — and
//! `/metrics`' text (OpenMetrics), to which a scrape adds what it reads from others (`scraped`:
//! pending approvals, the webhook, the decision log). Counting is atomic: a call finds its
//! labelled counter under a read lock at most, and never waits on a scrape.
//!
//! Map: `histogram` (the latency histogram of atomics), `scraped` (values read per scrape).

mod histogram;
pub mod scraped;

use std::time::Duration;

use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

pub use histogram::Histogram;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    tool: String,
    operation: String,
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PolicyLabels {
    policy: String,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FlipLabels {
    from: &'static str,
    to: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StepLabel {
    step: &'static str,
}

/// The service's metrics; the registry holds clones of the same counters.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    decisions: Family<DecisionLabels, Counter>,
    /// Decisions by each policy that determined them (the ids come from the policy files, so
    /// the label set is as large as the policies).
    by_policy: Family<PolicyLabels, Counter>,
    /// Shadow decisions whose outcome differed from the live one, by direction.
    flips: Family<FlipLabels, Counter>,
    /// Asks held for a human, by the kind of their card.
    asked: Family<KindLabel, Counter>,
    upstream_errors: Family<KindLabel, Counter>,
    /// Shadow comparisons that agreed, and that did not.
    shadow: [Counter; 2],
    pub decision_latency: Histogram,
    pub upstream_latency: Histogram,
    /// 2026-07-28 approval links: offered, redeemed by a retry, refused.
    approval_links: [Counter; 3],
    /// MCP `tools/call`s by the path that served them: the fast path, rmcp's service.
    mcp_calls: [Counter; 2],
}

/// Which path served an MCP `tools/call` (`server::mcp::lean`).
#[derive(Debug, Clone, Copy)]
pub enum McpPath {
    Fast = 0,
    Service = 1,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PathLabel {
    path: &'static str,
}

/// A step of a 2026-07-28 approval link (`server::mcp::link`).
#[derive(Debug, Clone, Copy)]
pub enum LinkStep {
    Offered = 0,
    Redeemed = 1,
    Refused = 2,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let decisions = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "askgate_decisions",
            "Decisions by tool, operation and outcome",
            decisions.clone(),
        );
        let by_policy = Family::<PolicyLabels, Counter>::default();
        registry.register(
            "askgate_policy_decisions",
            "Decisions by determining policy id and outcome",
            by_policy.clone(),
        );
        let flips = Family::<FlipLabels, Counter>::default();
        registry.register(
            "askgate_shadow_flips",
            "Shadow decisions whose outcome differs from the live one, from live to shadow",
            flips.clone(),
        );
        let asked = Family::<KindLabel, Counter>::default();
        registry.register(
            "askgate_approvals_asked",
            "Calls held for a human's approval, by card kind",
            asked.clone(),
        );
        let decision_latency = Histogram::default();
        registry.register(
            "askgate_decision_seconds",
            "Time to gather facts and decide",
            decision_latency.clone(),
        );
        let upstream_latency = Histogram::default();
        registry.register(
            "askgate_upstream_seconds",
            "Time of upstream calls",
            upstream_latency.clone(),
        );
        let upstream_errors = Family::<KindLabel, Counter>::default();
        registry.register(
            "askgate_upstream_errors",
            "Upstream failures by kind",
            upstream_errors.clone(),
        );
        let shadow = Family::<ResultLabel, Counter>::default();
        registry.register(
            "askgate_shadow_decisions",
            "Shadow policy comparisons",
            shadow.clone(),
        );
        let links = Family::<StepLabel, Counter>::default();
        registry.register(
            "askgate_mcp_approval_links",
            "2026-07-28 approval links (input_required) by step",
            links.clone(),
        );
        let calls = Family::<PathLabel, Counter>::default();
        registry.register(
            "askgate_mcp_tool_calls",
            "MCP tools/call requests by the path that served them (fast: stateless 2026-07-28)",
            calls.clone(),
        );
        Self {
            registry,
            decisions,
            by_policy,
            flips,
            asked,
            upstream_errors,
            shadow: ["agree", "disagree"]
                .map(|result| shadow.get_or_create_owned(&ResultLabel { result })),
            decision_latency,
            upstream_latency,
            approval_links: ["offered", "redeemed", "refused"]
                .map(|step| links.get_or_create_owned(&StepLabel { step })),
            mcp_calls: ["fast", "service"]
                .map(|path| calls.get_or_create_owned(&PathLabel { path })),
        }
    }
}

impl Metrics {
    pub fn decision_made(&self, tool: &str, operation: &str, outcome: &str, elapsed: Duration) {
        let labels = DecisionLabels {
            tool: tool.to_string(),
            operation: operation.to_string(),
            outcome: outcome.to_string(),
        };
        self.decisions.get_or_create(&labels).inc();
        self.decision_latency.observe(elapsed);
    }

    /// A decision counted under each policy that determined it.
    pub fn decided_by(&self, policies: &[String], outcome: &'static str) {
        for policy in policies {
            let labels = PolicyLabels {
                policy: policy.clone(),
                outcome,
            };
            self.by_policy.get_or_create(&labels).inc();
        }
    }

    /// A shadow decision whose outcome was not the live one's.
    pub fn shadow_flipped(&self, from: &'static str, to: &'static str) {
        self.flips.get_or_create(&FlipLabels { from, to }).inc();
    }

    /// A call held for approval on a card of `kind`.
    pub fn approval_asked(&self, kind: &str) {
        let labels = KindLabel {
            kind: kind.to_string(),
        };
        self.asked.get_or_create(&labels).inc();
    }

    pub fn upstream_failed(&self, kind: &str) {
        let labels = KindLabel {
            kind: kind.to_string(),
        };
        self.upstream_errors.get_or_create(&labels).inc();
    }

    pub fn approval_link(&self, step: LinkStep) {
        if let Some(count) = self.approval_links.get(step as usize) {
            count.inc();
        }
    }

    pub fn mcp_call(&self, path: McpPath) {
        if let Some(count) = self.mcp_calls.get(path as usize) {
            count.inc();
        }
    }

    /// A shadow policy set agreed (or not) with the live one.
    pub fn shadow_compared(&self, agreed: bool) {
        let [agree, disagree] = &self.shadow;
        if agreed { agree } else { disagree }.inc();
    }

    /// `/metrics`' text: these metrics, then `scraped` (what this scrape read from others).
    pub fn render(&self, scraped: &Registry) -> String {
        let mut out = String::new();
        // Writing into a String does not fail.
        let _ = encode_registry(&mut out, &self.registry);
        let _ = encode_registry(&mut out, scraped);
        let _ = encode_eof(&mut out);
        out
    }
}

#[cfg(test)]
mod tests;
