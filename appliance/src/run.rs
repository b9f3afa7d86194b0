//! `appliance run`: the service. A receive-and-decode worker thread takes shreds from UDP (and,
//! when asked or by default, a replay source sending a capture to it over loopback), decodes them
//! and publishes `SubscribeUpdate`s with `ServerTiming` stamps to the feed that the gRPC
//! `stream.Stream/SubscribeDecoded` service serves, until SIGINT or SIGTERM.
//!
//! This is the first cut of the agreed pipeline: one plain-UDP receive thread that is also the
//! decode worker. The pinned AF_XDP receive threads, rings, worker pool, `/metrics` and `/health`,
//! the archive and the insights API replace or join these pieces in their issues; their flags are
//! parsed already and refused with a clear message until then.

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use decoder::decoder::ShredOutcome;
use decoder::dex::ProgramRegistry;
use decoder::reslot::Reslotter;
use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder, framing};
use ed25519_dalek::SigningKey;
use server::filter::FilterLimits;
use server::stream_service::{Feed, StreamMetrics, StreamService};
use server::updates::{Placement, transaction_updates};

use crate::config::Config;
use crate::metrics::{Metrics, WorkerCounters};
use stream_proto::stream::{self, SubscribeUpdate, subscribe_update::Update};
use tonic::codec::CompressionEncoding;
use tracing::{info, warn};

/// The capture replayed when no source is given: two complete slots of the reference fixtures.
const BUNDLED_CAPTURE: &[&[u8]] = &[
    include_bytes!("../replay/slot-361200000.full.bin"),
    include_bytes!("../replay/slot-361200002.full.bin"),
];

/// The seed of the replay's signing key: looping replays are signed by this key, which the decode
/// worker then verifies as the leader of every replayed slot.
const REPLAY_KEY_SEED: [u8; 32] = *b"shred-appliance-replay-leader-01";

/// HTTP/2 PING interval on idle gRPC connections, and how long to wait for the answer before the
/// connection is dropped (dead peers behind NAT or a cut link are noticed within 30 s).
const GRPC_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const GRPC_KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// Arguments of `appliance run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Configuration file (TOML, see config/appliance.example.toml); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Validate the configuration (file and flags), print the effective settings and exit.
    #[arg(long = "check-config")]
    check_config: bool,
    /// Receive shreds on this UDP address (repeatable).
    #[arg(long = "udp")]
    udp: Vec<SocketAddr>,
    /// Receive shreds over AF_XDP on IFACE:PORT (repeatable).
    #[arg(long = "xdp")]
    xdp: Vec<String>,
    /// Replay this shred capture (length-prefixed, pcap or ar).
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Replay rate in shreds per second [default: 5000].
    #[arg(long = "replay-rate")]
    replay_rate: Option<u64>,
    /// Loop the replay forever.
    #[arg(long = "replay-loop")]
    replay_loop: bool,
    /// gRPC listen address [default: 127.0.0.1:9000].
    #[arg(long)]
    grpc: Option<SocketAddr>,
    /// HTTP listen address (/health, /metrics, archive, insights) [default: 127.0.0.1:8080].
    #[arg(long)]
    http: Option<SocketAddr>,
    /// Archive source directories or URLs (repeatable).
    #[arg(long)]
    archive: Vec<String>,
    /// Upstream validator JSON-RPC URL.
    #[arg(long)]
    upstream: Option<String>,
    /// Override a program id: NAME=BASE58 (NAME as in the specification, e.g. ALPHA_FUN).
    #[arg(long = "program-id", value_name = "NAME=BASE58")]
    program_ids: Vec<String>,
    /// Override the aggregator's program id.
    #[arg(long = "aggregator-id", value_name = "BASE58")]
    aggregator_id: Option<String>,
    /// Updates a subscriber may fall behind before its stream ends with RESOURCE_EXHAUSTED
    /// [default: 16384].
    #[arg(long = "subscriber-queue")]
    subscriber_queue: Option<usize>,
    #[command(flatten)]
    security: crate::security::SecurityArgs,
}

