//! The MCP session: one shared in-flight `initialize` per client, reset when the server forgets
//! the session (client-facts §6). It must not send tool calls.

use super::error::DesignError;
use super::transport::{Exchange, Transport};
use reqwest::Method;
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::Mutex;

/// The session a call runs in; `epoch` tells a reset which session the caller saw fail.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    pub id: Option<String>,
    pub epoch: u64,
}

#[derive(Default)]
pub struct Session {
    /// Held for the whole handshake, so concurrent first calls wait for one `initialize`.
    state: Mutex<SessionState>,
    /// Failed handshakes so far; a waiter that saw fewer shares the latest failure.
    failures: AtomicU64,
    /// `initialize` requests sent.
    initialize_sent: AtomicU64,
}

#[derive(Default)]
struct SessionState {
    id: Option<String>,
    initialized: bool,
    epoch: u64,
    last_failure: Option<DesignError>,
}

impl Session {
    /// The current session, initializing it first when none is held.
    pub async fn ensure(&self, transport: &Transport) -> Result<SessionHandle, DesignError> {
        let failures_seen = self.failures.load(Ordering::SeqCst);
        let mut state = self.state.lock().await;
        if state.initialized {
            return Ok(SessionHandle {
                id: state.id.clone(),
                epoch: state.epoch,
            });
        }
        if self.failures.load(Ordering::SeqCst) > failures_seen {
            if let Some(error) = &state.last_failure {
                return Err(error.clone());
            }
        }
        match self.initialize(transport).await {
            Ok(id) => {
                state.id = id;
                state.initialized = true;
                state.epoch = state.epoch.wrapping_add(1);
                state.last_failure = None;
                Ok(SessionHandle {
                    id: state.id.clone(),
                    epoch: state.epoch,
                })
            }
            Err(error) => {
                state.last_failure = Some(error.clone());
                self.failures.fetch_add(1, Ordering::SeqCst);
                Err(error)
            }
        }
    }

    /// Forgets the session `epoch` unless a newer one already replaced it.
    pub async fn reset(&self, epoch: u64) {
        let mut state = self.state.lock().await;
        if state.initialized && state.epoch == epoch {
            state.id = None;
            state.initialized = false;
        }
    }

    pub fn initialize_count(&self) -> u64 {
        self.initialize_sent.load(Ordering::SeqCst)
    }

    /// The handshake: only the status and the `mcp-session-id` header matter.
    async fn initialize(&self, transport: &Transport) -> Result<Option<String>, DesignError> {
        let body = json!({
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "claude-cli-design-tool", "version": "1"}
            }
        });
        let exchange = Exchange {
            method: Method::POST,
            path: super::MCP_PATH,
            body: Some(&body),
            session_id: None,
            mcp: true,
        };
        self.initialize_sent.fetch_add(1, Ordering::SeqCst);
        let reply = transport.exchange(&exchange).await?;
        if !(200..300).contains(&reply.status) {
            return Err(DesignError::Initialize(reply.status));
        }
        Ok(reply.session_id)
    }
}
