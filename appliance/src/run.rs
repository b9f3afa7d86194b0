//! `appliance run`: the service. Receive threads take shreds from UDP (and, when asked or by
//! default, a replay source sending a capture to it over loopback) and shard them over the worker
//! pool (`crate::workers`, `--workers N`), which decodes them and publishes `SubscribeUpdate`s
//! with `ServerTiming` stamps to the feed that the gRPC `stream.Stream/SubscribeDecoded` service
//! serves, until SIGINT or SIGTERM.
//!
//! Receive side (`crate::receive`): `--udp ADDR:PORT` sources read with batched `recvmmsg`,
//! `--xdp IFACE:PORT` sources read over AF_XDP (the XDP program attached at start and detached on
//! exit), one receive thread per source or NIC queue, copying each datagram into the bounded ring
//! of the worker that owns its FEC set. The archive and the insights API join in their issues; their flags are parsed already
//! and refused with a clear message until then.

use std::net::{SocketAddr, UdpSocket};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use decoder::reslot::Reslotter;
use decoder::{LeaderSchedule, framing};
use ed25519_dalek::SigningKey;
use server::filter::FilterLimits;
use server::stream_service::{Feed, StreamMetrics, StreamService};

use crate::config::Config;
use crate::metrics::{Metrics, RingGauge};
use crate::receive::SourceMetrics;
use crate::receive::thread::{PoolConfig, SourceSpec};
use crate::receive::udp::UdpSource;
use crate::receive::xdp::{AttachMode, BindPreference, XdpAttachment, XdpSpec};
use crate::replay_send::{BurstSender, fec_set_runs};
use crate::workers::{PoolOptions, Shared as WorkerShared};
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
    /// Receive shreds over AF_XDP on IFACE:PORT (repeatable; every receive queue of the
    /// interface gets a socket and a pinned thread).
    #[arg(long = "xdp", value_name = "IFACE:PORT")]
    xdp: Vec<String>,
    /// How to attach the XDP program: native (driver) mode, generic (skb) mode, or native with
    /// a fallback to generic.
    #[arg(long = "xdp-attach", value_enum, default_value_t = AttachMode::Auto)]
    xdp_attach: AttachMode,
    /// How to bind the AF_XDP sockets: zero-copy with a fallback to copy mode, or only one.
    #[arg(long = "xdp-bind", value_enum, default_value_t = BindPreference::Auto)]
    xdp_bind: BindPreference,
    /// Busy-poll the AF_XDP rings (SO_PREFER_BUSY_POLL, SO_BUSY_POLL, spinning) instead of
    /// sleeping in poll(2): lowest latency, one full core per queue.
    #[arg(long = "busy-poll")]
    busy_poll: bool,
    /// Cores for the receive threads, in source order (AF_XDP: queue order); default: queue q
    /// on core q modulo the core count, UDP sources unpinned.
    #[arg(long = "rx-cores", value_delimiter = ',')]
    rx_cores: Vec<usize>,
    /// Worker threads (1..=64) [default: 1 on ≤ 2 cores, else cores − receive threads].
    #[arg(long = "workers")]
    workers: Option<usize>,
    /// Cores for the workers, in worker order [default: unpinned].
    #[arg(long = "worker-cores", value_delimiter = ',')]
    worker_cores: Vec<usize>,
    /// SCHED_FIFO priority (1-99) of the receive and worker threads; 0 = off [default: 0].
    #[arg(long = "realtime-priority")]
    realtime_priority: Option<u8>,
    /// SCHED_FIFO priority (1-99) of the gRPC runtime's worker threads, meant below
    /// --realtime-priority; 0 = off [default: 0].
    #[arg(long = "grpc-realtime-priority")]
    grpc_realtime_priority: Option<u8>,
    /// Datagrams per receive batch (one recvmmsg call or one RX ring pass) [default: 64].
    #[arg(long = "rx-batch")]
    rx_batch: Option<NonZeroUsize>,
    /// Kernel receive buffer of each UDP socket, in bytes [default: 64 MiB].
    #[arg(long = "rx-buffer")]
    rx_buffer: Option<usize>,
    /// Replay this shred capture (length-prefixed, pcap or ar).
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Replay rate in shreds per second [default: 5000].
    #[arg(long = "replay-rate")]
    replay_rate: Option<u64>,
    /// Loop the replay forever.
    #[arg(long = "replay-loop")]
    replay_loop: bool,
    /// Send each FEC set's shreds back to back (the set's first shred is paced, so the average
    /// stays at --replay-rate), as a leader emits them, instead of one shred every 1/rate s.
    #[arg(long = "replay-burst")]
    replay_burst: bool,
    /// gRPC listen address [default: 127.0.0.1:9000].
    #[arg(long)]
    grpc: Option<SocketAddr>,
    /// HTTP listen address (/health, /metrics, archive, insights) [default: 127.0.0.1:8080].
    #[arg(long)]
    http: Option<SocketAddr>,
    /// Archive source: a directory or an http(s) base URL (`URL#FIRST[-LAST]` limits the epochs
    /// probed). Repeatable, mixed; the first source holding an epoch wins.
    #[arg(long)]
    archive: Vec<String>,
    /// Upstream validator JSON-RPC URL (http or https).
    #[arg(long)]
    upstream: Option<String>,
    /// PEM file of extra CA certificates trusted for an https upstream.
    #[arg(long = "upstream-ca")]
    upstream_ca: Option<PathBuf>,
    /// Pause between archive catalog checks (new or replaced epochs), e.g. 24h, 10m, 500ms
    /// [default: 24h].
    #[arg(long = "archive-check-interval")]
    archive_check_interval: Option<String>,
    /// actix worker threads of the HTTP address (JSON-RPC archive throughput scales with them)
    /// [default: 1].
    #[arg(long = "http-workers")]
    http_workers: Option<usize>,
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
    /// gRPC streams open at once; one more is refused with RESOURCE_EXHAUSTED [default: 10000].
    #[arg(long = "max-subscribers")]
    max_subscribers: Option<usize>,
    #[command(flatten)]
    security: crate::security::SecurityArgs,
    #[command(flatten)]
    insights: InsightsArgs,
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
        if self.workers.is_some() {
            config.workers.count = self.workers;
        }
        if !self.worker_cores.is_empty() {
            config.workers.cores.clone_from(&self.worker_cores);
        }
        if let Some(priority) = self.realtime_priority {
            config.workers.realtime_priority = priority;
        }
        if let Some(priority) = self.grpc_realtime_priority {
            config.grpc.realtime_priority = priority;
        }
        if let Some(batch) = self.rx_batch {
            config.sources.receive_batch = batch.get();
        }
        if let Some(bytes) = self.rx_buffer {
            config.sources.socket_buffer_bytes = bytes;
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
        if let Some(workers) = self.http_workers {
            config.http.workers = workers;
        }
        if let Some(max) = self.max_subscribers {
            config.grpc.max_subscribers = max;
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
        if self.upstream_ca.is_some() {
            config.archive.upstream_ca.clone_from(&self.upstream_ca);
        }
        if let Some(interval) = &self.archive_check_interval {
            config.archive.catalog_interval.clone_from(interval);
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

// ---- insights (issue 8): `--upstream` enables the block ingest and the `/v1` API ----

/// Insights flags of `appliance run` (used with `--upstream`).
#[derive(clap::Args, Debug)]
pub struct InsightsArgs {
    /// Insights store file.
    #[arg(long = "insights-db", default_value = "data/insights.redb")]
    insights_db: PathBuf,
    /// How long history snapshots are kept (e.g. 7d, 12h).
    #[arg(long = "insights-retention", default_value = "7d", value_parser = server::insights::parse_duration)]
    insights_retention: Duration,
    /// How long full per-block statistics are kept (e.g. 1h).
    #[arg(long = "insights-block-retention", default_value = "1h", value_parser = server::insights::parse_duration)]
    insights_block_retention: Duration,
    /// Pause between polls of the upstream's confirmed tip once caught up (e.g. 200ms).
    #[arg(long = "insights-poll", default_value = "200ms", value_parser = server::insights::parse_duration)]
    insights_poll: Duration,
}

/// Starts the insights ingest when `--upstream` is given; the `/v1` routes either way (503
/// without an upstream).
fn start_insights(
    upstream: Option<&str>,
    args: &InsightsArgs,
    trust: &server::tls_client::UpstreamTrust,
) -> anyhow::Result<(server::http::HttpMount, Option<server::insights::Insights>)> {
    let Some(upstream) = upstream else {
        return Ok((server::insights::disabled_mount(), None));
    };
    let mut config = server::insights::InsightsConfig::new(upstream, &args.insights_db);
    config.retention = args.insights_retention;
    config.block_retention = args.insights_block_retention;
    config.poll_interval = args.insights_poll;
    config.upstream_trust = trust.clone();
    let insights = server::insights::Insights::start(config)
        .with_context(|| format!("starting insights (store {})", args.insights_db.display()))?;
    info!(%upstream, store = %args.insights_db.display(), "insights ingest started");
    Ok((insights.mount(), Some(insights)))
}
// ---- end insights ----

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
        info!("access tokens required (gRPC x-token, HTTP x-token or Bearer)");
    }
    let shutdown = Arc::new(AtomicBool::new(false));
    let feed = Feed::new(config.grpc.subscriber_queue);
    let replaying = config.replay.file.is_some()
        || (config.sources.udp.is_empty() && config.sources.xdp.is_empty());
    let receive = open_sources(&args, &config, replaying)?;
    let local = receive.replay_target;
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
    let cores = core_affinity::get_core_ids().map_or(1, |ids| ids.len());
    let pool_options = PoolOptions {
        workers: config
            .workers
            .count
            .unwrap_or_else(|| crate::workers::default_workers(cores, receive.sources.len())),
        ring_slots: config.sources.ring_slots,
        forward_slots: config.workers.forward_slots,
        park_timeout: Duration::from_micros(config.workers.park_timeout_us),
        cores: config.workers.cores.clone(),
        realtime_priority: config.workers.realtime_priority,
    };
    let (source_rings, worker_rings, ring_stats) =
        crate::workers::build_rings(receive.sources.len(), &pool_options);
    info!(
        workers = pool_options.workers,
        receive_threads = receive.sources.len(),
        ring_slots = pool_options.ring_slots,
        forward_slots = pool_options.forward_slots,
        "worker pool"
    );
    let metrics = Arc::new(Metrics::new(
        Arc::clone(&stream_metrics),
        feed.clone(),
        config.grpc.subscriber_queue,
        receive.metrics.clone(),
        ring_stats
            .into_iter()
            .map(|stats| Box::new(stats) as Box<dyn RingGauge>)
            .collect(),
    ));
    let pool = PoolConfig {
        batch_capacity: config.sources.receive_batch,
        realtime_priority: config.workers.realtime_priority,
    };
    let receivers = crate::receive::thread::spawn(receive.sources, pool, source_rings, &shutdown)?;
    let shared = Arc::new(WorkerShared {
        feed: feed.clone(),
        registry: Arc::new(registry),
        metrics: Arc::clone(&metrics),
        shutdown: Arc::clone(&shutdown),
        decoder_config: config.decoder_config(),
        leaders,
        highest_notified: std::sync::Mutex::new(None),
    });
    let workers = crate::workers::spawn(worker_rings, &pool_options, &shared)?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    // --- JSON-RPC archive (issue 7): `POST /` when --archive or --upstream is given. ---
    let trust = server::tls_client::UpstreamTrust::load(config.archive.upstream_ca.as_deref())?;
    // Before any source is opened: remote files take the shared range cache at open.
    archive::rangecache::configure((config.archive.http_cache_mb as u64) << 20);
    archive::slotmemo::configure(config.archive.slot_memo_entries);
    let rpc = server::rpc::from_flags(
        &config.archive.sources,
        config.archive.upstream.as_deref(),
        &trust,
    )?;
    if let Some(catalog) = rpc.as_ref().and_then(|rpc| rpc.catalog()) {
        let interval = config.archive.catalog_interval()?;
        catalog.spawn_checks(interval)?;
        info!(?interval, "archive catalog checks scheduled");
    }
    let mut http_options = server::http::HttpOptions {
        workers: config.http.workers,
        tokens: Arc::clone(&tokens),
        ..server::http::HttpOptions::default()
    };
    if let Some(rpc) = &rpc {
        http_options.mounts.push(rpc.mount());
        info!(archives = ?config.archive.sources, upstream = ?config.archive.upstream, "serving the JSON-RPC archive at POST /");
    }
    // --- end JSON-RPC archive ---
    let render: server::http::MetricsRenderer = {
        let metrics = Arc::clone(&metrics);
        let tokens = Arc::clone(&tokens);
        Arc::new(move || {
            let mut text = metrics.render();
            text.push_str(&tokens.render_metrics());
            if let Some(rpc) = &rpc {
                rpc.render_metrics(&mut text);
            }
            text
        })
    };
    let (insights_mount, insights) =
        start_insights(config.archive.upstream.as_deref(), &args.insights, &trust)?;
    http_options.mounts.push(insights_mount);
    let http = server::http::serve(
        config.http.address,
        render,
        http_options,
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
        let pacing = Pacing {
            rate: config.replay.rate,
            per_fec_set: args.replay_burst,
        };
        let shutdown = Arc::clone(&shutdown);
        std::thread::Builder::new()
            .name("replay".into())
            .spawn(move || {
                let result = if looping {
                    replay_loop(&captures, local, pacing, &reslotter, &shutdown)
                } else {
                    replay(&captures, local, pacing)
                };
                match result {
                    Ok(sent) => info!(sent, "replay finished"),
                    Err(error) => warn!(%error, "replay failed"),
                }
            })?;
    }
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.worker_threads(2).enable_all();
    // Without the LIFO slot, the HTTP/2 connection task that a session's frame wakes runs after
    // the other sessions already woken by the same publish, so one write carries the frames
    // of every stream of the connection instead of one write per stream (docs/fanout.md).
    // The builder offers this only under `--cfg tokio_unstable` (.cargo/config.toml).
    #[cfg(tokio_unstable)]
    runtime.disable_lifo_slot();
    // Only the runtime's worker threads park, each as soon as it is first idle: the hook gives
    // each its real-time policy once, and leaves the blocking pool ordinary (docs/fanout.md).
    let runtime_priority = config.grpc.realtime_priority;
    if runtime_priority > 0 {
        runtime.on_thread_park(move || {
            crate::sched::make_realtime_once(runtime_priority, "grpc-runtime");
        });
    }
    let runtime = runtime.build().context("starting the async runtime")?;
    let grpc = GrpcOptions {
        address: config.grpc.address,
        limits: FilterLimits {
            max_filters: config.grpc.max_filters,
            max_keys: config.grpc.max_keys,
        },
        max_subscribers: config.grpc.max_subscribers,
        tokens,
        tls: grpc_tls,
    };
    let served = runtime.block_on(serve_grpc(grpc, feed, stream_metrics, stop, stopped));
    shutdown.store(true, Ordering::Release);
    for worker in workers {
        worker
            .join()
            .map_err(|_| anyhow::anyhow!("worker panicked"))?;
    }
    for receiver in receivers {
        receiver
            .join()
            .map_err(|_| anyhow::anyhow!("receive thread panicked"))?;
    }
    // Detach the XDP programs now that nothing reads their sockets.
    drop(receive.attachments);
    http.join()
        .map_err(|_| anyhow::anyhow!("HTTP server panicked"))??;
    if let Some(insights) = insights {
        insights.stop();
    }
    served
}

fn refuse_unsupported(config: &Config) -> anyhow::Result<()> {
    if config.sources.receive_batch > crate::receive::batch::BATCH_CAPACITY_MAX {
        bail!(
            "sources.receive_batch (--rx-batch) must be at most {}",
            crate::receive::batch::BATCH_CAPACITY_MAX
        );
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
    max_subscribers: usize,
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
        max_subscribers,
        tokens,
        tls,
    } = options;
    let service = StreamService::new(feed, limits, metrics, sessions_stopped)
        .with_max_sessions(max_subscribers)
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

/// Plays the captures in a loop until shutdown, renumbering every slot so the passes follow each
/// other like a live chain: slot gaps of the capture are kept, each slot's parent is the slot
/// played before it, and each first FEC set chains to the previous slot's last root.
fn replay_loop(
    captures: &[Vec<u8>],
    target: SocketAddr,
    pacing: Pacing,
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
    let mut sender = ReplaySender::new(target, pacing)?;
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
            let shreds: Vec<&[u8]> = renumbered.shreds.iter().map(Vec::as_slice).collect();
            sender.send(&shreds)?;
            previous = (slot, renumbered.last_root);
            if shutdown.load(Ordering::Acquire) {
                break;
            }
        }
    }
    Ok(sender.sent)
}

