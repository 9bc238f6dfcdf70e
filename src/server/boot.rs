//! server::boot: builds a running service from a validated `Config` — the policy snapshot,
//! the upstream (a real URL, or an in-process sandbox on a loopback port), the clients and
//! the shared state. Says what it did, so a person starting it knows where calls go.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::account::Account;
use super::admin::AdminState;
use super::app::AppState;
use super::auth::Issuers;
use super::caller::Callers;
use super::clock::{Clock, SystemClock};
use super::config::{Config, Upstream};
use super::console::ConsoleState;
use super::gateway::{Inner, Pipeline};
use super::hook::HookState;
use super::mcp::McpState;
use super::metrics::Metrics;
use crate::authz::{LoadError, PolicySnapshot};
use crate::executor::credentials::Credentials;
use crate::executor::design::{DesignClient, DesignConfig};
use crate::executor::projects::{
    LocalPathRules, ProjectsConfig, ProjectsExecutor, ProjectsRoute, TokenSource,
};
use crate::sandbox::{Sandbox, SandboxConfig};
use crate::sources::{self, PolicyArgs};
use crate::store::approvals::Approvals;
use crate::store::attestations::Attestations;

/// The attached Project of the sandbox's seed state.
pub const SANDBOX_PROJECT: &str = "11111111-1111-4111-8111-111111111111";