impl RunArgs {
    /// The configuration file (or the defaults) with the flags applied, validated.
    fn effective_config(&self) -> anyhow::Result<Config> {
        let mut config = match &self.config {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        };
        if !self.udp.is_empty() {
            config.sources.udp.clone_from(&self.udp);
        }
        if !self.xdp.is_empty() {
            config.sources.xdp.clone_from(&self.xdp);
        }
        if self.replay.is_some() {
            config.replay.file.clone_from(&self.replay);
        }
        if let Some(rate) = self.replay_rate {
            config.replay.rate = rate;
        }
        config.replay.looping |= self.replay_loop;
        if let Some(address) = self.grpc {
            config.grpc.address = address;
        }
        if let Some(address) = self.http {
            config.http.address = address;
        }
        if let Some(queue) = self.subscriber_queue {
            config.grpc.subscriber_queue = queue;
        }
        if !self.archive.is_empty() {
            config.archive.sources.clone_from(&self.archive);
        }
        if self.upstream.is_some() {
            config.archive.upstream.clone_from(&self.upstream);
        }
        for pair in &self.program_ids {
            let Some((name, id)) = pair.split_once('=') else {
                bail!("--program-id {pair:?}: expected NAME=BASE58");
            };
            config.programs.ids.insert(name.to_owned(), id.to_owned());
        }
        if self.aggregator_id.is_some() {
            config.programs.aggregator.clone_from(&self.aggregator_id);
        }
        self.security.apply(&mut config);
        config.validate()?;
        Ok(config)
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let config = args.effective_config()?;
    if args.check_config {
        // The program ids and the token file are checked too, as a start would.
        crate::programs::registry(
            &program_pairs(&config),
            config.programs.aggregator.as_deref(),
        )?;
        crate::security::tokens(&config)?;
        print!("{}", config.to_toml());
        return Ok(());
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    refuse_unsupported(&config)?;
    let registry = crate::programs::registry(
        &program_pairs(&config),
        config.programs.aggregator.as_deref(),
    )?;
    let tokens = crate::security::tokens(&config)?;
    let grpc_tls = crate::security::grpc_tls(&config)?;
    if tokens.enabled() {
        info!(tokens = ?tokens.enabled(), "access tokens required (gRPC x-token, HTTP x-token or Bearer)");
    }
    let listen = config
        .sources
        .udp
        .first()
        .copied()
        .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)));
    let socket = bind_receiver(listen)?;
    socket.set_read_timeout(Some(Duration::from_millis(100)))?;
    let local = socket.local_addr()?;
    info!(%local, "receiving shreds over UDP");
    let shutdown = Arc::new(AtomicBool::new(false));
    let feed = Feed::new(config.grpc.subscriber_queue);
    let replaying = config.replay.file.is_some() || config.sources.udp.is_empty();
    // The embedded default loops; a looping replay is re-signed, so its key is the leader.
    let looping = replaying && (config.replay.looping || config.replay.file.is_none());
    let reslotter = Reslotter::new(SigningKey::from_bytes(&REPLAY_KEY_SEED));
    let leaders = if looping {
        let key = LeaderSchedule::key_from_bytes(&reslotter.leader())?;
        info!(leader = %bs58::encode(reslotter.leader()).into_string(), "replay leader");
        LeaderSchedule::Fixed(key)
    } else {
        LeaderSchedule::Unchecked
    };
    let stream_metrics = Arc::new(StreamMetrics::default());
    let metrics = Arc::new(Metrics::new(
        Arc::clone(&stream_metrics),
        feed.clone(),
        config.grpc.subscriber_queue,
    ));
    let worker = {
        let decoder_config = config.decoder_config();
        let feed = feed.clone();
        let shutdown = Arc::clone(&shutdown);
        let metrics = Arc::clone(&metrics);
        std::thread::Builder::new()
            .name("decode-worker".into())
            .spawn(move || {
                decode_worker(
                    &socket,
                    &feed,
                    &shutdown,
                    decoder_config,
                    leaders,
                    &registry,
                    &metrics,
                )
            })?
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let render: server::http::MetricsRenderer = {
        let metrics = Arc::clone(&metrics);
        let tokens = Arc::clone(&tokens);
        Arc::new(move || {
            let mut text = metrics.render();
            text.push_str(&tokens.render_metrics());
            text
        })
    };
    let http = server::http::serve(
        config.http.address,
        render,
        server::http::HttpOptions {
            tokens: Arc::clone(&tokens),
            ..server::http::HttpOptions::default()
        },
        wait_for_stop(stopped.clone()),
    )
    .with_context(|| format!("HTTP server on {}", config.http.address))?;
    info!(address = %config.http.address, "serving /health and /metrics");
    if replaying {
        let captures = match &config.replay.file {
            Some(path) => {
                vec![std::fs::read(path).with_context(|| format!("reading {}", path.display()))?]
            }
            None => BUNDLED_CAPTURE.iter().map(|bytes| bytes.to_vec()).collect(),
        };
        let rate = config.replay.rate;
        let shutdown = Arc::clone(&shutdown);
        std::thread::Builder::new()
            .name("replay".into())
            .spawn(move || {
                let result = if looping {
                    replay_loop(&captures, local, rate, &reslotter, &shutdown)
                } else {
                    replay(&captures, local, rate)
                };
                match result {
                    Ok(sent) => info!(sent, "replay finished"),
                    Err(error) => warn!(%error, "replay failed"),
                }
            })?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let grpc = GrpcOptions {
        address: config.grpc.address,
        limits: FilterLimits {
            max_filters: config.grpc.max_filters,
            max_keys: config.grpc.max_keys,
        },
        tokens,
        tls: grpc_tls,
    };
    let served = runtime.block_on(serve_grpc(grpc, feed, stream_metrics, stop, stopped));
    shutdown.store(true, Ordering::Release);
    worker
        .join()
        .map_err(|_| anyhow::anyhow!("decode worker panicked"))?;
    http.join()
        .map_err(|_| anyhow::anyhow!("HTTP server panicked"))??;
    served
}

fn refuse_unsupported(config: &Config) -> anyhow::Result<()> {
    let unsupported = [
        (!config.sources.xdp.is_empty(), "AF_XDP sources (--xdp)"),
        (
            !config.archive.sources.is_empty(),
            "archive sources (--archive)",
        ),
        (
            config.archive.upstream.is_some(),
            "an upstream validator (--upstream)",
        ),
    ];
    if let Some((_, what)) = unsupported.iter().find(|(given, _)| *given) {
        bail!("{what} are not supported by this build yet");
    }
    if config.sources.udp.len() > 1 {
        bail!("one --udp source is supported by this build");
    }
    Ok(())
}

/// The `--program-id` form (NAME=BASE58) of the configured overrides.
fn program_pairs(config: &Config) -> Vec<String> {
    config
        .programs
        .ids
        .iter()
        .map(|(name, id)| format!("{name}={id}"))
        .collect()
}

/// How the gRPC listener is exposed.
struct GrpcOptions {
    address: SocketAddr,
    limits: FilterLimits,
    tokens: Arc<server::auth::TokenSet>,
    tls: Option<tonic::transport::ServerTlsConfig>,
}

/// Serves the stream until SIGINT or SIGTERM: optional TLS, `x-token` authentication when tokens
/// are configured, gzip/zstd compression when the client asks, HTTP/2 keepalive, TCP_NODELAY.
async fn serve_grpc(
    options: GrpcOptions,
    feed: Feed,
    metrics: Arc<StreamMetrics>,
    stop_sessions: tokio::sync::watch::Sender<bool>,
    sessions_stopped: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let GrpcOptions {
        address,
        limits,
        tokens,
        tls,
    } = options;
    let service = StreamService::new(feed, limits, metrics, sessions_stopped)
        .into_server()
        .accept_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Zstd)
        .send_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Zstd);
    info!(%address, tls = tls.is_some(), "serving stream.Stream/SubscribeDecoded");
    let stop = async move {
        shutdown_signal().await;
        // End the open streams so the graceful shutdown completes.
        let _ = stop_sessions.send(true);
    };
    let mut builder = tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .http2_keepalive_interval(Some(GRPC_KEEPALIVE_INTERVAL))
        .http2_keepalive_timeout(Some(GRPC_KEEPALIVE_TIMEOUT));
    if let Some(tls) = tls {
        builder = builder
            .tls_config(tls)
            .context("configuring TLS on the gRPC listener")?;
    }
    builder
        .layer(tonic::service::InterceptorLayer::new(
            tokens.grpc_interceptor(),
        ))
        .add_service(service)
        .serve_with_shutdown(address, stop)
        .await
        .with_context(|| format!("gRPC server on {address}"))?;
    info!("shutting down");
    Ok(())
}