/// How a replay spaces its datagrams.
#[derive(Debug, Clone, Copy)]
struct Pacing {
    /// Shreds per second, on average.
    rate: u64,
    /// Pace only the first shred of each FEC set and send the rest of the set at once.
    per_fec_set: bool,
}

/// Paces a send loop at a fixed rate: the `n`-th datagram goes out `n / rate` seconds after the
/// start, so short stalls are caught up instead of accumulating. In per-FEC-set mode only a
/// datagram that starts a new FEC set waits for its due time; the rest of its set follows at once.
struct Pacer {
    started: Instant,
    pacing: Pacing,
    /// (slot, fec_set_index) of the previous datagram, in per-FEC-set mode.
    current_set: Option<(u64, u32)>,
}

impl Pacer {
    fn new(pacing: Pacing) -> Self {
        Self {
            started: Instant::now(),
            pacing,
            current_set: None,
        }
    }

    /// Sleeps until datagram `sent` (the shred `payload`) is due.
    fn wait(&mut self, sent: u64, payload: &[u8]) {
        if let Some(due) = self.due(sent, payload)
            && let Some(wait) = due.checked_sub(self.started.elapsed())
        {
            std::thread::sleep(wait);
        }
    }

    /// When datagram `sent` is due after the start, or `None` when it goes out at once (the
    /// rest of a FEC set in per-FEC-set mode).
    fn due(&mut self, sent: u64, payload: &[u8]) -> Option<Duration> {
        if self.pacing.per_fec_set {
            let set = decoder::shred::peek_slot_and_fec_set(payload);
            if set.is_some() && set == self.current_set {
                return None;
            }
            self.current_set = set;
        }
        Some(Duration::from_nanos(
            sent.saturating_mul(1_000_000_000) / self.pacing.rate,
        ))
    }
}

