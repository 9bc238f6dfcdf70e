//! The durable per-project write grant routes (client-facts §5.1): a probe shared among concurrent
//! callers (never cached beyond that) and the grant POST. It must not track verified or
//! ineligible projects; the caller owns that state.

use super::{DesignClient, DesignError};
use futures_util::future::{BoxFuture, FutureExt, Shared};
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

const GRANTS_PATH: &str = "/v1/design/grants";

/// What the grant probe learned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantProbe {
    /// The project ids holding a grant.
    Available(BTreeSet<String>),
    /// `probe_404_old_server`, `probe_shape` or `probe_network`.
    Unavailable(&'static str),
}

/// The outcome of a grant POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantRecord {
    Recorded,
    /// A 404: this project cannot hold a grant for this account.
    NotEligible,
}

type Flight = Shared<BoxFuture<'static, GrantProbe>>;

/// The probe in flight, with a number so a finished flight only clears itself.
#[derive(Default)]
pub struct ProbeFlight {
    current: Mutex<Option<(u64, Flight)>>,
    started: std::sync::atomic::AtomicU64,
}

impl DesignClient {
    /// `GET /v1/design/grants`; concurrent callers share one request.
    pub async fn grants(&self) -> GrantProbe {
        let flight = {
            let mut current = self.inner.grant_probe.lock();
            match current.as_ref() {
                Some((_, flight)) => flight.clone(),
                None => {
                    let number = self
                        .inner
                        .grant_probe
                        .started
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let flight = self.start_probe(number);
                    *current = Some((number, flight.clone()));
                    flight
                }
            }
        };
        flight.await
    }

    /// `POST /v1/design/grants`; a 404 means the project cannot hold a grant.
    pub async fn record_grant(&self, project_id: &str) -> Result<GrantRecord, DesignError> {
        let body = json!({"project_id": project_id});
        let reply = self.control(Method::POST, GRANTS_PATH, Some(&body)).await?;
        match reply.status {
            200..=299 => Ok(GrantRecord::Recorded),
            404 => Ok(GrantRecord::NotEligible),
            status => Err(DesignError::http(
                "grant",
                status,
                &reply.text,
                &[&reply.token],
            )),
        }
    }

    /// Spawned so a caller giving up does not strand the others; the flight clears itself at the end.
    fn start_probe(&self, number: u64) -> Flight {
        let client = self.clone();
        let task = tokio::spawn(async move {
            let probe = client.probe_grants().await;
            let mut current = client.inner.grant_probe.lock();
            if current
                .as_ref()
                .is_some_and(|(running, _)| *running == number)
            {
                *current = None;
            }
            probe
        });
        async move {
            task.await
                .unwrap_or(GrantProbe::Unavailable("probe_network"))
        }
        .boxed()
        .shared()
    }

    async fn probe_grants(&self) -> GrantProbe {
        let Ok(reply) = self.control(Method::GET, GRANTS_PATH, None).await else {
            return GrantProbe::Unavailable("probe_network");
        };
        match reply.status {
            200 => parse_grants(&reply.text),
            404 => GrantProbe::Unavailable("probe_404_old_server"),
            status if status >= 500 => GrantProbe::Unavailable("probe_network"),
            _ => GrantProbe::Unavailable("probe_shape"),
        }
    }
}

impl ProbeFlight {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(u64, Flight)>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Only a `grants` array counts; its string `project_id`s form the set.
fn parse_grants(text: &str) -> GrantProbe {
    let body: Option<Value> = serde_json::from_str(text).ok();
    let Some(grants) = body
        .as_ref()
        .and_then(|body| body.get("grants"))
        .and_then(Value::as_array)
    else {
        return GrantProbe::Unavailable("probe_shape");
    };
    let ids = grants
        .iter()
        .filter_map(|grant| grant.get("project_id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    GrantProbe::Available(ids)
}
