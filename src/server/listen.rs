//! server::listen: the accept loop under hostile load (F4, C10). It owns the connection cap
//! and its `/healthz` reserve, the header-read deadline (hyper's timer) and the idle deadline
//! of every connection, and the bounded drain on shutdown. It must not look at requests:
//! routing, bodies and their deadline are the router's and `body`'s.
//!
//! HTTP/1.1 only: hyper's header-read timeout applies to HTTP/1, and the version sniffing of
//! an auto (h1 + h2c) server would wait on a stalled first byte with no deadline at all.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::config::{HttpLimits, RESERVED_HEADER_READ_TIMEOUT};

/// How long shutdown waits for in-flight connections before it lets them go.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(30);
/// Pause after a failed `accept` (e.g. out of file descriptors), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The two services: the whole router, and the health-only one for reserved connections.
pub struct Services {
    pub app: Router,
    pub health: Router,
}

/// How one connection is served.
#[derive(Clone, Copy)]
struct Settings {
    header_read_timeout: Duration,
    idle_timeout: Duration,
    keep_alive: bool,
}

/// Serves `services` on `listener` until `shutdown` resolves, then drains for at most
/// [`DRAIN_DEADLINE`].
pub async fn serve(
    listener: TcpListener,
    services: Services,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let normal = Arc::new(Semaphore::new(limits.max_connections));
    let reserve = Arc::new(Semaphore::new(limits.reserved_connections));
    let (stop, stopping) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let Some((permit, service, settings)) = admit(&normal, &reserve, &services, &limits) else {
            drop(stream);
            continue;
        };
        tokio::spawn(connection(
            stream,
            service,
            settings,
            permit,
            stopping.clone(),
        ));
    }
    let _ = stop.send(true);
    drain(
        &normal,
        limits.max_connections,
        &reserve,
        limits.reserved_connections,
    )
    .await;
    Ok(())
}

/// A permit, the service and the settings for a new connection, or `None` when both pools are
/// full.
// INVARIANT: a connection holds one permit of one pool for its whole life, so at most
// `max_connections + reserved_connections` sockets are ever open; past both, a new connection
// is closed at once instead of holding a descriptor.
fn admit(
    normal: &Arc<Semaphore>,
    reserve: &Arc<Semaphore>,
    services: &Services,
    limits: &HttpLimits,
) -> Option<(OwnedSemaphorePermit, Router, Settings)> {
    if let Ok(permit) = Arc::clone(normal).try_acquire_owned() {
        return Some((permit, services.app.clone(), normal_settings(limits)));
    }
    let permit = Arc::clone(reserve).try_acquire_owned().ok()?;
    Some((permit, services.health.clone(), reserved_settings(limits)))
}

fn normal_settings(limits: &HttpLimits) -> Settings {
    Settings {
        header_read_timeout: limits.header_read_timeout,
        idle_timeout: limits.idle_timeout,
        keep_alive: true,
    }
}

/// A reserved connection gets one request with a short head deadline, so a flood that also
/// takes the reserve gives it back within a second.
fn reserved_settings(limits: &HttpLimits) -> Settings {
    Settings {
        header_read_timeout: limits.header_read_timeout.min(RESERVED_HEADER_READ_TIMEOUT),
        idle_timeout: limits.idle_timeout,
        keep_alive: false,
    }
}

/// Waits until every permit is back (every connection finished) or the deadline passes.
async fn drain(normal: &Semaphore, normal_size: usize, reserve: &Semaphore, reserve_size: usize) {
    let all = |size: usize| u32::try_from(size).unwrap_or(u32::MAX);
    let finished = async {
        let _normal = normal.acquire_many(all(normal_size)).await;
        let _reserve = reserve.acquire_many(all(reserve_size)).await;
    };
    if tokio::time::timeout(DRAIN_DEADLINE, finished)
        .await
        .is_err()
    {
        tracing::warn!("shutdown: connections still open after the drain deadline");
    }
}

async fn connection(
    stream: TcpStream,
    service: Router,
    settings: Settings,
    _permit: OwnedSemaphorePermit,
    mut stopping: watch::Receiver<bool>,
) {
    let activity = Activity::default();
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: activity.clone(),
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_read_timeout)
        .keep_alive(settings.keep_alive);
    let conn = builder.serve_connection(io, TowerToHyperService::new(service));
    let mut conn = pin!(conn);
    let mut draining = false;
    loop {
        let idle_deadline = activity.last() + settings.idle_timeout;
        tokio::select! {
            _ = conn.as_mut() => break,
            () = tokio::time::sleep_until(idle_deadline) => {
                if activity.last() + settings.idle_timeout <= Instant::now() {
                    break; // dropping the connection closes the socket
                }
            }
            changed = stopping.changed(), if !draining => {
                draining = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// When a connection last moved a byte, shared between its stream and its watchdog.
#[derive(Clone)]
struct Activity {
    start: Instant,
    millis: Arc<AtomicU64>,
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            start: Instant::now(),
            millis: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl Activity {
    fn touch(&self) {
        let elapsed = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.millis.store(elapsed, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.start + Duration::from_millis(self.millis.load(Ordering::Relaxed))
    }
}

/// A stream that records progress in either direction.
struct Tracked {
    inner: TcpStream,
    activity: Activity,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(written)) if written > 0) {
            self.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
