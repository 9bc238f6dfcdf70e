//! server::metrics::scraped: metrics whose values other parts of the service own — the pending
//! approvals (asked of the approval books), the webhook's deliveries, the decision log's lines —
//! read once per scrape, and the helpers with which an owner writes its counts as constant
//! counters. Nothing here is on the path of a call.

use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeCounterValue, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::server::notify::Deliveries;

/// A counter read at this scrape; `name` without `_total`, which the encoding adds.
pub fn counter<N: EncodeCounterValue>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: N,
) -> Result<(), std::fmt::Error> {
    let metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(value).encode(metric)
}

/// Counters read at this scrape, one per value of `label`.
pub fn counters<N: EncodeCounterValue + Copy>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    label: &str,
    values: &[(&str, N)],
) -> Result<(), std::fmt::Error> {
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (value, count) in values {
        let labels = [(label, *value)];
        ConstCounter::new(*count).encode(metric.encode_family(&labels)?)?;
    }
    Ok(())
}

/// What this scrape reads from others: the pending approvals and the webhook's deliveries.
pub fn registry(pending_approvals: usize, webhook: &Deliveries) -> Registry {
    let mut registry = Registry::default();
    registry.register(
        "askgate_pending_approvals",
        "Approvals waiting for a human (expired ones not counted)",
        ConstGauge::new(i64::try_from(pending_approvals).unwrap_or(i64::MAX)),
    );
    let read = |count: &AtomicU64| count.load(Ordering::Relaxed);
    registry.register_collector(Box::new(Webhook {
        delivered: read(&webhook.delivered),
        failed: read(&webhook.failed),
        dropped: read(&webhook.dropped),
        attempt_failures: read(&webhook.attempt_failures),
    }));
    registry
}

/// The webhook's delivery counts as read at this scrape.
#[derive(Debug)]
struct Webhook {
    delivered: u64,
    failed: u64,
    dropped: u64,
    attempt_failures: u64,
}

impl Collector for Webhook {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        counters(
            &mut encoder,
            "askgate_webhook_messages",
            "Approval webhook messages by result.",
            "result",
            &[
                ("delivered", self.delivered),
                ("failed", self.failed),
                ("dropped", self.dropped),
            ],
        )?;
        counter(
            &mut encoder,
            "askgate_webhook_attempt_failures",
            "Webhook attempts that failed (each retry counts).",
            self.attempt_failures,
        )
    }
}
