//! sandbox::connection: a TCP listener whose connections a handler can drop without answering
//! (the `drop` fault). It owns only the kill switch per connection; it must not look at HTTP.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// What a handler sees of its connection: the switch that kills it.
#[derive(Debug, Clone)]
pub struct ConnectionHandle {
    kill: Arc<AtomicBool>,
}

impl ConnectionHandle {
    /// After this, every read ends and every write fails, so hyper closes the connection
    /// without having sent a byte of the response.
    pub fn kill(&self) {
        self.kill.store(true, Ordering::SeqCst);
    }
}

impl Connected<IncomingStream<'_, DroppableListener>> for ConnectionHandle {
    fn connect_info(stream: IncomingStream<'_, DroppableListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// Wraps a bound listener; see [`ConnectionHandle::kill`].
pub struct DroppableListener {
    inner: TcpListener,
}

impl DroppableListener {
    pub fn new(inner: TcpListener) -> Self {
        DroppableListener { inner }
    }
}

impl Listener for DroppableListener {
    type Io = DroppableStream;
    type Addr = ConnectionHandle;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (stream, _remote) = Listener::accept(&mut self.inner).await;
        // Small JSON-RPC bodies should not wait for Nagle.
        let _ = stream.set_nodelay(true);
        let kill = Arc::new(AtomicBool::new(false));
        let handle = ConnectionHandle { kill: kill.clone() };
        (DroppableStream { stream, kill }, handle)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        // Only checks the listener is still bound; the handle itself is per connection.
        self.inner.local_addr()?;
        Ok(ConnectionHandle {
            kill: Arc::new(AtomicBool::new(false)),
        })
    }
}

/// A TCP stream that stops working once its handle is killed.
pub struct DroppableStream {
    stream: TcpStream,
    kill: Arc<AtomicBool>,
}

impl DroppableStream {
    fn killed(&self) -> bool {
        self.kill.load(Ordering::SeqCst)
    }
}

fn dropped() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "connection dropped by fault",
    )
}

impl AsyncRead for DroppableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.killed() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(context, buffer)
    }
}

impl AsyncWrite for DroppableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.killed() {
            return Poll::Ready(Err(dropped()));
        }
        Pin::new(&mut self.stream).poll_write(context, bytes)
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.killed() {
            return Poll::Ready(Err(dropped()));
        }
        Pin::new(&mut self.stream).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(context)
    }
}
