//! Serving the gRPC stream: the tonic server with TLS, tokens, compression and keepalive behind a
//! guarded accept loop ([`incoming`]), the async runtime it runs on, and the shutdown signal.

pub mod discovery;
pub mod incoming;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use stream::filter::FilterLimits;

use crate::config::GrpcCodec;
use ::stream::deshred::{DeshredFeed, GeyserServer};
use ::stream::entries::{EntriesFeed, EntriesService};
use ::stream::service::PlaceCaps;
use stream::service::{Feed, StreamMetrics, StreamServer, StreamService};
use stream_proto::shredstream::shredstream_proxy_server::ShredstreamProxyServer;
use tonic::codec::CompressionEncoding;
use tracing::{info, warn};

/// HTTP/2 PING interval on idle gRPC connections, and how long to wait for the answer before the
/// connection is dropped (dead peers behind NAT or a cut link are noticed within 30 s).
const GRPC_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const GRPC_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// How the gRPC listener is exposed.
pub struct GrpcOptions {
    pub address: SocketAddr,
    pub limits: FilterLimits,
    pub max_subscribers: usize,
    pub max_subscribers_per_ip: usize,
    /// Counted only when `tokens` are configured.
    pub max_subscribers_per_token: usize,
    /// After the stop signal, connections still open are closed after this.
    pub shutdown_timeout: Duration,
    pub tokens: Arc<front::auth::TokenSet>,
    pub tls: Option<tonic::transport::ServerTlsConfig>,
    pub connection_limits: incoming::ConnectionLimits,
    pub connections: Arc<incoming::ConnectionCounters>,
    /// Codecs the stream may be sent in (`[grpc] compression`).
    pub compression: Vec<GrpcCodec>,
    /// The shredstream proxy's entry stream, served beside ours when given (not on a relay).
    pub entries: Option<::stream::entries::EntriesFeed>,
    /// Yellowstone's `geyser.Geyser` (`SubscribeDeshred`), served beside ours when given (not on
    /// a relay).
    pub deshred: Option<::stream::deshred::DeshredFeed>,
}

/// Serves the stream until SIGINT or SIGTERM: optional TLS, `x-token` authentication when tokens
/// are configured, gzip/zstd compression when configured and the client asks, HTTP/2 keepalive,
/// TCP_NODELAY.
pub async fn serve_grpc(
    options: GrpcOptions,
    feed: Feed,
    metrics: Arc<StreamMetrics>,
    stop_sessions: tokio::sync::watch::Sender<bool>,
    sessions_stopped: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let address = options.address;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("binding the gRPC listener on {address}"))?;
    let incoming = incoming::guarded_incoming(
        listener,
        options.connection_limits,
        options.connections,
        sessions_stopped.clone(),
    );
    let tokens = options.tokens;
    let caps = PlaceCaps {
        total: options.max_subscribers,
        per_ip: options.max_subscribers_per_ip,
        per_token: tokens
            .enabled()
            .then_some(options.max_subscribers_per_token),
    };
    let Services {
        stream: service,
        entries,
        geyser,
    } = Services::new(
        StreamService::new(feed, options.limits, metrics, sessions_stopped.clone()),
        (options.entries, options.deshred),
        (caps, options.limits),
        &options.compression,
        &sessions_stopped,
    );
    let (health_reporter, health_service) =
        discovery::health(entries.is_some(), geyser.is_some()).await;
    let reflection_v1 = discovery::reflection_v1().context("building gRPC reflection v1")?;
    let reflection_v1alpha =
        discovery::reflection_v1alpha().context("building gRPC reflection v1alpha")?;
    let tls = options.tls;
    info!(%address, tls = tls.is_some(), "serving stream.Stream/SubscribeDecoded, grpc.health.v1 and reflection");
    let stop = async move {
        shutdown_signal().await;
        discovery::not_serving(&health_reporter).await;
        // End the open streams so the graceful shutdown completes.
        let _ = stop_sessions.send(true);
    };
    let builder = server_builder(tls)?;
    let serving = builder
        .layer(tonic::service::InterceptorLayer::new(
            tokens.grpc_interceptor(),
        ))
        .add_service(service)
        .add_optional_service(entries)
        .add_optional_service(geyser)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .serve_with_incoming_shutdown(incoming, stop);
    serve_until_deadline(serving, sessions_stopped, options.shutdown_timeout)
        .await
        .with_context(|| format!("gRPC server on {address}"))?;
    info!("shutting down");
    Ok(())
}

/// Runs `serving` until it ends, or until `shutdown_timeout` after the stop flag turned true:
/// idle or half-open connections and streams blocked by flow control are then dropped with the
/// runtime.
async fn serve_until_deadline(
    serving: impl Future<Output = Result<(), tonic::transport::Error>>,
    sessions_stopped: tokio::sync::watch::Receiver<bool>,
    shutdown_timeout: Duration,
) -> Result<(), tonic::transport::Error> {
    let deadline = async {
        wait_for_stop(sessions_stopped).await;
        tokio::time::sleep(shutdown_timeout).await;
    };
    tokio::select! {
        served = serving => served?,
        () = deadline => {
            // Idle or half-open connections and streams blocked by flow control: dropped with
            // the runtime.
            warn!(?shutdown_timeout, "shutdown deadline passed; closing the connections still open");
        }
    }
    Ok(())
}