#[derive(Debug, thiserror::Error)]
pub enum BootError {
    #[error("policies failed to load: {0}")]
    Policies(#[from] LoadError),
    #[error("could not start the sandbox upstream: {0}")]
    Sandbox(String),
    #[error("could not build the HTTP client: {0}")]
    Client(String),
    #[error("could not open the decision log: {0}")]
    Log(String),
    /// The shared store could not be opened (named without its password).
    #[error("could not join the fleet: {0}")]
    Store(String),
}

/// A service ready to serve, with the sandbox it started (if any).
pub struct Booted {
    pub state: AppState,
    pub upstream_url: String,
    pub sandbox: Option<Sandbox>,
}

pub fn policy_args(config: &Config) -> PolicyArgs {
    PolicyArgs {
        policies: config.policies.clone(),
        baseline: config.baseline.clone(),
        schema: None,
    }
}

/// The shadow set: the live baseline plus the shadow directories.
pub fn shadow_args(config: &Config) -> Option<PolicyArgs> {
    (!config.shadow_policies.is_empty()).then(|| PolicyArgs {
        policies: config.shadow_policies.clone(),
        baseline: config.baseline.clone(),
        schema: None,
    })
}

pub fn load_policies(config: &Config) -> Result<PolicySnapshot, LoadError> {
    sources::load(&policy_args(config))
}

/// The policy generation of `config`'s directories, and the reloader that rebuilds it.
fn load_generation(
    config: &Config,
) -> Result<(Arc<super::policies::Policies>, super::reload::Reloader), BootError> {
    let loaded_from =
        super::reload::fingerprint_of(&policy_args(config), shadow_args(config).as_ref());
    let snapshot = load_policies(config)?;
    super::reload::log_warnings(&snapshot);
    let hook_snapshot = sources::load_hook(&policy_args(config))?;
    let approving = sources::load_approving(&policy_args(config))?;
    let shadow = match shadow_args(config) {
        Some(args) => Some(sources::load(&args)?),
        None => None,
    };
    let reloader = super::reload::Reloader::new(
        policy_args(config),
        shadow_args(config),
        &snapshot,
        loaded_from,
    );
    let policies = Arc::new(super::policies::Policies::new(
        super::policies::Generation {
            live: Arc::new(snapshot),
            hook: Arc::new(hook_snapshot),
            shadow: shadow.map(Arc::new),
            approving: Arc::new(approving),
        },
    ));
    Ok((policies, reloader))
}

/// The upstream: the configured URL with its credentials, or an in-process sandbox on
/// 127.0.0.1:0 with the sandbox's own.
async fn start_upstream(
    config: &Config,
) -> Result<
    (
        String,
        Option<Sandbox>,
        super::config::RawUpstreamCredentials,
    ),
    BootError,
> {
    let (upstream_url, sandbox, credentials) = match &config.upstream {
        Upstream::Url(url) => (url.clone(), None, config.credentials.clone()),
        Upstream::Sandbox => {
            let sandbox_config = SandboxConfig::default();
            let sandbox = Sandbox::new(sandbox_config.clone())
                .map_err(|error| BootError::Sandbox(error.to_string()))?;
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(|error| BootError::Sandbox(error.to_string()))?;
            let address = listener
                .local_addr()
                .map_err(|error| BootError::Sandbox(error.to_string()))?;
            let serving = sandbox.clone();
            tokio::spawn(async move { serving.serve(listener, std::future::pending()).await });
            let credentials = super::config::RawUpstreamCredentials {
                access_token: sandbox_config.access_token.clone(),
                refresh_token: Some(sandbox_config.refresh_token.clone()),
                session_token: None,
                scopes: sandbox_config.scopes.clone(),
            };
            (
                format!("http://{address}"),
                Some(sandbox),
                Some(credentials),
            )
        }
    };
    let credentials = credentials.unwrap_or(super::config::RawUpstreamCredentials {
        access_token: String::new(),
        refresh_token: None,
        session_token: None,
        scopes: Vec::new(),
    });
    Ok((upstream_url, sandbox, credentials))
}

/// Where shared state lives: this process, or the fleet's PostgreSQL (`store`).
async fn open_stores(
    config: &Config,
    design: DesignClient,
    projects: Option<ProjectsExecutor>,
) -> Result<Stores, BootError> {
    Ok(match &config.store.url {
        None => (
            Approvals::in_memory(config.desk.limits),
            super::console::session::ConsoleSessions::default(),
            Account::new(design, projects),
            None,
            Attestations::default(),
        ),
        Some(url) => {
            let options =
                crate::store::postgres::FleetOptions::new(match &config.store.replica_id {
                    Some(replica) => replica.as_str().to_string(),
                    None => crate::store::postgres::replica_id(),
                });
            let stores = crate::store::postgres::open(url, options, config.desk.limits)
                .await
                .map_err(|error| BootError::Store(error.to_string()))?;
            (
                Approvals::new(stores.approvals),
                super::console::session::ConsoleSessions::new(stores.console),
                Account::with_store(design, projects, stores.account),
                Some(stores.fleet),
                Attestations::new(stores.attestations),
            )
        }
    })
}

/// What [`open_stores`] opens: the approval books, console sessions, the account, the fleet
/// (if any) and the hook attestations.
type Stores = (
    Approvals,
    super::console::session::ConsoleSessions,
    Account,
    Option<Arc<crate::store::postgres::Fleet>>,
    Attestations,
);

/// Builds the state; starts an in-process sandbox on 127.0.0.1:0 when no upstream is given.
pub async fn boot(config: &Config, clock: Arc<dyn Clock>) -> Result<Booted, BootError> {
    let (policies, reloader) = load_generation(config)?;
    let (upstream_url, sandbox, credentials) = start_upstream(config).await?;
    let client = reqwest::Client::builder()
        .build()
        .map_err(|error| BootError::Client(error.to_string()))?;
    let shared = Arc::new(Credentials::new(
        client.clone(),
        format!("{upstream_url}/v1/oauth/token"),
        credentials.access_token.clone(),
        credentials.refresh_token.clone(),
    ));
    let design = DesignClient::new(
        client.clone(),
        DesignConfig {
            base_url: upstream_url.clone(),
            timeout: Duration::from_secs(60),
            max_response_bytes: 2_080_000,
            client_platform: "askgate".to_string(),
        },
        Arc::clone(&shared),
    );
    let mut environment = config.environment.clone();
    if sandbox.is_some() && environment.attached_project.is_none() {
        environment.attached_project = Some(SANDBOX_PROJECT.to_string());
    }
    let projects = environment.attached_project().map(|project| {
        let route = if credentials.session_token.is_some() {
            ProjectsRoute::Session
        } else {
            ProjectsRoute::Org
        };
        let tokens: Arc<dyn TokenSource> = Arc::new(SharedTokens {
            credentials: Arc::clone(&shared),
            session_token: credentials.session_token.clone(),
        });
        ProjectsExecutor::new(
            client.clone(),
            ProjectsConfig {
                base_url: upstream_url.clone(),
                org_uuid: config.org_uuid.clone(),
                project_uuid: project.to_string(),
                route,
                spill_dir: config.spill_dir.clone(),
                local_path: LocalPathRules {
                    root: config.local_path_root.clone(),
                    service_paths: config.service_paths(),
                },
                timeout: Duration::from_secs(30),
            },
            tokens,
        )
    });
    environment.session_token = environment.session_token || credentials.session_token.is_some();
    let (approvals, console, account, fleet, attestations) =
        open_stores(config, design, projects).await?;
    let inner = Inner {
        policies: policies.clone(),
        callers: intake(config)?,
        usage: Arc::new(if fleet.is_some() {
            crate::state::usage::Usage::shared()
        } else {
            crate::state::usage::Usage::default()
        }),
        rate: config.rate.map(crate::state::rate::RateLimiter::new),
        approving: super::approving::Desk {
            approvals,
            notifier: super::notify::Notifier::start(
                config.notify.clone(),
                config.escalation.clone(),
            ),
            routing: super::approving::routing::Routing::new(
                policies,
                config.desk.approving,
                config.desk.refusal_requires_note,
            ),
            ttl: config.desk.ttl,
        },
        environment,
        clock,
        account: account.with_scopes(credentials.scopes.clone()),
        metrics: Metrics::default(),
        journal: config
            .log
            .open(config.store.replica_id.as_ref())
            .map_err(BootError::Log)?,
    };
    let pipeline = Pipeline(Arc::new(inner));
    super::approving::spawn_sweeper(&pipeline);
    if let Some(fleet) = &fleet {
        let clock = pipeline.inner().clock.clone();
        crate::store::postgres::usage::start(
            fleet.clone(),
            pipeline.inner().usage.clone(),
            Arc::new(move || clock.now().unix_timestamp()),
        );
    }
    let owned = Owned {
        console,
        fleet,
        attestations,
        reloader,
    };
    Ok(Booted {
        state: features(config, pipeline, owned)?,
        upstream_url,
        sandbox,
    })
}

/// What the features own beside the pipeline: the console's sessions, the fleet, the hook
/// attestations (filed by the hook, taken by `/mcp`) and the policy reloader (the admin's).
struct Owned {
    console: super::console::session::ConsoleSessions,
    fleet: Option<Arc<crate::store::postgres::Fleet>>,
    attestations: Attestations,
    reloader: super::reload::Reloader,
}

/// Each feature's state: the pipeline, and its own parts and section.
fn features(config: &Config, pipeline: Pipeline, owned: Owned) -> Result<AppState, BootError> {
    Ok(AppState {
        console: ConsoleState {
            pipeline: pipeline.clone(),
            sessions: Arc::new(owned.console),
            log_dir: config.log.dir.clone(),
            oidc: console_oidc(config)?,
        },
        admin: AdminState {
            pipeline: pipeline.clone(),
            metrics_token: config.metrics_token.clone(),
            reloader: Some(Arc::new(owned.reloader)),
            fleet: owned.fleet.clone(),
        },
        hook: HookState {
            pipeline: pipeline.clone(),
            attestations: owned.attestations.clone(),
        },
        mcp: McpState {
            settings: Arc::new(config.mcp.clone()),
            attestations: owned.attestations,
            fleet: owned.fleet,
        },
        pipeline,
    })
}

pub fn system_clock() -> Arc<dyn Clock> {
    Arc::new(SystemClock)
}

/// The Projects executor's view of the shared Design credential.
struct SharedTokens {
    credentials: Arc<Credentials>,
    session_token: Option<String>,
}

impl TokenSource for SharedTokens {
    fn access_token(&self) -> String {
        self.credentials.access_token()
    }