/// Resolves once the stop flag turns true (or its sender is gone).
async fn wait_for_stop(mut stopped: tokio::sync::watch::Receiver<bool>) {
    while !*stopped.borrow() {
        if stopped.changed().await.is_err() {
            return;
        }
    }
}

async fn shutdown_signal() {
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

/// Binds the receive socket asking for a 64 MiB kernel buffer, so bursts are absorbed while the
/// decoder works. The kernel caps the request at `net.core.rmem_max` (`docs/deploy.md` raises it;
/// the pipeline's receive module will use SO_RCVBUFFORCE where it runs with CAP_NET_ADMIN).
fn bind_receiver(listen: SocketAddr) -> anyhow::Result<UdpSocket> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(listen),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )?;
    const RECEIVE_BUFFER_BYTES: usize = 64 << 20;
    socket.set_recv_buffer_size(RECEIVE_BUFFER_BYTES)?;
    socket
        .bind(&listen.into())
        .with_context(|| format!("binding UDP {listen}"))?;
    Ok(socket.into())
}

/// Plays the captures in a loop until shutdown, renumbering every slot so the passes follow each
/// other like a live chain: slot gaps of the capture are kept, each slot's parent is the slot
/// played before it, and each first FEC set chains to the previous slot's last root.
fn replay_loop(
    captures: &[Vec<u8>],
    target: SocketAddr,
    rate: u64,
    reslotter: &Reslotter,
    shutdown: &AtomicBool,
) -> anyhow::Result<u64> {
    let mut slots: Vec<(u64, Vec<&[u8]>)> = Vec::new();
    for capture in captures {
        for record in framing::records(capture) {
            let payload = record.context("malformed replay capture")?.payload;
            let Some((slot, _)) = decoder::shred::peek_slot_and_fec_set(payload) else {
                continue;
            };
            match slots.iter_mut().find(|(known, _)| *known == slot) {
                Some((_, shreds)) => shreds.push(payload),
                None => slots.push((slot, vec![payload])),
            }
        }
    }
    let Some(&(first_slot, _)) = slots.first() else {
        bail!("the replay capture is empty");
    };
    let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let pacer = Pacer::new(rate);
    let mut sent: u64 = 0;
    let mut previous = (first_slot.saturating_sub(1), [0u8; 32]);
    while !shutdown.load(Ordering::Acquire) {
        let mut captured_previous: Option<u64> = None;
        for (captured, shreds) in &slots {
            let gap = captured_previous.map_or(1, |before| captured.saturating_sub(before).max(1));
            captured_previous = Some(*captured);
            let slot = previous.0 + gap;
            let renumbered = reslotter
                .reslot(shreds, slot, previous.0, &previous.1)
                .with_context(|| format!("renumbering captured slot {captured}"))?;
            for shred in &renumbered.shreds {
                pacer.wait(sent);
                socket.send_to(shred, target)?;
                sent += 1;
            }
            previous = (slot, renumbered.last_root);
            if shutdown.load(Ordering::Acquire) {
                break;
            }
        }
    }
    Ok(sent)
}

