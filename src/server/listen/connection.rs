//! server::listen::connection: one accepted connection, served by hyper (HTTP/1.1) until it
//! ends, with its watchdog: the idle deadline always, and, while the front door is busy (near
//! its cap), the short head deadline for a connection waiting for a request head. It holds its
//! [`super::Slot`] for its whole life. It must not look at requests (that is the router's).

use std::net::IpAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::exchange::{Exchanges, Marked};
use super::tracked::{Activity, Tracked};
use super::{FrontDoor, Slot};

/// How one connection is served.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// hyper's own head deadline, for every head of the connection.
    pub header_read_timeout: Duration,
    /// The head deadline while the front door is busy; `None` when the first is short already.
    pub busy_header_read_timeout: Option<Duration>,
    pub idle_timeout: Duration,
    pub keep_alive: bool,
}

/// What the watchdog reads.
struct Watched {
    activity: Activity,
    exchanges: Arc<Exchanges>,
    settings: Settings,
}

impl Watched {
    /// When the connection should be looked at next.
    fn deadline(&self, busy: bool) -> Instant {
        let idle = self.activity.last() + self.settings.idle_timeout;
        match self.head_deadline(busy) {
            Some(head) => idle.min(head),
            None => idle,
        }
    }

    /// The busy head deadline, when it applies now.
    fn head_deadline(&self, busy: bool) -> Option<Instant> {
        let short = self.settings.busy_header_read_timeout.filter(|_| busy)?;
        Some(self.exchanges.waiting_for_head_since()? + short)
    }

    fn expired(&self, busy: bool, now: Instant) -> bool {
        self.activity.last() + self.settings.idle_timeout <= now
            || self.head_deadline(busy).is_some_and(|head| head <= now)
    }
}

/// Serves `stream` from `peer` until the connection ends, a deadline passes, or shutdown has
/// drained it; dropping the connection closes the socket and gives the slot back.
pub async fn serve(
    stream: TcpStream,
    peer: IpAddr,
    router: Router,
    settings: Settings,
    slot: Slot,
    mut stopping: watch::Receiver<bool>,
) {
    // `slot` is a parameter, so it drops after every local: the socket closes before the
    // slot's permit goes back.
    let front: Arc<FrontDoor> = Arc::clone(&slot.front);
    let watched = Watched {
        activity: Activity::default(),
        exchanges: Exchanges::new(),
        settings,
    };
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: watched.activity.clone(),
    });
    let service = Marked::new(
        router,
        Arc::clone(&watched.exchanges),
        Arc::clone(&front.peers),
        peer,
    );
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_read_timeout)
        .keep_alive(settings.keep_alive);
    let mut conn = pin!(builder.serve_connection(io, service));
    let mut draining = false;
    loop {
        let became_busy = front.became_busy.notified();
        let deadline = watched.deadline(front.is_busy());
        tokio::select! {
            _ = conn.as_mut() => break,
            () = tokio::time::sleep_until(deadline) => {
                if watched.expired(front.is_busy(), Instant::now()) {
                    break;
                }
            }
            () = became_busy => {} // the head deadline may be shorter now: look again
            changed = stopping.changed(), if !draining => {
                draining = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}