    fn refresh(&self, stale: &str) -> BoxFuture<'_, Result<String, String>> {
        let stale = stale.to_string();
        Box::pin(async move {
            self.credentials
                .refresh(&stale)
                .await
                .map_err(|error| error.to_string())
        })
    }

    fn session_token(&self) -> Option<String> {
        self.session_token.clone()
    }
}

/// The console's OpenID Provider (`console.oidc`), with its own HTTP client.
fn console_oidc(config: &Config) -> Result<Option<Arc<super::console::oidc::Provider>>, BootError> {
    let Some(oidc) = &config.console_oidc else {
        return Ok(None);
    };
    let http = idp_client()?;
    Ok(Some(Arc::new(super::console::oidc::Provider::new(
        oidc.clone(),
        http,
    ))))
}

/// A client for the IdP's documents and endpoints (each request also has its own deadline).
fn idp_client() -> Result<reqwest::Client, BootError> {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(5))
        .timeout(std::time::Duration::from_secs(10))
        .build()
        .map_err(|error| BootError::Client(format!("the IdP client: {error}")))
}

/// How many verified JWTs the intake remembers (each until its `exp`).
const VERIFIED_TOKENS: usize = 10_000;

/// The one intake: the configured tokens, and the IdPs' JWTs when `identity.issuers` is set
/// (their keys fetched at once in the background and refreshed by their `Cache-Control`).
fn intake(config: &Config) -> Result<Callers, BootError> {
    if config.identity.issuers.is_empty() {
        return Ok(config.callers.clone());
    }
    let http = idp_client()?;
    let mut issuers = Issuers::new(&config.identity, http, VERIFIED_TOKENS);
    issuers.start_refresh();
    let resource = super::auth::ProtectedResource::of(&config.identity);
    Ok(config
        .callers
        .clone()
        .with_issuers(Arc::new(issuers), resource))
}
