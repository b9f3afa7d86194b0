//! The gRPC listener's accept loop: a cap on open connections per remote address, a deadline for
//! a connection's first bytes (an idle TCP connection that never starts HTTP/2 or TLS is closed),
//! and accept errors (e.g. `EMFILE` when the descriptor limit is reached) survived with back-off.
//! Each outcome is counted in [`ConnectionCounters`].

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use front::conn_cap::{IpSlot, PerIpCap};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tonic::transport::server::{Connected, TcpConnectInfo};
use tracing::warn;

/// Vetted connections waiting for the server to take them.
const HANDOFF_QUEUE: usize = 1024;
/// First and longest pause after an accept error.
const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Bounds of the accept loop (`[grpc] max_connections_per_ip`, `first_bytes_timeout_secs`).
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub per_ip: usize,
    pub first_bytes: Duration,
}

/// Why a connection was closed before the server saw it; one counter each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `max_connections_per_ip` connections from its address were open.
    PerIp,
    /// It sent nothing within `first_bytes_timeout_secs`.
    FirstBytesTimeout,
}

impl Refusal {
    pub const ALL: [Refusal; 2] = [Refusal::PerIp, Refusal::FirstBytesTimeout];

    pub const fn label(self) -> &'static str {
        match self {
            Self::PerIp => "per_ip",
            Self::FirstBytesTimeout => "first_bytes_timeout",
        }
    }
}

/// What `/metrics` reports of the accept loop.
#[derive(Debug, Default)]
pub struct ConnectionCounters {
    /// Open connections per address: the open gauge and the per-address refusals.
    pub per_ip: Arc<PerIpCap>,
    pub first_bytes_timeouts: AtomicU64,
    pub accept_errors: AtomicU64,
}

impl ConnectionCounters {
    /// Connections closed so far for `refusal`.
    pub fn refused(&self, refusal: Refusal) -> u64 {
        match refusal {
            Refusal::PerIp => self.per_ip.refused(),
            Refusal::FirstBytesTimeout => self.first_bytes_timeouts.load(Ordering::Relaxed),
        }
    }
}

/// An accepted connection that passed the checks; tonic serves it like a plain `TcpStream`.
pub struct GuardedStream {
    tcp: TcpStream,
    _slot: IpSlot,
}

impl Connected for GuardedStream {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.tcp.connect_info()
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// Starts the accept loop on `listener` (on the current runtime) and returns the stream of
/// vetted connections for `serve_with_incoming_shutdown`. The loop ends when `stop` turns true or
/// the returned stream is dropped.
pub fn guarded_incoming(
    listener: TcpListener,
    limits: ConnectionLimits,
    counters: Arc<ConnectionCounters>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio_stream::wrappers::ReceiverStream<io::Result<GuardedStream>> {
    let (handoff, incoming) = mpsc::channel(HANDOFF_QUEUE);
    tokio::spawn(accept_loop(listener, limits, counters, handoff, stop));
    tokio_stream::wrappers::ReceiverStream::new(incoming)
}

async fn accept_loop(
    listener: TcpListener,
    limits: ConnectionLimits,
    counters: Arc<ConnectionCounters>,
    handoff: mpsc::Sender<io::Result<GuardedStream>>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut backoff = MIN_BACKOFF;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stopped| *stopped) => return,
            () = handoff.closed() => return,
        };
        match accepted {
            Ok((tcp, peer)) => {
                backoff = MIN_BACKOFF;
                let Some(slot) = counters.per_ip.try_take(peer.ip(), limits.per_ip) else {
                    continue; // dropped: closed (counted by the cap)
                };
                let counted = Arc::clone(&counters);
                tokio::spawn(vet(tcp, slot, limits.first_bytes, counted, handoff.clone()));
            }
            Err(error) => {
                // EMFILE/ENFILE/ENOBUFS and the like: the listener stays; wait and retry.
                counters.accept_errors.fetch_add(1, Ordering::Relaxed);
                warn!(%error, retry_in = ?backoff, "gRPC accept failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Hands `tcp` to the server once its first bytes arrived within the deadline; closes it
/// otherwise, counted in `counters`.
async fn vet(
    tcp: TcpStream,
    slot: IpSlot,
    deadline: Duration,
    counters: Arc<ConnectionCounters>,
    handoff: mpsc::Sender<io::Result<GuardedStream>>,
) {
    let mut probe = [0u8; 1];
    match tokio::time::timeout(deadline, tcp.peek(&mut probe)).await {
        Ok(Ok(read)) if read > 0 => {
            let _ = tcp.set_nodelay(true);
            let _ = handoff.send(Ok(GuardedStream { tcp, _slot: slot })).await;
        }
        Ok(_) => {} // closed or failed before a byte: nothing to count
        Err(_) => {
            counters
                .first_bytes_timeouts
                .fetch_add(1, Ordering::Relaxed);
        }
    }
}
