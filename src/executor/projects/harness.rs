//! Test harness of the Projects executor: the sandbox served over real HTTP on loopback behind
//! a bearer gate, a fake credential, and temporary spill and `local_path` root directories.
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::*;
use crate::sandbox::projects::seed::*;
use crate::sandbox::projects::ProjectsSandbox;

pub(super) struct FakeTokens {
    pub(super) access: Mutex<String>,
    pub(super) fresh: String,
    pub(super) session: Option<String>,
    pub(super) refreshes: AtomicU32,
}

impl TokenSource for FakeTokens {
    fn access_token(&self) -> String {
        self.access.lock().unwrap().clone()
    }
    fn refresh(&self, _stale: &str) -> BoxFuture<'_, Result<String, String>> {
        Box::pin(async move {
            self.refreshes.fetch_add(1, Ordering::SeqCst);
            *self.access.lock().unwrap() = self.fresh.clone();
            Ok(self.fresh.clone())
        })
    }
    fn session_token(&self) -> Option<String> {
        self.session.clone()
    }
}

/// Accepts only `Bearer <valid>`; the 401 body echoes the presented header to test redaction.
async fn bearer_gate(
    State(valid): State<Arc<Mutex<String>>>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let expected = format!("Bearer {}", valid.lock().unwrap());
    if presented == expected {
        return next.run(request).await;
    }
    let body = json!({"error": format!("invalid_token: {presented}")});
    (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response()
}

pub(super) struct Harness {
    pub(super) sandbox: ProjectsSandbox,
    pub(super) executor: ProjectsExecutor,
    pub(super) tokens: Arc<FakeTokens>,
    pub(super) valid: Arc<Mutex<String>>,
    pub(super) spill: tempfile::TempDir,
    pub(super) working: tempfile::TempDir,
}

impl Harness {
    pub(super) async fn start(route: ProjectsRoute) -> Harness {
        let sandbox = ProjectsSandbox::seeded();
        let valid = Arc::new(Mutex::new("access-1".to_owned()));
        let router = sandbox.router().layer(axum::middleware::from_fn_with_state(
            Arc::clone(&valid),
            bearer_gate,
        ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        let tokens = Arc::new(FakeTokens {
            access: Mutex::new("access-1".to_owned()),
            fresh: "access-2".to_owned(),
            session: Some("access-1".to_owned()),
            refreshes: AtomicU32::new(0),
        });
        let spill = tempfile::tempdir().unwrap();
        let working = tempfile::tempdir().unwrap();
        let config = ProjectsConfig {
            base_url: format!("http://{address}"),
            org_uuid: ORG_UUID.to_owned(),
            project_uuid: PROJECT_UUID.to_owned(),
            route,
            spill_dir: spill.path().join("session"),
            local_path: super::LocalPathRules {
                root: Some(working.path().to_path_buf()),
                service_paths: vec![spill.path().to_path_buf()],
            },
            timeout: DEFAULT_TIMEOUT,
        };
        let source: Arc<dyn TokenSource> = tokens.clone();
        let executor = ProjectsExecutor::new(reqwest::Client::new(), config, source);
        Harness {
            sandbox,
            executor,
            tokens,
            valid,
            spill,
            working,
        }
    }

    pub(super) async fn run(&self, input: Value) -> Result<Value, ProjectsError> {
        let call = crate::call::ProjectsCall::parse(&input).unwrap();
        // As the gateway does: a `local_path` is read only as the decision saw it.
        let decided = match &call.source {
            Some(crate::call::WriteSource::LocalPath(given)) => {
                observe_local_path(self.executor.local_path_rules(), given).1
            }
            _ => None,
        };
        self.executor.execute_decided(&call, decided).await
    }
}

pub(super) fn mode_of(path: &str) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}
