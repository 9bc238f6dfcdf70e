//! cli::serve: `askgate serve` — validates the configuration (file < env < flags), boots the
//! service and serves until Ctrl-C / SIGTERM, then shuts down gracefully.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, EXIT_POLICIES};
use crate::server::boot::{boot, system_clock, BootError};
use crate::server::config::{Config, RawConfig, DEMO_AGENT_TOKEN, DEMO_APPROVER_TOKEN};
use crate::server::telemetry::Exporting;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A JSON configuration file (overridden by ASKGATE_* variables, then by flags).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1:8080).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// A second address that answers only `/healthz`, on connections of its own.
    #[arg(long, value_name = "ADDR")]
    pub health_listen: Option<String>,
    /// The claude.ai upstream; without it an in-process sandbox runs on a loopback port.
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// A managed policy directory added to the baseline (repeatable).
    #[arg(long = "policies", value_name = "DIR")]
    pub policies: Vec<PathBuf>,
    /// A shadow policy directory: evaluated and logged beside the live set, never enforced.
    #[arg(long = "shadow-policies", value_name = "DIR")]
    pub shadow_policies: Vec<PathBuf>,
    /// Write every decision, approval and outcome to this directory (JSON lines).
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<PathBuf>,
    /// `fsync` (default) or `none` (for measuring the cost of durability).
    #[arg(long, value_name = "MODE")]
    pub log_durability: Option<String>,
    /// Where shared state lives: `memory` (default) or `postgres://…` (replicas on one store
    /// form a fleet). Also `ASKGATE_STORE` and the config key `store`.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// This replica's id (`[a-z0-9-]`, up to 32): its log files are named
    /// `decisions-<id>-<sequence>.jsonl` so replicas may share a log directory. Also
    /// `ASKGATE_REPLICA_ID` and the config key `replica_id`.
    #[arg(long, value_name = "ID")]
    pub replica_id: Option<String>,
    /// Seconds between checks of the policy directories for changes (0 disables watching).
    #[arg(long, default_value_t = 2)]
    pub watch_seconds: u64,
}

pub fn run(args: &ServeArgs) -> u8 {
    let config = match configuration(args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("askgate: {message}");
            return EXIT_BAD_INPUT;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Cedar's evaluator refuses to recurse with less than 100 KiB of stack left: 8 MiB
        // workers (as the main thread has) evaluate every policy within `authz::limits` (P5).
        .thread_stack_size(crate::authz::limits::WORKER_STACK_BYTES)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("askgate: cannot start the runtime: {error}");
            return EXIT_FAILED;
        }
    };
    let exporting = match config
        .telemetry
        .export(|name| std::env::var(name).ok())
        .and_then(|export| {
            export
                .map(|export| Exporting::start(&export, runtime.handle().clone()))
                .transpose()
        }) {
        Ok(exporting) => exporting,
        Err(message) => {
            eprintln!("askgate: {message}");
            return EXIT_BAD_INPUT;
        }
    };
    config.logging.install_with(exporting.as_ref());
    let code = runtime.block_on(serve(config, args.watch_seconds, exporting.as_ref()));
    if let Some(exporting) = exporting {
        exporting.shutdown();
    }
    code
}

fn configuration(args: &ServeArgs) -> Result<Config, String> {
    let file = match &args.config {
        Some(path) => RawConfig::from_file(path).map_err(|error| error.to_string())?,
        None => RawConfig::default(),
    };
    let env = RawConfig::from_env(|name| std::env::var(name).ok());
    let flags = RawConfig {
        listen: args.listen.clone(),
        health_listen: args.health_listen.clone(),
        upstream: args.upstream.clone(),
        policies: (!args.policies.is_empty()).then(|| args.policies.clone()),
        shadow_policies: (!args.shadow_policies.is_empty()).then(|| args.shadow_policies.clone()),
        log_dir: args.log_dir.clone(),
        log_durability: args.log_durability.clone(),
        store: args.store.clone(),
        replica_id: args.replica_id.clone(),
        ..RawConfig::default()
    };
    Config::validate(file.overridden_by(env).overridden_by(flags))
        .map_err(|error| error.to_string())
}

