//! server::listen::exchange: what a connection's requests tell the front door. A service around
//! the router puts the peer's address in every request's extensions ([`super::Peer`]), counts
//! the peer as one that completed a head, and marks the connection as in a request from its
//! head until its response body has been handed over in full, so the watchdog knows when the
//! connection is waiting for a head. It must not look at what a request asks.

use std::convert::Infallible;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use axum::Router;
use futures_util::future::BoxFuture;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper::service::Service;
use hyper_util::service::TowerToHyperService;
use tokio::time::Instant;

use super::peers::PeerTable;
use super::Peer;

/// How often one connection refreshes its peer's "completed a head" time at most.
const MARK_EVERY: Duration = Duration::from_secs(1);

/// The requests of one connection.
#[derive(Debug)]
pub struct Exchanges {
    start: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds after `start` when the connection last began waiting for a head.
    waiting_since: AtomicU64,
    /// Milliseconds after `start` of the last mark in the peer table, plus one (0: never).
    marked: AtomicU64,
}

impl Exchanges {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            start: Instant::now(),
            in_flight: AtomicUsize::new(0),
            waiting_since: AtomicU64::new(0),
            marked: AtomicU64::new(0),
        })
    }

    /// Since when the connection has been waiting for a request head; `None` while a
    /// request is in flight (its head came, its response is not all handed over).
    pub fn waiting_for_head_since(&self) -> Option<Instant> {
        (self.in_flight.load(Ordering::Acquire) == 0)
            .then(|| self.start + Duration::from_millis(self.waiting_since.load(Ordering::Acquire)))
    }

    fn elapsed_millis(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether the peer table should hear of this head (at most every [`MARK_EVERY`]).
    fn due_for_mark(&self) -> bool {
        let now = self.elapsed_millis().saturating_add(1);
        let last = self.marked.load(Ordering::Relaxed);
        let every = u64::try_from(MARK_EVERY.as_millis()).unwrap_or(u64::MAX);
        if last != 0 && now.saturating_sub(last) < every {
            return false;
        }
        self.marked.store(now, Ordering::Relaxed);
        true
    }
}

/// One request in flight; dropped when its response body is finished or abandoned.
struct Exchange(Arc<Exchanges>);

impl Exchange {
    fn begin(exchanges: &Arc<Exchanges>) -> Self {
        exchanges.in_flight.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(exchanges))
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        let now = self.0.elapsed_millis();
        self.0.waiting_since.store(now, Ordering::Release);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The router, seen through one connection.
pub struct Marked {
    router: TowerToHyperService<Router>,
    exchanges: Arc<Exchanges>,
    peers: Arc<PeerTable>,
    peer: IpAddr,
}

impl Marked {
    pub fn new(
        router: Router,
        exchanges: Arc<Exchanges>,
        peers: Arc<PeerTable>,
        peer: IpAddr,
    ) -> Self {
        Self {
            router: TowerToHyperService::new(router),
            exchanges,
            peers,
            peer,
        }
    }
}

impl Service<Request<Incoming>> for Marked {
    type Response = Response<Guarded>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        let exchange = Exchange::begin(&self.exchanges);
        if self.exchanges.due_for_mark() {
            self.peers.completed_head(self.peer, Instant::now());
        }
        request.extensions_mut().insert(Peer(self.peer));
        let answer = self.router.call(request);
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|body| Guarded {
                body,
                _exchange: exchange,
            }))
        })
    }
}

/// A response body that ends its request's [`Exchange`] when it is dropped.
pub struct Guarded {
    body: Body,
    _exchange: Exchange,
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
