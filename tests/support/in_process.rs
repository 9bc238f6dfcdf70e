//! support::in_process: the service booted in this process (`boot`, then `run_with` on a
//! listener the test bound) — what the gateway and reliability harnesses stand on, beside
//! `support::serve` for the real binary. It stops when dropped with the test's runtime.

use std::sync::Arc;

use askgate::sandbox::Sandbox;
use askgate::server::clock::Clock;
use askgate::server::config::{Config, RawConfig};
use askgate::server::AppState;

pub struct InProcess {
    pub url: String,
    pub state: AppState,
    /// The upstream it calls: the in-process sandbox's URL unless the test named one.
    pub upstream_url: String,
    _sandbox: Option<Sandbox>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl InProcess {
    /// Boots `raw` (validated) on `clock` and serves it on `listener`.
    pub async fn start(
        listener: tokio::net::TcpListener,
        raw: RawConfig,
        clock: Arc<dyn Clock>,
    ) -> InProcess {
        let config = Config::validate(raw).expect("valid config");
        let booted = askgate::server::boot::boot(&config, clock)
            .await
            .expect("boots");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(askgate::server::run_with(
            listener,
            booted.state.clone(),
            config.http,
            async move {
                let _ = stopped.await;
            },
        ));
        InProcess {
            url,
            state: booted.state,
            upstream_url: booted.upstream_url,
            _sandbox: booted.sandbox,
            _shutdown: shutdown,
        }
    }
}
