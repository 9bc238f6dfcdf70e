//! sandbox::stats: request counters, `GET /_sandbox/stats` and the span of a traced request.
//! It only counts and draws; it must never change how a request is answered.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use dashmap::DashMap;
use serde_json::json;

use super::{Shared, SharedState};

#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    pub fn increment(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    fn clear(&self) {
        self.0.store(0, Ordering::SeqCst);
    }
}

#[derive(Debug, Default)]
pub struct Counters {
    pub initialize: Counter,
    pub tools_list: Counter,
    pub tools_call: DashMap<String, u64>,
    pub consent_posts: Counter,
    pub grant_posts: Counter,
    pub token_refreshes: Counter,
    /// Every request outside `/_sandbox/*`.
    pub requests: Counter,
    /// The W3C `traceparent` the last request that carried one carried (what shows a test
    /// that askgate passed its caller's context on).
    last_traceparent: std::sync::Mutex<Option<String>>,
}

impl Counters {
    pub fn count_tool_call(&self, tool: &str) {
        *self.tools_call.entry(tool.to_owned()).or_insert(0) += 1;
    }

    fn last_traceparent(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.last_traceparent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn clear(&self) {
        for counter in [
            &self.initialize,
            &self.tools_list,
            &self.consent_posts,
            &self.grant_posts,
            &self.token_refreshes,
            &self.requests,
        ] {
            counter.clear();
        }
        self.tools_call.clear();
        *self.last_traceparent() = None;
    }
}

/// Middleware: counts every upstream request before anything (faults included) answers it.
pub async fn count(State(shared): State<SharedState>, request: Request, next: Next) -> Response {
    if !request.uri().path().starts_with("/_sandbox/") {
        shared.counters.requests.increment();
        if let Some(parent) = request.headers().get("traceparent") {
            let parent = parent.to_str().unwrap_or("").to_string();
            *shared.counters.last_traceparent() = Some(parent);
        }
    }
    // A request that carried a W3C `traceparent` joins its caller's trace, as a real upstream
    // would (what shows, in a test's trace, that askgate sent it).
    let trace = crate::trace::upstream_server(
        request.method().as_str(),
        request.uri().path(),
        request.headers(),
    );
    trace.run(next.run(request)).await
}

pub fn snapshot(shared: &Shared) -> serde_json::Value {
    let counters = &shared.counters;
    let tools: BTreeMap<String, u64> = counters
        .tools_call
        .iter()
        .map(|entry| (entry.key().clone(), *entry.value()))
        .collect();
    json!({
        "initialize": counters.initialize.get(),
        "tools_list": counters.tools_list.get(),
        "tools_call": tools,
        "consent_posts": counters.consent_posts.get(),
        "grant_posts": counters.grant_posts.get(),
        "token_refreshes": counters.token_refreshes.get(),
        "projects_requests": shared.projects.requests(),
        "requests": counters.requests.get(),
        "last_traceparent": counters.last_traceparent().clone(),
    })
}
