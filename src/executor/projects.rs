//! Owns [`ProjectsExecutor`]: the thin client that EXECUTES an already-allowed `Projects` call
//! against claude.ai (client-facts §10.2–§10.3); it must not decide permissions (the decision
//! core did), and every error it returns has the bearer tokens redacted.
//!
//! Map of the module:
//! - `api`: the two routes, headers, 401 refresh and timeout, with the route table in
//!   `api::action` and the body cap and error texts in `api::answer`;
//! - `detail`: the project detail, `project_info` and the not-found message;
//! - `read`: `project_read` and `project_search`;
//! - `write`: `project_write` and `project_delete`;
//! - `local_place`: where a `local_path` may be read (the root, askgate's own files), and what
//!   the decision sees of it;
//! - `local_file`: the `local_path` checks, reading from the checked descriptor;
//! - `service_files`: askgate's own files, which no `local_path` reaches;
//! - `save`: mode-0600 files in the spill directory;
//! - `test_seam`: a one-shot action end-to-end tests arm to swap a `local_path` mid-read;
//! - `error`: [`ProjectsError`].

mod api;
mod detail;
pub mod error;
pub(crate) mod local_file;
pub(crate) mod local_place;
mod read;
mod save;
mod service_files;
#[doc(hidden)]
pub mod test_seam;
mod write;

#[cfg(test)]
mod harness;
#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod write_tests;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::call::{ProjectsCall, ProjectsMethod};
use api::{Action, Upstream};
use detail::ProjectDetail;
pub use error::ProjectsError;
pub use local_place::{observe_local_path, LocalPathRules};

use crate::facts::observations::LocalFileStat;

/// The reference's timeout for every Projects request.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Which of the two upstream routes carries the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectsRoute {
    /// `/api/organizations/{org}/projects/{uuid}/…` with the claude.ai OAuth token.
    Org,
    /// `POST /v2/ccr-sessions/-/chat-project` with the session token.
    Session,
}

/// Where and how the executor reaches the project.
#[derive(Debug, Clone)]
pub struct ProjectsConfig {
    pub base_url: String,
    pub org_uuid: String,
    pub project_uuid: String,
    pub route: ProjectsRoute,
    /// Where spilled docs and raw downloads are saved (mode 0600).
    pub spill_dir: PathBuf,
    /// Where a `local_path` may be read: under the root, never askgate's own files.
    pub local_path: LocalPathRules,
    /// Per request; [`DEFAULT_TIMEOUT`] is the reference's 30 s.
    pub timeout: Duration,
}

/// The credential behind the calls, implemented over the gateway's claude.ai login.
pub trait TokenSource: Send + Sync {
    /// The current bearer token of the org route.
    fn access_token(&self) -> String;
    /// One refresh after a 401 on `stale`; the new access token, or why it failed.
    fn refresh(&self, stale: &str) -> BoxFuture<'_, Result<String, String>>;
    /// The token of the CCR session route, if there is one.
    fn session_token(&self) -> Option<String>;
    /// A notice to put before the result's `notice` once, e.g. after the login was upgraded
    /// to include project access (client-facts §10.2 step 4). None by default.
    fn take_upgrade_notice(&self) -> Option<String> {
        None
    }
}

/// Executes allowed `Projects` calls over a shared HTTP client.
pub struct ProjectsExecutor {
    client: reqwest::Client,
    config: ProjectsConfig,
    tokens: Arc<dyn TokenSource>,
}

impl ProjectsExecutor {
    pub fn new(
        client: reqwest::Client,
        config: ProjectsConfig,
        tokens: Arc<dyn TokenSource>,
    ) -> Self {
        ProjectsExecutor {
            client,
            config,
            tokens,
        }
    }

    /// Where a `local_path` may be read.
    pub fn local_path_rules(&self) -> &LocalPathRules {
        &self.config.local_path
    }

    /// Runs `call` and returns the tool result of client-facts §10.1 (`LoS`).
    pub async fn execute(&self, call: &ProjectsCall) -> Result<Value, ProjectsError> {
        self.execute_decided(call, None).await
    }

    /// Like [`Self::execute`]; a `local_path` write reads only the file the decision saw
    /// (`decided`: same device, inode and size), else it is refused.
    pub async fn execute_decided(
        &self,
        call: &ProjectsCall,
        decided: Option<LocalFileStat>,
    ) -> Result<Value, ProjectsError> {
        let upstream = Upstream::new(&self.client, &self.config, self.tokens.as_ref());
        match self.dispatch(&upstream, call, decided).await {
            Ok(result) => Ok(self.with_upgrade_notice(result)),
            Err(error) => Err(error.redacted(&upstream.secrets())),
        }
    }

    async fn dispatch(
        &self,
        upstream: &Upstream<'_>,
        call: &ProjectsCall,
        decided: Option<LocalFileStat>,
    ) -> Result<Value, ProjectsError> {
        if self.config.project_uuid.is_empty() {
            return Err(ProjectsError::NoProject);
        }
        let path = call.path.as_deref().unwrap_or_default();
        match call.method {
            ProjectsMethod::ProjectInfo => {
                let detail = ProjectDetail::parse(upstream.send(&Action::Detail).await?)?;
                Ok(detail.info())
            }
            ProjectsMethod::ProjectRead => read::project_read(upstream, path).await,
            ProjectsMethod::ProjectSearch => {
                let query = call.query.as_deref().unwrap_or_default();
                read::project_search(upstream, query, call.n).await
            }
            ProjectsMethod::ProjectWrite => {
                let source = call.source.as_ref().ok_or(ProjectsError::IncompleteCall {
                    method: "project_write",
                    field: "content",
                })?;
                write::project_write(upstream, path, source, call.present_to_user, decided).await
            }
            ProjectsMethod::ProjectDelete => write::project_delete(upstream, path).await,
        }
    }

    /// Prefixes the upgrade notice, when the credential has one, to the result's `notice`.
    fn with_upgrade_notice(&self, mut result: Value) -> Value {
        let Some(upgrade) = self.tokens.take_upgrade_notice() else {
            return result;
        };
        if let Some(object) = result.as_object_mut() {
            let notice = match object.get("notice").and_then(Value::as_str) {
                Some(existing) => format!("{upgrade} {existing}"),
                None => upgrade,
            };
            object.insert("notice".to_owned(), Value::String(notice));
        }
        result
    }
}
