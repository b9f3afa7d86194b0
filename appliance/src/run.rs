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

use crate::metrics::{Metrics, WorkerCounters};
use stream_proto::stream::{self, SubscribeUpdate, subscribe_update::Update};
use tracing::{info, warn};

/// The capture replayed when no source is given: two complete slots of the reference fixtures.
const BUNDLED_CAPTURE: &[&[u8]] = &[
    include_bytes!("../replay/slot-361200000.full.bin"),
    include_bytes!("../replay/slot-361200002.full.bin"),
];

/// The seed of the replay's signing key: looping replays are signed by this key, which the decode
/// worker then verifies as the leader of every replayed slot.
const REPLAY_KEY_SEED: [u8; 32] = *b"shred-appliance-replay-leader-01";

/// Updates a subscriber may fall behind before its stream ends (product decisions §A).
const SUBSCRIBER_QUEUE_UPDATES: usize = 16_384;

/// Arguments of `appliance run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Configuration file (TOML); flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Receive shreds on this UDP address (repeatable).
    #[arg(long = "udp")]
    udp: Vec<SocketAddr>,
    /// Receive shreds over AF_XDP on IFACE:PORT (repeatable).
    #[arg(long = "xdp")]
    xdp: Vec<String>,
    /// Replay this shred capture (length-prefixed, pcap or ar).
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Replay rate in shreds per second.
    #[arg(long = "replay-rate", default_value_t = 5_000)]
    replay_rate: u64,
    /// Loop the replay forever.
    #[arg(long = "replay-loop")]
    replay_loop: bool,
    /// Send each FEC set's shreds back to back (the set's first shred is paced, so the average
    /// stays at --replay-rate), as a leader emits them, instead of one shred every 1/rate s.
    #[arg(long = "replay-burst")]
    replay_burst: bool,
    /// gRPC listen address.
    #[arg(long, default_value = "127.0.0.1:9000")]
    grpc: SocketAddr,
    /// HTTP listen address (/health, /metrics, archive, insights).
    #[arg(long, default_value = "127.0.0.1:8080")]
    http: SocketAddr,
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
    /// (the broadcast ring's size).
    #[arg(long = "subscriber-queue", default_value_t = SUBSCRIBER_QUEUE_UPDATES)]
    subscriber_queue: usize,
}

pub fn run(args: RunArgs) -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    refuse_unsupported(&args)?;
    let registry = crate::programs::registry(&args.program_ids, args.aggregator_id.as_deref())?;
    let listen = args
        .udp
        .first()
        .copied()
        .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)));
    let socket = bind_receiver(listen)?;
    socket.set_read_timeout(Some(Duration::from_millis(100)))?;
    let local = socket.local_addr()?;
    info!(%local, "receiving shreds over UDP");
    let shutdown = Arc::new(AtomicBool::new(false));
    let feed = Feed::new(args.subscriber_queue);
    let replaying = args.replay.is_some() || args.udp.is_empty();
    // The embedded default loops; a looping replay is re-signed, so its key is the leader.
    let looping = replaying && (args.replay_loop || args.replay.is_none());
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
        args.subscriber_queue,
    ));
    let worker = {
        let feed = feed.clone();
        let shutdown = Arc::clone(&shutdown);
        let metrics = Arc::clone(&metrics);
        std::thread::Builder::new()
            .name("decode-worker".into())
            .spawn(move || decode_worker(&socket, &feed, &shutdown, leaders, &registry, &metrics))?
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let render: server::http::MetricsRenderer = {
        let metrics = Arc::clone(&metrics);
        Arc::new(move || metrics.render())
    };
    let http = server::http::serve(
        args.http,
        render,
        server::http::HttpOptions::default(),
        wait_for_stop(stopped.clone()),
    )
    .with_context(|| format!("HTTP server on {}", args.http))?;
    info!(address = %args.http, "serving /health and /metrics");
    if replaying {
        let captures = match &args.replay {
            Some(path) => {
                vec![std::fs::read(path).with_context(|| format!("reading {}", path.display()))?]
            }
            None => BUNDLED_CAPTURE.iter().map(|bytes| bytes.to_vec()).collect(),
        };
        let pacing = Pacing {
            rate: args.replay_rate,
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime.block_on(serve_grpc(args.grpc, feed, stream_metrics, stop, stopped));
    shutdown.store(true, Ordering::Release);
    worker
        .join()
        .map_err(|_| anyhow::anyhow!("decode worker panicked"))?;
    http.join()
        .map_err(|_| anyhow::anyhow!("HTTP server panicked"))??;
    served
}

fn refuse_unsupported(args: &RunArgs) -> anyhow::Result<()> {
    let unsupported = [
        (args.config.is_some(), "--config"),
        (!args.xdp.is_empty(), "--xdp"),
        (!args.archive.is_empty(), "--archive"),
        (args.upstream.is_some(), "--upstream"),
    ];
    if let Some((_, flag)) = unsupported.iter().find(|(given, _)| *given) {
        bail!("{flag} is not supported by this build yet");
    }
    if args.replay_rate == 0 {
        bail!("--replay-rate must be positive");
    }
    if !(1..=1 << 22).contains(&args.subscriber_queue) {
        bail!("--subscriber-queue must be between 1 and {}", 1 << 22);
    }
    if args.udp.len() > 1 {
        bail!("one --udp source is supported by this build");
    }

    Ok(())
}

/// Serves the stream until SIGINT or SIGTERM.
async fn serve_grpc(
    address: SocketAddr,
    feed: Feed,
    metrics: Arc<StreamMetrics>,
    stop_sessions: tokio::sync::watch::Sender<bool>,
    sessions_stopped: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let service = StreamService::new(feed, FilterLimits::default(), metrics, sessions_stopped);
    info!(%address, "serving stream.Stream/SubscribeDecoded");
    let stop = async move {
        shutdown_signal().await;
        // End the open streams so the graceful shutdown completes.
        let _ = stop_sessions.send(true);
    };
    tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(10)))
        .add_service(service.into_server())
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
    let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let mut pacer = Pacer::new(pacing);
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
                pacer.wait(sent, shred);
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
    let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
    let mut pacer = Pacer::new(pacing);
    let mut sent: u64 = 0;
    for capture in captures {
        for record in framing::records(capture) {
            let record = record.context("malformed replay capture")?;
            pacer.wait(sent, record.payload);
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
    leaders: LeaderSchedule,
    registry: &ProgramRegistry,
    metrics: &Metrics,
) {
    let mut decoder = ShredDecoder::new(DecoderConfig::default(), leaders);
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

#[cfg(test)]
mod tests {
    use super::*;

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