async fn serve(config: Config, watch_seconds: u64, exporting: Option<&Exporting>) -> u8 {
    let booted = match boot(&config, system_clock()).await {
        Ok(booted) => booted,
        Err(BootError::Policies(error)) => {
            for problem in &error.problems {
                eprintln!("{problem}");
            }
            return EXIT_POLICIES;
        }
        Err(error) => {
            eprintln!("askgate: {error}");
            return EXIT_FAILED;
        }
    };
    let listeners = match bind(&config) {
        Ok(listeners) => listeners,
        Err(message) => {
            eprintln!("askgate: {message}");
            return EXIT_FAILED;
        }
    };
    announce(&config, &booted, &listeners);
    if let Some(exporting) = exporting {
        crate::server::admin::push_metrics(exporting, booted.state.pipeline.clone()).await;
    }
    crate::server::admin::spawn_sighup(booted.state.admin.clone());
    if watch_seconds > 0 {
        crate::server::admin::spawn_watcher(
            booted.state.admin.clone(),
            std::time::Duration::from_secs(watch_seconds),
        );
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = terminate => {}
        }
        eprintln!("askgate: shutting down");
        let _ = stop.send(true);
    };
    if let Some(health) = listeners.health {
        let mut stopped = stopped.clone();
        let state = booted.state.clone();
        tokio::spawn(async move {
            let until = async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            };
            if let Err(error) = crate::server::run_health(health, state, config.http, until).await {
                eprintln!("askgate: health listener error: {error}");
            }
        });
    }
    let fleet = booted.state.admin.fleet.clone();
    let served = crate::server::run_with(listeners.main, booted.state, config.http, shutdown).await;
    if let Some(fleet) = fleet {
        // A graceful stop gives the replica id up, so a restart need not wait for its lease.
        fleet.stop();
        fleet.release_id().await;
    }
    match served {
        Ok(()) => EXIT_OK,
        Err(error) => {
            eprintln!("askgate: server error: {error}");
            EXIT_FAILED
        }
    }
}

/// The bound listeners: the main one and, with `health_listen`, the health listener.
struct Listeners {
    main: tokio::net::TcpListener,
    health: Option<tokio::net::TcpListener>,
}

impl Listeners {
    /// The address a listener is bound to (a port of 0 resolved to the one given).
    fn address(listener: &tokio::net::TcpListener, asked: std::net::SocketAddr) -> String {
        listener
            .local_addr()
            .map_or_else(|_| asked.to_string(), |address| address.to_string())
    }
}

fn bind(config: &Config) -> Result<Listeners, String> {
    let listen = |address: std::net::SocketAddr| {
        crate::server::listen::bind(address)
            .map_err(|error| format!("cannot listen on {address}: {error}"))
    };
    let main = listen(config.listen)?;
    let health = config.health_listen.map(listen).transpose()?;
    Ok(Listeners { main, health })
}

/// Says where the service listens (the bound addresses, so `--listen 127.0.0.1:0` says which
/// port it got) and what it serves.
fn announce(config: &Config, booted: &crate::server::boot::Booted, listeners: &Listeners) {
    let snapshot = booted.state.inner().policies.live();
    let listen = Listeners::address(&listeners.main, config.listen);
    println!("askgate listening on http://{listen}");
    let sign_in = match &config.console_oidc {
        Some(oidc) => format!("sign in with {} or an approver token", oidc.label),
        None => "sign in with an approver token".to_string(),
    };
    println!("approval console: http://{listen}/console ({sign_in})");
    println!("MCP for agents: http://{listen}/mcp");
    if let (Some(health), Some(asked)) = (&listeners.health, config.health_listen) {
        let health = Listeners::address(health, asked);
        println!("health checks: http://{health}/healthz (this address answers nothing else)");
    }
    println!(
        "policies: {} ({} policies)",
        snapshot.hash(),
        snapshot.len()
    );
    match &booted.sandbox {
        Some(_) => println!(
            "upstream: in-process sandbox at {} (embedded default: no --upstream given)",
            booted.upstream_url
        ),
        None => println!("upstream: {}", booted.upstream_url),
    }
    match &config.log.dir {
        Some(dir) => println!(
            "decision log: {} ({})",
            dir.display(),
            if config.log.fsync {
                "fsync"
            } else {
                "no fsync"
            }
        ),
        None => println!("decision log: off (--log-dir DIR to keep one)"),
    }
    if let Some(key) = booted.state.inner().journal.checkpoint_key() {
        println!("decision log checkpoint key: {key} (askgate log verify --key {key} DIR)");
    }
    match &booted.state.admin.fleet {
        Some(fleet) => println!(
            "store: {} (replica {}; approvals and console sessions shared by the fleet)",
            fleet.store,
            fleet.replica()
        ),
        None => println!("store: memory (this process only; --store postgres://… for a fleet)"),
    }
    if config.demo_callers {
        println!("callers: demo tokens (loopback only) — agent `{DEMO_AGENT_TOKEN}`, approver `{DEMO_APPROVER_TOKEN}`");
    }
}
