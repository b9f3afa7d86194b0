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
use ::stream::deshred::GeyserServer;
use ::stream::entries::EntriesService;
use ::stream::service::PlaceCaps;
use stream::service::{Feed, StreamMetrics, StreamService};
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
    let GrpcOptions {
        address,
        limits,
        max_subscribers,
        max_subscribers_per_ip,
        max_subscribers_per_token,
        shutdown_timeout,
        tokens,
        tls,
        connection_limits,
        connections,
        compression,
        entries,
        deshred,
    } = options;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("binding the gRPC listener on {address}"))?;
    let incoming = incoming::guarded_incoming(
        listener,
        connection_limits,
        connections,
        sessions_stopped.clone(),
    );
    let mut service = StreamService::new(feed, limits, metrics, sessions_stopped.clone())
        .with_max_sessions(max_subscribers)
        .with_max_sessions_per_ip(max_subscribers_per_ip);
    let caps = PlaceCaps {
        total: max_subscribers,
        per_ip: max_subscribers_per_ip,
        per_token: tokens.enabled().then_some(max_subscribers_per_token),
    };
    if tokens.enabled() {
        service = service.with_max_sessions_per_token(max_subscribers_per_token);
    }
    let send: Vec<CompressionEncoding> = compression
        .iter()
        .map(|codec| match codec {
            GrpcCodec::Gzip => CompressionEncoding::Gzip,
            GrpcCodec::Zstd => CompressionEncoding::Zstd,
        })
        .collect();
    let mut service = service
        .into_server()
        .accept_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Zstd);
    for encoding in &send {
        service = service.send_compressed(*encoding);
    }
    let entries = entries.map(|feed| {
        let entries = EntriesService::new(feed, sessions_stopped.clone(), max_subscribers);
        send.iter().fold(
            ShredstreamProxyServer::new(entries)
                .accept_compressed(CompressionEncoding::Gzip)
                .accept_compressed(CompressionEncoding::Zstd),
            |server, encoding| server.send_compressed(*encoding),
        )
    });
    let geyser = deshred.map(|feed| {
        send.iter().fold(
            GeyserServer::new(feed, limits, caps, sessions_stopped.clone())
                .accept_compressed(CompressionEncoding::Gzip)
                .accept_compressed(CompressionEncoding::Zstd),
            |server, encoding| server.send_compressed(*encoding),
        )
    });
    let (health_reporter, health_service) =
        discovery::health(entries.is_some(), geyser.is_some()).await;
    let reflection_v1 = discovery::reflection_v1().context("building gRPC reflection v1")?;
    let reflection_v1alpha =
        discovery::reflection_v1alpha().context("building gRPC reflection v1alpha")?;
    info!(%address, tls = tls.is_some(), "serving stream.Stream/SubscribeDecoded, grpc.health.v1 and reflection");
    let stop = async move {
        shutdown_signal().await;
        discovery::not_serving(&health_reporter).await;
        // End the open streams so the graceful shutdown completes.
        let _ = stop_sessions.send(true);
    };
    let mut builder = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(GRPC_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(GRPC_KEEPALIVE_TIMEOUT));
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls)
            .context("configuring TLS on the gRPC listener")?;
    }
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
    let deadline = async {
        wait_for_stop(sessions_stopped).await;
        tokio::time::sleep(shutdown_timeout).await;
    };
    tokio::select! {
        served = serving => served.with_context(|| format!("gRPC server on {address}"))?,
        () = deadline => {
            // Idle or half-open connections and streams blocked by flow control: dropped with
            // the runtime.
            warn!(?shutdown_timeout, "shutdown deadline passed; closing the connections still open");
        }
    }
    info!("shutting down");
    Ok(())
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
            crate::pipeline::sched::make_realtime_once(realtime_priority, "grpc-runtime");
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
