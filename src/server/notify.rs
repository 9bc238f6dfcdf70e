//! server::notify: an optional webhook that receives one JSON message per new pending approval
//! — a Slack-compatible `text` with the card summary (who asked: main agent or subagent, mode,
//! attested), how many approvers it needs when more than one, and the console link, plus the
//! structured approval (with its `quorum` and `votes`); and, when an escalation is configured,
//! one message to a second webhook for each approval still unanswered after its time
//! (`escalated: true`, sent once: the sweeper takes each from the books once). Delivery runs in its own task from a bounded queue, is retried with backoff, and
//! never delays or changes a decision; deliveries, retries and drops are counted in `/metrics`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::present::card::{asked_as_of, kind_label, time_left};
use super::present::shown::visible_text;
use crate::store::approvals::ApprovalView;

/// Messages waiting for delivery; past it a new one is dropped (and counted).
pub const QUEUE: usize = 256;
/// Attempts per message, and the wait before each retry (doubling).
pub const ATTEMPTS: u32 = 5;
const FIRST_RETRY: Duration = Duration::from_millis(250);
/// One attempt's deadline.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where messages go and what links point at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookTarget {
    pub url: String,
    /// `http://host:port` the console is reached at (links in messages).
    pub console_base: String,
}

/// Where an approval still pending `after` it was asked is sent, once (issue 35 §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    pub url: String,
    pub after: Duration,
    /// `http://host:port` the console is reached at (links in messages).
    pub console_base: String,
}

/// The escalation's queue and settings, once started.
#[derive(Debug, Clone)]
struct Escalating {
    queue: mpsc::Sender<Value>,
    after: Duration,
    console_base: String,
}

/// Delivery counters, read by `metrics::scraped` at each scrape.
#[derive(Debug, Default)]
pub struct Deliveries {
    pub delivered: AtomicU64,
    /// Messages given up after every attempt failed.
    pub failed: AtomicU64,
    /// Attempts that failed (a message retried twice then delivered counts two).
    pub attempt_failures: AtomicU64,
    /// Messages not queued because the queue was full.
    pub dropped: AtomicU64,
}

/// The sending side; a notifier without a target does nothing.
#[derive(Debug, Clone, Default)]
pub struct Notifier {
    queue: Option<mpsc::Sender<Value>>,
    console_base: String,
    escalating: Option<Escalating>,
    pub deliveries: Arc<Deliveries>,
}

impl Notifier {
    /// Starts the delivery tasks for `target` and `escalation` (none: that one is off).
    pub fn start(target: Option<WebhookTarget>, escalation: Option<Escalation>) -> Notifier {
        let deliveries = Arc::new(Deliveries::default());
        let escalating = escalation.map(|escalation| {
            let (queue, receiver) = mpsc::channel(QUEUE);
            tokio::spawn(deliver(receiver, escalation.url, Arc::clone(&deliveries)));
            Escalating {
                queue,
                after: escalation.after,
                console_base: escalation.console_base,
            }
        });
        let Some(target) = target else {
            return Notifier {
                deliveries,
                escalating,
                ..Notifier::default()
            };
        };
        let (queue, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(deliver(receiver, target.url, Arc::clone(&deliveries)));
        Notifier {
            queue: Some(queue),
            console_base: target.console_base,
            escalating,
            deliveries,
        }
    }

    /// How long an approval may stay unanswered before it is escalated; `None`: never.
    pub fn escalate_after(&self) -> Option<Duration> {
        self.escalating.as_ref().map(|escalating| escalating.after)
    }

    /// An approval stayed unanswered past `escalation.after_seconds`: queue its message to
    /// the escalation webhook (never waits).
    pub fn approval_escalated(&self, view: &ApprovalView, now: time::OffsetDateTime) {
        let Some(escalating) = &self.escalating else {
            return;
        };
        let message = escalation_message(view, escalating, now);
        if escalating.queue.try_send(message).is_err() {
            self.deliveries.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A new approval is pending: queue its message (never waits).
    pub fn approval_held(&self, view: &ApprovalView, now: time::OffsetDateTime) {
        let Some(queue) = &self.queue else {
            return;
        };
        let message = message(view, &self.console_base, now);
        if queue.try_send(message).is_err() {
            self.deliveries.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The message for one approval.
pub fn message(view: &ApprovalView, console_base: &str, now: time::OffsetDateTime) -> Value {
    let link = format!("{console_base}/console/approvals/{}", view.id);
    let summary = &view.summary;
    let project = summary
        .project_id
        .as_deref()
        .map(|project| format!(" on {}", visible_text(project)))
        .unwrap_or_default();
    // The scope sentence travels with the kind: a "this call only" card says there what the
    // approval will not keep (no plan for a subagent, Claude Design left unconnected).
    let quorum = if view.quorum > 1 {
        format!(
            " Needs {} distinct approvers ({}).",
            view.quorum,
            view.tally()
        )
    } else {
        String::new()
    };
    let text = format!(
        "askgate: {} ({}) asks for approval: {} — {} {}{} ({}). Scope: {}.{quorum} {}",
        visible_text(&view.requested_by),
        asked_as_of(view),
        kind_label(view.card.kind()),
        visible_text(&summary.tool),
        visible_text(&summary.operation),
        project,
        time_left(view.expires_at, now),
        visible_text(view.card.scope()),
        link
    );
    json!({"text": text, "console_url": link, "approval": view})
}

/// The message for an approval escalated after `escalating.after`: the webhook's, its text
/// saying how long it has waited, and `escalated: true`.
fn escalation_message(
    view: &ApprovalView,
    escalating: &Escalating,
    now: time::OffsetDateTime,
) -> Value {
    let mut message = message(view, &escalating.console_base, now);
    let text = message
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let text = text.strip_prefix("askgate: ").unwrap_or(text);
    let waited = escalating.after.as_secs();
    let escalated = format!(
        "askgate: escalated, unanswered for {} — {text}",
        if waited % 60 == 0 {
            format!("{} min", waited / 60)
        } else {
            format!("{waited} s")
        }
    );
    if let Some(fields) = message.as_object_mut() {
        fields.insert("text".to_string(), json!(escalated));
        fields.insert("escalated".to_string(), json!(true));
    }
    message
}

async fn deliver(mut receiver: mpsc::Receiver<Value>, url: String, deliveries: Arc<Deliveries>) {
    let client = reqwest::Client::builder()
        .timeout(ATTEMPT_TIMEOUT)
        .build()
        .unwrap_or_default();
    while let Some(message) = receiver.recv().await {
        let mut wait = FIRST_RETRY;
        let mut delivered = false;
        for attempt in 1..=ATTEMPTS {
            let sent = client.post(&url).json(&message).send().await;
            if sent.is_ok_and(|response| response.status().is_success()) {
                delivered = true;
                break;
            }
            deliveries.attempt_failures.fetch_add(1, Ordering::Relaxed);
            if attempt < ATTEMPTS {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
        let counter = if delivered {
            &deliveries.delivered
        } else {
            &deliveries.failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}