/// The services the listener serves beside health and reflection.
struct Services {
    stream: StreamServer,
    entries: Option<ShredstreamProxyServer<EntriesService>>,
    geyser: Option<GeyserServer>,
}

impl Services {
    /// `stream.Stream`, and the entry and deshred streams when their feeds are given, within
    /// `caps`, each accepting gzip and zstd and sending in the configured codecs.
    fn new(
        stream: StreamService,
        (entries, deshred): (Option<EntriesFeed>, Option<DeshredFeed>),
        (caps, limits): (PlaceCaps, FilterLimits),
        compression: &[GrpcCodec],
        sessions_stopped: &tokio::sync::watch::Receiver<bool>,
    ) -> Self {
        let send = send_encodings(compression);
        let entries = entries.map(|feed| {
            let entries = EntriesService::new(feed, sessions_stopped.clone(), caps.total);
            entries_server(entries, &send)
        });
        let geyser = deshred.map(|feed| {
            geyser_server(
                GeyserServer::new(feed, limits, caps, sessions_stopped.clone()),
                &send,
            )
        });
        Self {
            stream: stream_server(stream, caps, &send),
            entries,
            geyser,
        }
    }
}

/// The codecs the services compress in, in the configured order.
fn send_encodings(compression: &[GrpcCodec]) -> Vec<CompressionEncoding> {
    compression
        .iter()
        .map(|codec| match codec {
            GrpcCodec::Gzip => CompressionEncoding::Gzip,
            GrpcCodec::Zstd => CompressionEncoding::Zstd,
        })
        .collect()
}

/// `stream.Stream` within `caps` (the per-token cap only with tokens), accepting gzip and zstd and
/// sending in `send`.
fn stream_server(
    service: StreamService,
    caps: PlaceCaps,
    send: &[CompressionEncoding],
) -> StreamServer {
    let mut service = service
        .with_max_sessions(caps.total)
        .with_max_sessions_per_ip(caps.per_ip);
    if let Some(per_token) = caps.per_token {
        service = service.with_max_sessions_per_token(per_token);
    }
    let mut service = service
        .into_server()
        .accept_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Zstd);
    for encoding in send {
        service = service.send_compressed(*encoding);
    }
    service
}

/// The shredstream proxy's entry stream, accepting gzip and zstd and sending in `send`.
fn entries_server(
    entries: EntriesService,
    send: &[CompressionEncoding],
) -> ShredstreamProxyServer<EntriesService> {
    send.iter().fold(
        ShredstreamProxyServer::new(entries)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Zstd),
        |server, encoding| server.send_compressed(*encoding),
    )
}

/// Yellowstone's `geyser.Geyser`, accepting gzip and zstd and sending in `send`.
fn geyser_server(geyser: GeyserServer, send: &[CompressionEncoding]) -> GeyserServer {
    send.iter().fold(
        geyser
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Zstd),
        |server, encoding| server.send_compressed(*encoding),
    )
}

/// The server with HTTP/2 keepalive, and TLS when configured.
fn server_builder(
    tls: Option<tonic::transport::ServerTlsConfig>,
) -> anyhow::Result<tonic::transport::Server> {
    let mut builder = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(GRPC_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(GRPC_KEEPALIVE_TIMEOUT));
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls)
            .context("configuring TLS on the gRPC listener")?;
    }
    Ok(builder)
}

/// Resolves once the stop flag turns true (or its sender is gone).
pub async fn wait_for_stop(mut stopped: tokio::sync::watch::Receiver<bool>) {
    while !*stopped.borrow() {
        if stopped.changed().await.is_err() {
            return;
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(error) => {
                warn!(%error, "SIGTERM handler unavailable; stopping on SIGINT only");
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}

/// The async runtime of the gRPC and its sessions: two worker threads, no LIFO slot (so one
/// HTTP/2 write carries the frames of every stream a publish woke; docs/fanout.md; needs
/// `--cfg tokio_unstable`, set in .cargo/config.toml), and, when `realtime_priority` > 0, each
/// worker thread under SCHED_FIFO from its first park (the blocking pool stays ordinary).
pub fn runtime(realtime_priority: u8) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.worker_threads(2).enable_all();
    #[cfg(tokio_unstable)]
    runtime.disable_lifo_slot();
    if realtime_priority > 0 {
        runtime.on_thread_park(move || {
            crate::handoff::sched::make_realtime_once(realtime_priority, "grpc-runtime");
        });
    }
    runtime.build().context("starting the async runtime")
}

#[cfg(test)]
mod tests {
    #[test]
    fn builds_carry_the_tokio_unstable_flag_of_the_cargo_config() {
        // Without it the runtime keeps tokio's LIFO slot and the fan-out writes once per
        // delivery (docs/fanout.md); a RUSTFLAGS variable without the flag would do that.
        // Checked when the test binary is compiled: without the flag it does not build.
        const {
            assert!(
                cfg!(tokio_unstable),
                "built without --cfg tokio_unstable (.cargo/config.toml): RUSTFLAGS set without it?"
            );
        }
    }
}
