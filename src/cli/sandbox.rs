//! cli::sandbox: `askgate sandbox` — runs the upstream sandbox alone on a loopback address until
//! Ctrl-C. A thin adapter over `crate::sandbox`; it holds no sandbox logic.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use super::{EXIT_FAILED, EXIT_IO, EXIT_OK};
use crate::sandbox::{Sandbox, SandboxConfig};

#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,
    /// JSON state file: loaded at start when it exists, written after every Design change.
    #[arg(long = "state", value_name = "FILE")]
    pub state: Option<PathBuf>,
}

pub fn run(args: &SandboxArgs) -> u8 {
    let config = SandboxConfig {
        state_file: args.state.clone(),
        ..SandboxConfig::default()
    };
    let sandbox = match Sandbox::new(config) {
        Ok(sandbox) => sandbox,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_IO;
        }
    };
    crate::server::telemetry::Logging::default().install();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return EXIT_FAILED;
        }
    };
    runtime.block_on(serve(sandbox, args.listen))
}

async fn serve(sandbox: Sandbox, address: SocketAddr) -> u8 {
    let listener = match tokio::net::TcpListener::bind(address).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("error: cannot listen on `{address}`: {error}");
            return EXIT_IO;
        }
    };
    let bound = listener.local_addr().map_or(address, |bound| bound);
    println!("askgate sandbox listening on http://{bound} (access token `sandbox-access-token`)");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match sandbox.serve(listener, shutdown).await {
        Ok(()) => EXIT_OK,
        Err(error) => {
            eprintln!("error: the sandbox stopped: {error}");
            EXIT_FAILED
        }
    }
}
