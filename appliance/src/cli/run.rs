//! `appliance run`: the wiring of the service, nothing else. Receive threads (`crate::receive`)
//! shard datagrams over the worker pool (`crate::pipeline`), which decodes them and publishes
//! stamped updates to the feed that the gRPC stream serves (`crate::grpc`); the HTTP address
//! carries `/health`, `/metrics`, the JSON-RPC archive and insights; a replay (`crate::replay`)
//! feeds the embedded default. Runs until SIGINT or SIGTERM. docs/architecture.md draws it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use decoder::LeaderSchedule;
use front::redact::redact_url;
use stream::fanout::{QueueBounds, RecentBounds};
use stream::filter::FilterLimits;
use stream::service::{Feed, StreamMetrics};
use tracing::info;

use crate::config::Config;
use crate::config::flags::RunArgs;
use crate::frontends::StreamParts;
use crate::grpc::incoming::ConnectionLimits;
use crate::grpc::{GrpcOptions, serve_grpc};
use crate::metrics::{Metrics, RingGauge};
use crate::pipeline::workers::{PoolOptions, Shared as WorkerShared};
use crate::receive::setup::{ReceiveSetup, open_sources};
use crate::receive::thread::PoolConfig;
use crate::replay::Pacing;

/// The threads of the receive → decode path, joined at shutdown.
struct Pipeline {
    receivers: Vec<JoinHandle<()>>,
    workers: Vec<JoinHandle<()>>,
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let mut config = args.effective_config()?;
    if args.check_config {
        crate::cli::check_config(&config)?;
        print_redacted(&config);
        return Ok(());
    }
    crate::cli::init_logging(config.log.format);
    let fd_limit = crate::fd_limit::raise();
    let registry = crate::config::programs::from_config(&config)?;
    let tokens = crate::security::tokens(&config)?;
    let grpc_tls = crate::security::grpc_tls(&config)?;
    if tokens.enabled() {
        info!("access tokens required (gRPC x-token, HTTP x-token or Bearer)");
    }
    // Decided on the configuration as given, before the samples add an archive and a store.
    let streams = config.streams();
    if config.samples() {
        crate::samples::prepare(&config.data.dir)?.apply(&mut config);
    }
    if !streams {
        return serve_http_only(&config, &tokens);
    }
    let feed = stream_feed(&config);
    if config.sources.relay.is_some() {
        return run_relay(&config, feed, tokens, grpc_tls);
    }
    run_pipeline(config, feed, registry, (tokens, grpc_tls), fd_limit)
}

/// `--check-config`: the merged configuration as TOML. Configured URLs may carry credentials
/// (userinfo, `?api-key=`): shown redacted.
fn print_redacted(config: &Config) {
    let mut shown = config.clone();
    shown.archive.upstream = shown.archive.upstream.as_deref().map(redact_url);
    shown.archive.sources = shown
        .archive
        .sources
        .iter()
        .map(|s| redact_url(s))
        .collect();
    shown.cluster.rpc = shown.cluster.rpc.as_deref().map(redact_url);
    shown.sources.relay = shown.sources.relay.as_deref().map(redact_url);
    if shown.sources.relay_token.is_some() {
        shown.sources.relay_token = Some("<redacted>".into());
    }
    print!("{}", shown.to_toml());
}

/// The feed the gRPC stream serves, with its subscriber queues and recent-slot buffer.
fn stream_feed(config: &Config) -> Feed {
    let feed = Feed::with_recent(
        QueueBounds {
            updates: config.grpc.subscriber_queue,
            bytes: config.grpc.subscriber_queue_bytes,
            max_age: std::time::Duration::from_secs(config.grpc.subscriber_queue_max_age_secs),
        },
        RecentBounds {
            slots: config.grpc.recent_slots,
            bytes: config.grpc.recent_bytes,
        },
    );
    feed.hub().replay_pace().set_rate(config.grpc.resume_rate);
    feed
}