/// Sends every record of the captures to `target`, paced at `pacing.rate` shreds per second.
fn replay(captures: &[Vec<u8>], target: SocketAddr, pacing: Pacing) -> anyhow::Result<u64> {
    let mut sender = ReplaySender::new(target, pacing)?;
    for capture in captures {
        // Everything before a malformed record still goes out, then the error.
        let mut shreds = Vec::new();
        let mut malformed = None;
        for record in framing::records(capture) {
            match record {
                Ok(record) => shreds.push(record.payload),
                Err(error) => {
                    malformed = Some(error);
                    break;
                }
            }
        }
        sender.send(&shreds)?;
        if let Some(error) = malformed {
            return Err(error).context("malformed replay capture");
        }
    }
    Ok(sender.sent)
}

/// Sends paced shreds: one `send` per shred in uniform mode; in per-FEC-set mode one
/// `sendmmsg` per run of a set's shreds, after waiting for the set's due time.
struct ReplaySender {
    transport: ReplayTransport,
    pacer: Pacer,
    /// Datagrams sent so far.
    sent: u64,
}

/// The socket of a replay, by pacing mode.
enum ReplayTransport {
    Uniform {
        socket: UdpSocket,
        target: SocketAddr,
    },
    PerFecSet(BurstSender),
}

