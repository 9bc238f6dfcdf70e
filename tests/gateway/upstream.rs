//! A sandbox upstream that a test starts itself, behind a recording layer, for the end-to-end
//! tests that must see exactly what reached the upstream: method, path, the session route's
//! `op`, and every body. It points a service at the sandbox with real credentials (optionally
//! the session token of the CCR route). It only observes; it never changes an answer.

use std::sync::{Arc, Mutex, PoisonError};

use askgate::facts::Environment;
use askgate::sandbox::{Sandbox, SandboxConfig};
use askgate::server::boot::SANDBOX_PROJECT;
use askgate::server::config::{RawConfig, RawUpstreamCredentials};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

/// Above any body a test sends (the sandbox itself takes up to 64 MiB).
const BODY_LIMIT_BYTES: usize = 64 * 1024 * 1024;

/// Which Projects route the service is configured for (client-facts §10.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `/api/organizations/…` with the access token: no session token configured.
    Org,
    /// `POST /v2/ccr-sessions/-/chat-project` with the sandbox's session token.
    Session,
}

/// One request as the upstream received it.
#[derive(Debug, Clone)]
pub struct SeenRequest {
    pub method: String,
    pub path: String,
    pub body: String,
}

impl SeenRequest {
    /// A Projects request in short form: `session <op>` on the CCR route, `org <METHOD>
    /// <resource>` on the org route (`org PATCH docs`); `None` for anything else.
    pub fn projects_call(&self) -> Option<String> {
        if self.path.starts_with("/v2/ccr-sessions/") {
            let body: Value = serde_json::from_str(&self.body).unwrap_or(Value::Null);
            let op = body["op"].as_str().unwrap_or("?");
            return Some(format!("session {op}"));
        }
        let (_, resource) = self
            .path
            .strip_prefix("/api/organizations/")?
            .split_once(&format!("/projects/{SANDBOX_PROJECT}/"))?;
        let resource = resource.split('/').next().unwrap_or(resource);
        Some(format!("org {} {resource}", self.method))
    }

    /// The JSON body (`Null` when there is none).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

type Log = Arc<Mutex<Vec<SeenRequest>>>;

/// A running sandbox and the log of what reached it.
pub struct RecordedUpstream {
    pub url: String,
    pub config: SandboxConfig,
    log: Log,
    _sandbox: Sandbox,
}

async fn record(State(log): State<Log>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, BODY_LIMIT_BYTES)
        .await
        .unwrap_or_default();
    if !parts.uri.path().starts_with("/_sandbox/") {
        let seen = SeenRequest {
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
            body: String::from_utf8_lossy(&bytes).into_owned(),
        };
        log.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(seen);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

impl RecordedUpstream {
    /// A seeded sandbox on 127.0.0.1:0; it runs until the test's runtime ends.
    pub async fn start() -> RecordedUpstream {
        let config = SandboxConfig::default();
        let sandbox = Sandbox::new(config.clone()).expect("sandbox");
        let log = Log::default();
        let router = sandbox
            .router()
            .layer(axum::middleware::from_fn_with_state(log.clone(), record));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(listener, router).await });
        RecordedUpstream {
            url,
            config,
            log,
            _sandbox: sandbox,
        }
    }

    /// Points a service at this sandbox as a real upstream, attached to the seed project, on
    /// `route`: the session token is configured only for [`Route::Session`].
    pub fn configure(&self, raw: &mut RawConfig, route: Route) {
        raw.upstream = Some(self.url.clone());
        raw.upstream_credentials = Some(RawUpstreamCredentials {
            access_token: self.config.access_token.clone(),
            refresh_token: Some(self.config.refresh_token.clone()),
            session_token: (route == Route::Session).then(|| self.config.session_token.clone()),
            scopes: self.config.scopes.clone(),
        });
        raw.environment = Some(Environment {
            attached_project: Some(SANDBOX_PROJECT.to_string()),
            ..Environment::default()
        });
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen_since(0)
    }

    /// How many requests were seen so far: a mark for the `*_since` views.
    pub fn mark(&self) -> usize {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The requests after `mark`, so a test can look at one call at a time.
    pub fn seen_since(&self, mark: usize) -> Vec<SeenRequest> {
        let log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        log.get(mark..).unwrap_or_default().to_vec()
    }

    /// The Projects requests after `mark`, in short form (see [`SeenRequest::projects_call`]).
    pub fn projects_calls_since(&self, mark: usize) -> Vec<String> {
        self.seen_since(mark)
            .iter()
            .filter_map(SeenRequest::projects_call)
            .collect()
    }

    /// The Projects requests after `mark` that read or change content: all but the detail
    /// reads, which the service makes as often as its observations need.
    pub fn projects_effects_since(&self, mark: usize) -> Vec<String> {
        self.projects_calls_since(mark)
            .into_iter()
            .filter(|call| !call.ends_with(" detail"))
            .collect()
    }

    /// Whether `needle` appeared in any request (path or body) that reached the upstream.
    pub fn ever_received(&self, needle: &str) -> bool {
        self.seen()
            .iter()
            .any(|seen| seen.body.contains(needle) || seen.path.contains(needle))
    }
}
