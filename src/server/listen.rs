//! server::listen: the accept loop under hostile load (F4, C10, N6). It owns the front door:
//! the connection cap and its `/healthz` reserve (kept for peers that have completed a request
//! head), the per-peer connection limit, the shorter head deadline while the server is near its
//! cap, and the bounded drain on shutdown. It must not look at requests: routing, bodies and
//! their deadline are the router's and `body`'s.
//!
//! HTTP/1.1 only: hyper's header-read timeout applies to HTTP/1, and the version sniffing of
//! an auto (h1 + h2c) server would wait on a stalled first byte with no deadline at all.
//!
//! Map: `peers` (per-peer counts, known peers), `connection` (one connection and its
//! watchdog), `exchange` (what its requests tell the watchdog), `tracked` (bytes moved).

mod connection;
mod exchange;
mod peers;
mod tracked;

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{watch, Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::config::{HttpLimits, RESERVED_HEADER_READ_TIMEOUT};
use connection::Settings;
use peers::PeerTable;

/// How long shutdown waits for in-flight connections before it lets them go.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(30);
/// Pause after a failed `accept` (e.g. out of file descriptors), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// Refused connections are reported at most this often (a flood would flood the log).
const REPORT_EVERY: Duration = Duration::from_secs(10);
/// Connections the kernel queues for `accept` (capped by `net.core.somaxconn`). Past it the
/// kernel drops new SYNs and a client waits a second for its retry: a peer reconnecting as
/// fast as it is refused keeps up to one connection per socket it loops on in this queue, so
/// the queue is kept well above the 1,024 that tokio's `bind` asks for (N6).
pub const LISTEN_BACKLOG: u32 = 4_096;

/// The address a request came from, in every request's extensions (the console's sign-in
/// throttle reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub IpAddr);

/// The two services: the whole router, and the health-only one for reserved connections.
pub struct Services {
    pub app: Router,
    pub health: Router,
}

/// A listener on `address` with the [`LISTEN_BACKLOG`] (and `SO_REUSEADDR`, as tokio's
/// `bind` sets it).
pub fn bind(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match address {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Serves `services` on `listener` until `shutdown` resolves, then drains for at most
/// [`DRAIN_DEADLINE`].
pub async fn serve(
    listener: TcpListener,
    services: Services,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let front = Arc::new(FrontDoor::new(limits));
    let (stop, stopping) = watch::channel(false);
    let mut refusals = Refusals::default();
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        let peer = peer.ip().to_canonical();
        let (slot, pool) = match front.admit(peer) {
            Ok(admitted) => admitted,
            Err(refusal) => {
                refuse(stream);
                refusals.count(refusal, &front.limits);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (router, settings) = match pool {
            Pool::Normal => (services.app.clone(), normal_settings(&limits)),
            Pool::Reserved => (services.health.clone(), reserved_settings(&limits)),
        };
        let stopping = stopping.clone();
        tokio::spawn(connection::serve(
            stream, peer, router, settings, slot, stopping,
        ));
    }
    let _ = stop.send(true);
    front.drain().await;
    Ok(())
}

/// Closes a refused connection at once, with a reset rather than a FIN: a peer that reconnects
/// as fast as it is refused leaves no `TIME_WAIT` socket behind here.
fn refuse(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

fn normal_settings(limits: &HttpLimits) -> Settings {
    Settings {
        header_read_timeout: limits.header_read_timeout,
        busy_header_read_timeout: Some(limits.busy_header_read_timeout),
        idle_timeout: limits.idle_timeout,
        keep_alive: true,
    }
}

/// A reserved connection gets one request with a short head deadline, so a flood that also
/// takes the reserve gives it back within a second.
fn reserved_settings(limits: &HttpLimits) -> Settings {
    Settings {
        header_read_timeout: limits.header_read_timeout.min(RESERVED_HEADER_READ_TIMEOUT),
        busy_header_read_timeout: None,
        idle_timeout: limits.idle_timeout,
        keep_alive: false,
    }
}

/// Which pool a connection was admitted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pool {
    Normal,
    Reserved,
}

/// Why a connection was closed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Its peer holds `max_connections_per_peer` already.
    PeerLimit,
    /// The pool is full, and the reserve is full or not for this peer.
    Full,
}

/// The pools, the peers and how busy the front door is.
struct FrontDoor {
    limits: HttpLimits,
    normal: Arc<Semaphore>,
    reserve: Arc<Semaphore>,
    peers: Arc<PeerTable>,
    /// Near the cap: set at three quarters of `max_connections` in use, cleared below half
    /// (apart, so that a pool hovering at the mark does not wake every connection each time).
    busy: AtomicBool,
    /// Wakes every connection's watchdog when `busy` is set.
    became_busy: Notify,
}

impl FrontDoor {
    fn new(limits: HttpLimits) -> Self {
        let open_bound = limits
            .max_connections
            .saturating_add(limits.reserved_connections);
        Self {
            normal: Arc::new(Semaphore::new(limits.max_connections)),
            reserve: Arc::new(Semaphore::new(limits.reserved_connections)),
            peers: Arc::new(PeerTable::new(limits.max_connections_per_peer, open_bound)),
            busy: AtomicBool::new(false),
            became_busy: Notify::new(),
            limits,
        }
    }

    /// A slot in one of the pools for a new connection of `peer`.
    // INVARIANT: a connection holds one permit of one pool and one count of its peer for its
    // whole life (its `Slot`), so at most `max_connections + reserved_connections` sockets are
    // open and at most `max_connections_per_peer` per peer; past them, a new connection is
    // closed at once instead of holding a descriptor.
    fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<(Slot, Pool), Refusal> {
        let now = Instant::now();
        if !self.peers.opened(peer, now) {
            return Err(Refusal::PeerLimit);
        }
        let slot = |permit| Slot {
            front: Arc::clone(self),
            peer,
            permit: Some(permit),
        };
        if let Ok(permit) = Arc::clone(&self.normal).try_acquire_owned() {
            self.refresh();
            return Ok((slot(permit), Pool::Normal));
        }
        // The reserve is for a peer that has shown it speaks HTTP, not for whoever connects.
        let reserved = match self.peers.known(peer, now) {
            true => Arc::clone(&self.reserve).try_acquire_owned().ok(),
            false => None,
        };
        match reserved {
            Some(permit) => Ok((slot(permit), Pool::Reserved)),
            None => {
                self.peers.closed(peer, now);
                Err(Refusal::Full)
            }
        }
    }

    fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Sets or clears `busy` from the pool's use, waking the watchdogs when it is set.
    fn refresh(&self) {
        let max = self.limits.max_connections;
        let in_use = max.saturating_sub(self.normal.available_permits());
        let busy = if self.is_busy() {
            in_use.saturating_mul(2) >= max
        } else {
            in_use.saturating_mul(4) >= max.saturating_mul(3)
        };
        let was = self.busy.swap(busy, Ordering::AcqRel);
        if busy && !was {
            self.became_busy.notify_waiters();
        }
    }

    /// Waits until every permit is back (every connection finished) or the deadline passes.
    async fn drain(&self) {
        let all = |size: usize| u32::try_from(size).unwrap_or(u32::MAX);
        let finished = async {
            let _normal = self
                .normal
                .acquire_many(all(self.limits.max_connections))
                .await;
            let _reserve = self
                .reserve
                .acquire_many(all(self.limits.reserved_connections))
                .await;
        };
        if tokio::time::timeout(DRAIN_DEADLINE, finished)
            .await
            .is_err()
        {
            tracing::warn!("shutdown: connections still open after the drain deadline");
        }
    }
}

/// A connection's place at the front door; dropping it gives the place back.
struct Slot {
    front: Arc<FrontDoor>,
    peer: IpAddr,
    permit: Option<OwnedSemaphorePermit>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.front.peers.closed(self.peer, Instant::now());
        drop(self.permit.take());
        self.front.refresh();
    }
}

/// Connections refused since the last report.
#[derive(Debug, Default)]
struct Refusals {
    peer_limit: u64,
    full: u64,
    reported: Option<Instant>,
}

impl Refusals {
    fn count(&mut self, refusal: Refusal, limits: &HttpLimits) {
        match refusal {
            Refusal::PeerLimit => self.peer_limit += 1,
            Refusal::Full => self.full += 1,
        }
        let now = Instant::now();
        if self.reported.is_some_and(|at| now < at + REPORT_EVERY) {
            return;
        }
        tracing::warn!(
            over_the_peer_limit = self.peer_limit,
            past_the_cap = self.full,
            max_connections_per_peer = limits.max_connections_per_peer,
            max_connections = limits.max_connections,
            "connections refused at the front door"
        );
        *self = Self {
            reported: Some(now),
            ..Self::default()
        };
    }
}