impl ReplaySender {
    fn new(target: SocketAddr, pacing: Pacing) -> anyhow::Result<Self> {
        let transport = if pacing.per_fec_set {
            ReplayTransport::PerFecSet(BurstSender::connect(target).context("replay burst socket")?)
        } else {
            ReplayTransport::Uniform {
                socket: UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?,
                target,
            }
        };
        Ok(Self {
            transport,
            pacer: Pacer::new(pacing),
            sent: 0,
        })
    }

    fn send(&mut self, shreds: &[&[u8]]) -> anyhow::Result<()> {
        match &mut self.transport {
            ReplayTransport::PerFecSet(burst) => {
                for run in fec_set_runs(shreds) {
                    if let Some(first) = run.first() {
                        self.pacer.wait(self.sent, first);
                    }
                    self.sent += burst.send(run).context("replay sendmmsg")? as u64;
                }
            }
            ReplayTransport::Uniform { socket, target } => {
                for shred in shreds {
                    self.pacer.wait(self.sent, shred);
                    socket.send_to(shred, *target)?;
                    self.sent += 1;
                }
            }
        }
        Ok(())
    }
}

/// The receive side of a run: sources for the receive threads, their counters for `/metrics`,
/// the XDP attachments to keep until shutdown, and where a replay sends.
struct ReceiveSetup {
    sources: Vec<SourceSpec>,
    metrics: Vec<Arc<SourceMetrics>>,
    attachments: Vec<XdpAttachment>,
    replay_target: SocketAddr,
}