/// Paces a send loop at a fixed rate: the `n`-th datagram goes out `n / rate` seconds after the
/// start, so short stalls are caught up instead of accumulating.
struct Pacer {
    started: Instant,
    rate: u64,
}

impl Pacer {
    fn new(rate: u64) -> Self {
        Self {
            started: Instant::now(),
            rate,
        }
    }

    /// Sleeps until datagram `sent` is due.
    fn wait(&self, sent: u64) {
        let due = Duration::from_nanos(sent.saturating_mul(1_000_000_000) / self.rate);
        if let Some(wait) = due.checked_sub(self.started.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

/// Sends every record of the captures to `target`, paced at `rate` shreds per second.
fn replay(captures: &[Vec<u8>], target: SocketAddr, rate: u64) -> anyhow::Result<u64> {
    let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let pacer = Pacer::new(rate);
    let mut sent: u64 = 0;
    for capture in captures {
        for record in framing::records(capture) {
            let record = record.context("malformed replay capture")?;
            pacer.wait(sent);
            socket.send_to(record.payload, target)?;
            sent += 1;
        }
    }
    Ok(sent)
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}

/// How often the worker flushes its counters for `/metrics`.
const METRICS_FLUSH: Duration = Duration::from_millis(100);

/// Receives datagrams, decodes them, and publishes slot notifications and decoded updates.
fn decode_worker(
    socket: &UdpSocket,
    feed: &Feed,
    shutdown: &AtomicBool,
    decoder_config: DecoderConfig,
    leaders: LeaderSchedule,
    registry: &ProgramRegistry,
    metrics: &Metrics,
) {
    let mut decoder = ShredDecoder::new(decoder_config, leaders);
    let mut counters = WorkerCounters::default();
    let mut buffer = [0u8; 2048];
    let mut highest_notified: Option<u64> = None;
    let mut last_flush = Instant::now();
    while !shutdown.load(Ordering::Acquire) {
        if last_flush.elapsed() >= METRICS_FLUSH {
            flush(&mut counters, &decoder, metrics);
            last_flush = Instant::now();
        }
        let len = match socket.recv(&mut buffer) {
            Ok(len) => len,
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(error) => {
                warn!(%error, "receive failed");
                continue;
            }
        };
        counters.datagrams += 1;
        counters.bytes += len as u64;
        let rx_ns = unix_nanos();
        match decoder.ingest(&buffer[..len], rx_ns) {
            ShredOutcome::Stored { .. } => counters.stored += 1,
            ShredOutcome::Redundant { .. } => counters.redundant += 1,
            ShredOutcome::Rejected { reason, .. } => {
                *counters.rejected.entry(reason.label()).or_default() += 1;
            }
        }
        if let Some(highest) = decoder.highest_slot()
            && highest_notified.is_none_or(|notified| highest > notified)
        {
            highest_notified = Some(highest);
            counters.slot_notifications += 1;
            feed.publish(SubscribeUpdate {
                update: Some(Update::Slot(stream::SlotNotification { slot: highest })),
            });
        }
        let capture_done = unix_nanos();
        while let Some(batch) = decoder.next_batch() {
            let deshred_done = unix_nanos();
            counters.transactions += batch.entries.transaction_count();
            for (tx_index, transaction) in batch.entries.transactions().enumerate() {
                let placement = Placement {
                    slot: batch.span.slot,
                    tx_index: tx_index as u32,
                };
                let updates =
                    transaction_updates(&transaction, registry, placement, &mut counters.decode);
                let decode_done = unix_nanos();
                for mut update in updates {
                    let timing = stream::ServerTiming {
                        first_read_unix_nanos: batch.first_rx_ns.min(capture_done),
                        capture_done_unix_nanos: capture_done,
                        deshred_done_unix_nanos: deshred_done,
                        decode_done_unix_nanos: decode_done,
                        publish_unix_nanos: unix_nanos(),
                        subscriber_recv_unix_nanos: 0,
                    };
                    counters.record_timing(&timing);
                    stamp(&mut update, timing);
                    feed.publish(update);
                    counters.updates_published += 1;
                }
            }
        }
    }
    flush(&mut counters, &decoder, metrics);
    info!(
        datagrams = counters.datagrams,
        published = counters.updates_published,
        "decode worker stopped"
    );
}

/// The housekeeping flush: decoder gauges and counters into the worker's counters, then a copy
/// for `/metrics`.
fn flush(counters: &mut WorkerCounters, decoder: &ShredDecoder, metrics: &Metrics) {
    counters.fec = decoder.fec_counters();
    counters.batches = decoder.batch_counters();
    counters.sets_in_flight = decoder.sets_in_flight();
    counters.pending_batches = decoder.pending_batches();
    metrics.flush(counters);
}

fn stamp(update: &mut SubscribeUpdate, timing: stream::ServerTiming) {
    match update.update.as_mut() {
        Some(Update::Transaction(transaction)) => transaction.server_timing = Some(timing),
        Some(Update::Delta(delta)) => {
            if let Some(envelope) = delta.envelope.as_mut() {
                envelope.server_timing = Some(timing);
            }
        }
        _ => {}
    }
}