/// The receive → decode → publish service: sources, cluster, pipeline, HTTP, the replay when
/// replaying, and the gRPC listener until the stop signal; then everything stopped in order.
fn run_pipeline(
    mut config: Config,
    feed: Feed,
    registry: decoder::dex::ProgramRegistry,
    (tokens, grpc_tls): (
        Arc<front::auth::TokenSet>,
        Option<tonic::transport::ServerTlsConfig>,
    ),
    fd_limit: Option<crate::fd_limit::FdLimit>,
) -> anyhow::Result<()> {
    let shutdown = Arc::new(AtomicBool::new(false));
    let replaying = config.replay.file.is_some()
        || (config.sources.udp.is_empty() && config.sources.xdp.is_empty());
    let mut receive = open_sources(&config, replaying)?;
    // The embedded default loops; a looping replay is re-signed, so its key is the leader.
    let looping = replaying && (config.replay.looping || config.replay.file.is_none());
    let trust = crate::cluster::setup::start(&mut config, replay_leader(looping)?, &shutdown)?;
    let lookups = crate::cluster::lookup_tables::setup::start(&config, &shutdown)?;
    let stream_metrics = Arc::new(StreamMetrics::default());
    let entries = ::stream::entries::EntriesFeed::new(config.grpc.entries_queue);
    let deshred = ::stream::deshred::DeshredFeed::new(config.grpc.deshred_queue);
    let (pipeline, metrics) = start_pipeline(
        &config,
        &mut receive,
        (&feed, &entries, &deshred),
        registry,
        (&trust.slot, &lookups.tables),
        &stream_metrics,
        &shutdown,
    )?;
    if let Some(limit) = fd_limit {
        metrics.fd_limit.store(limit.soft, Ordering::Relaxed);
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let stream = StreamParts {
        metrics: Arc::clone(&metrics),
        trust: Arc::clone(&trust.status),
        lookups: Some(Arc::clone(&lookups.tables)),
    };
    let frontends = crate::frontends::start_http(&config, Some(stream), &tokens, &stopped)?;
    if replaying {
        spawn_replay(&config, receive.replay_target, looping, &shutdown)?;
    }
    let runtime = crate::grpc::runtime(config.grpc.realtime_priority)?;
    let mut grpc = grpc_options(&config, tokens, grpc_tls, &metrics);
    grpc.entries = Some(entries);
    grpc.deshred = Some(deshred);
    let served = runtime.block_on(serve_grpc(grpc, feed, stream_metrics, stop, stopped));
    shutdown.store(true, Ordering::Release);
    join_pipeline(pipeline)?;
    join_cluster(trust.fetcher, lookups.thread)?;
    // Detach the XDP programs now that nothing reads their sockets.
    drop(receive.attachments);
    frontends.stop()?;
    served
}

/// Starts the replay into `target`: the file given, or the embedded default (looping from the
/// configured first slot when `looping`).
fn spawn_replay(
    config: &Config,
    target: std::net::SocketAddr,
    looping: bool,
    shutdown: &Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let pacing = Pacing {
        rate: config.replay.rate,
        per_fec_set: config.replay.burst,
    };
    let file = config.replay.file.as_deref();
    let looping = looping.then_some(config.replay.first_slot);
    crate::replay::spawn(file, target, pacing, looping, Arc::clone(shutdown))
}

/// Joins the leader schedule fetcher (when one runs) and the lookup-table thread.
fn join_cluster(fetcher: Option<JoinHandle<()>>, lookups: JoinHandle<()>) -> anyhow::Result<()> {
    if let Some(fetcher) = fetcher {
        fetcher
            .join()
            .map_err(|_| anyhow::anyhow!("leader schedule fetcher panicked"))?;
    }
    lookups
        .join()
        .map_err(|_| anyhow::anyhow!("lookup-table thread panicked"))?;
    Ok(())
}

/// The gRPC listener's settings from the configuration.
fn grpc_options(
    config: &Config,
    tokens: Arc<front::auth::TokenSet>,
    tls: Option<tonic::transport::ServerTlsConfig>,
    metrics: &Metrics,
) -> GrpcOptions {
    GrpcOptions {
        address: config.grpc.address,
        limits: FilterLimits {
            max_filters: config.grpc.max_filters,
            max_keys: config.grpc.max_keys,
            ..FilterLimits::default()
        },
        max_subscribers: config.grpc.max_subscribers,
        max_subscribers_per_ip: config.grpc.max_subscribers_per_ip,
        max_subscribers_per_token: config.grpc.max_subscribers_per_token,
        shutdown_timeout: std::time::Duration::from_secs(config.grpc.shutdown_timeout_secs),
        tokens,
        tls,
        connection_limits: ConnectionLimits {
            per_ip: config.grpc.max_connections_per_ip,
            first_bytes: std::time::Duration::from_secs(config.grpc.first_bytes_timeout_secs),
        },
        connections: Arc::clone(&metrics.connections),
        compression: config.grpc.compression.clone(),
        entries: None,
        deshred: None,
    }
}

/// `--relay`: no receive path; the relay task publishes its origin's updates into `feed`, which
/// the gRPC listener serves as usual.
fn run_relay(
    config: &Config,
    feed: Feed,
    tokens: Arc<front::auth::TokenSet>,
    grpc_tls: Option<tonic::transport::ServerTlsConfig>,
) -> anyhow::Result<()> {
    let origin = crate::relay::link::Origin {
        endpoint: config.sources.relay.clone().unwrap_or_default(),
        token: config.sources.relay_token.clone(),
        tls_ca: config.sources.relay_tls_ca.clone(),
    };
    info!(origin = %redact_url(&origin.endpoint), "relaying another appliance's stream");
    let stream_metrics = Arc::new(StreamMetrics::default());
    let metrics = Arc::new(Metrics::new(
        Arc::clone(&stream_metrics),
        feed.clone(),
        config.grpc.subscriber_queue,
        Vec::new(),
        Vec::new(),
    ));
    let counters = Arc::new(crate::relay::counters::RelayCounters::default());
    let _ = metrics.relay.set(Arc::clone(&counters));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let stream = StreamParts {
        metrics: Arc::clone(&metrics),
        trust: Arc::new(crate::cluster::TrustStatus::new(
            crate::cluster::TrustMode::Relayed,
        )),
        lookups: None,
    };
    let frontends = crate::frontends::start_http(config, Some(stream), &tokens, &stopped)?;
    let runtime = crate::grpc::runtime(config.grpc.realtime_priority)?;
    let grpc = grpc_options(config, tokens, grpc_tls, &metrics);
    runtime.spawn(crate::relay::run(
        origin,
        feed.clone(),
        counters,
        stopped.clone(),
    ));
    let served = runtime.block_on(serve_grpc(grpc, feed, stream_metrics, stop, stopped));
    frontends.stop()?;
    served
}

/// HTTP only (`[sources] stream`, no receive, workers or gRPC listener): the archive, insights,
/// `/health` and `/metrics`, until SIGINT or SIGTERM.
fn serve_http_only(config: &Config, tokens: &Arc<front::auth::TokenSet>) -> anyhow::Result<()> {
    info!("no shred stream ([sources] stream): serving HTTP only");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let frontends = crate::frontends::start_http(config, None, tokens, &stopped)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(crate::grpc::shutdown_signal());
    let _ = stop.send(true);
    frontends.stop()
}

/// The key of a looping replay (its own re-signing key), which it verifies.
fn replay_leader(looping: bool) -> anyhow::Result<Option<ed25519_dalek::VerifyingKey>> {
    if !looping {
        return Ok(None);
    }
    let leader = crate::replay::replay_reslotter().leader();
    info!(leader = %bs58::encode(leader).into_string(), "replay leader");
    Ok(Some(LeaderSchedule::key_from_bytes(&leader)?))
}

/// Builds the rings and starts the receive threads and the workers.
fn start_pipeline(
    config: &Config,
    receive: &mut ReceiveSetup,
    (feed, entries, deshred): (
        &Feed,
        &::stream::entries::EntriesFeed,
        &::stream::deshred::DeshredFeed,
    ),
    registry: decoder::dex::ProgramRegistry,
    (leaders, lookups): (
        &Arc<crate::cluster::LeaderSlot>,
        &Arc<crate::cluster::lookup_tables::LookupTables>,
    ),
    stream_metrics: &Arc<StreamMetrics>,
    shutdown: &Arc<AtomicBool>,
) -> anyhow::Result<(Pipeline, Arc<Metrics>)> {
    let sources = std::mem::take(&mut receive.sources);
    let cores = core_affinity::get_core_ids().map_or(1, |ids| ids.len());
    let pool_options = PoolOptions::from_config(config, cores, sources.len());
    let (source_rings, worker_rings, ring_stats) =
        crate::pipeline::workers::build_rings(sources.len(), &pool_options);
    info!(
        workers = pool_options.workers,
        receive_threads = sources.len(),
        ring_slots = pool_options.ring_slots,
        forward_slots = pool_options.forward_slots,
        "worker pool"
    );
    let metrics = Arc::new(Metrics::new(
        Arc::clone(stream_metrics),
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
    let receivers = crate::receive::thread::spawn(sources, pool, source_rings, shutdown)?;
    let _ = metrics.entries.set(Arc::clone(entries.metrics()));
    let _ = metrics.deshred.set(deshred.clone());
    let shared = Arc::new(WorkerShared {
        feeds: crate::pipeline::output::Feeds {
            feed: feed.clone(),
            entries: entries.clone(),
            deshred: deshred.clone(),
        },
        registry: Arc::new(registry),
        metrics: Arc::clone(&metrics),
        shutdown: Arc::clone(shutdown),
        decoder_config: config.decoder_config(),
        leaders: Arc::clone(leaders),
        highest_notified: std::sync::Mutex::new(None),
        lookups: Arc::clone(lookups),
    });
    let workers = crate::pipeline::workers::spawn(worker_rings, &pool_options, &shared)?;
    Ok((Pipeline { receivers, workers }, metrics))
}

/// Joins the workers, then the receive threads (after the shutdown flag is set).
fn join_pipeline(pipeline: Pipeline) -> anyhow::Result<()> {
    for worker in pipeline.workers {
        worker
            .join()
            .map_err(|_| anyhow::anyhow!("worker panicked"))?;
    }
    for receiver in pipeline.receivers {
        receiver
            .join()
            .map_err(|_| anyhow::anyhow!("receive thread panicked"))?;
    }
    Ok(())
}