/// Opens every `--udp` and `--xdp` source (and a loopback UDP source as the replay's target
/// when replaying without `--udp`).
fn open_sources(args: &RunArgs, config: &Config, replaying: bool) -> anyhow::Result<ReceiveSetup> {
    let mut setup = ReceiveSetup {
        sources: Vec::new(),
        metrics: Vec::new(),
        attachments: Vec::new(),
        replay_target: SocketAddr::from(([127, 0, 0, 1], 0)),
    };
    let mut udp = config.sources.udp.clone();
    if replaying && udp.is_empty() {
        udp.push(SocketAddr::from(([127, 0, 0, 1], 0)));
    }
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let coalesce_messages = if config.sources.udp_gro {
        config.sources.receive_batch
    } else {
        0
    };
    for (index, address) in udp.iter().enumerate() {
        let source = UdpSource::bind(
            *address,
            config.sources.socket_buffer_bytes,
            coalesce_messages,
        )
        .map_err(|error| {
            warn!(reason = error.label(), %address, "UDP source failed");
            anyhow::Error::new(error)
        })?;
        let local = source.local_addr()?;
        if index == 0 {
            setup.replay_target = local;
        }
        let core = args
            .rx_cores
            .get(setup.sources.len())
            .map(|&id| core_affinity::CoreId { id });
        push_source(
            &mut setup,
            Box::new(source),
            "udp",
            local.to_string(),
            "recvmmsg",
            core,
        );
    }
    for spec in xdp_specs(args, &config.sources.xdp)? {
        let (attachment, sockets) = crate::receive::xdp::start(&spec).map_err(|error| {
            warn!(reason = error.label(), iface = %spec.iface, "AF_XDP set-up failed");
            anyhow::Error::new(error).context(format!("AF_XDP on {}", spec.iface))
        })?;
        for (queue, socket) in sockets.into_iter().enumerate() {
            let mode = format!("{}-{}", socket.mode().label(), attachment.attach);
            let core = match args.rx_cores.get(setup.sources.len()) {
                Some(&id) => Some(core_affinity::CoreId { id }),
                None => cores.get(queue % cores.len().max(1)).copied(),
            };
            let endpoint = format!("{}/{queue}", spec.iface);
            push_source(&mut setup, Box::new(socket), "xdp", endpoint, &mode, core);
        }
        setup.attachments.push(attachment);
    }
    Ok(setup)
}

fn push_source(
    setup: &mut ReceiveSetup,
    source: Box<dyn crate::receive::ShredSource>,
    kind: &'static str,
    endpoint: String,
    mode: &str,
    core: Option<core_affinity::CoreId>,
) {
    let metrics = Arc::new(SourceMetrics::new(kind, endpoint, mode.to_owned()));
    setup.metrics.push(Arc::clone(&metrics));
    setup.sources.push(SourceSpec {
        source,
        metrics,
        core,
    });
}

/// Groups the `--xdp IFACE:PORT` flags by interface: one program (all its ports) per interface.
fn xdp_specs(args: &RunArgs, xdp: &[String]) -> anyhow::Result<Vec<XdpSpec>> {
    let mut specs: Vec<XdpSpec> = Vec::new();
    for flag in xdp {
        let (iface, port) = flag
            .rsplit_once(':')
            .with_context(|| format!("--xdp {flag}: expected IFACE:PORT"))?;
        let port: u16 = port
            .parse()
            .ok()
            .filter(|&port| port != 0)
            .with_context(|| format!("--xdp {flag}: bad port"))?;
        if iface.is_empty() {
            bail!("--xdp {flag}: empty interface name");
        }
        match specs.iter_mut().find(|spec| spec.iface == iface) {
            Some(spec) if !spec.ports.contains(&port) => spec.ports.push(port),
            Some(_) => {}
            None => specs.push(XdpSpec {
                iface: iface.to_owned(),
                ports: vec![port],
                attach: args.xdp_attach,
                bind: args.xdp_bind,
                busy_poll: args.busy_poll,
            }),
        }
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A header-sized payload naming `slot` and `fec_set_index` at their wire offsets.
    fn shred(slot: u64, fec_set_index: u32) -> Vec<u8> {
        let mut payload = vec![0u8; 88];
        payload[65..73].copy_from_slice(&slot.to_le_bytes());
        payload[79..83].copy_from_slice(&fec_set_index.to_le_bytes());
        payload
    }

    #[test]
    fn uniform_pacing_spaces_every_datagram() {
        let mut pacer = Pacer::new(Pacing {
            rate: 1_000,
            per_fec_set: false,
        });
        let set = shred(7, 0);
        let due: Vec<_> = (0..3).map(|sent| pacer.due(sent, &set)).collect();
        let ms = Duration::from_millis;
        assert_eq!(due, [Some(ms(0)), Some(ms(1)), Some(ms(2))]);
    }

    #[test]
    fn burst_pacing_waits_only_at_each_new_fec_set() {
        let mut pacer = Pacer::new(Pacing {
            rate: 1_000,
            per_fec_set: true,
        });
        let sends = [
            shred(7, 0),
            shred(7, 0),
            shred(7, 0),
            shred(7, 32),
            shred(7, 32),
            shred(8, 32),
        ];
        let due: Vec<_> = sends
            .iter()
            .enumerate()
            .map(|(sent, payload)| pacer.due(sent as u64, payload))
            .collect();
        let ms = Duration::from_millis;
        // The set starting at datagram 3 is due 3 ms in, keeping the average at 1,000/s; the
        // same index in another slot is another set.
        assert_eq!(
            due,
            [Some(ms(0)), None, None, Some(ms(3)), None, Some(ms(5))]
        );
    }
}
