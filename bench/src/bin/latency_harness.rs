//! Latency harness of the gRPC stream (issue 6): starts a release `appliance run` replaying the
//! bundled shreds to itself at a chosen rate, opens N subscriber streams with realistic filters
//! over several HTTP/2 connections, and records every `ServerTiming` stage of every delivered
//! update, plus the client's own receive time, into HDR histograms.
//!
//! ```text
//! appliance run (child) ── replay ─► UDP ─► decode ─► fan-out  ─► N sessions ─► gRPC
//!                                                                     │
//! harness: probe (empty filter, learns real keys) ─► N subscribers ◄──┘ ─► histograms ─► table
//! ```
//! Samples are deliveries: one per (update, subscriber) received inside the measurement window,
//! which opens once every subscriber's stream has started (its pong arrived) and the settle time
//! has passed. A stream that ends with `RESOURCE_EXHAUSTED` was dropped by the server for lagging.
//! The harness also reads the appliance's CPU time per thread from `/proc` over the window, so a
//! run shows whether the machine's two cores were the limit. See `bench/README.md` ("Latency of
//! the gRPC stream").

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use stream_proto::stream::stream_client::StreamClient;
use stream_proto::stream::{ProgramFilter, SubscribeRequest, subscribe_update::Update};
use tonic::transport::{Channel, Endpoint};

/// Command line of the harness.
#[derive(Parser, Debug, Clone)]
#[command(about = "Latency harness of the appliance's gRPC stream (ServerTiming stages)")]
struct Args {
    /// The appliance binary to start (build it with `cargo build --release -p appliance`).
    #[arg(long, default_value = "target/release/appliance")]
    appliance: PathBuf,
    /// Replay this capture instead of the appliance's bundled one (looped).
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Replay each FEC set as one burst (`appliance run --replay-burst`), the average rate kept.
    #[arg(long)]
    burst: bool,
    /// Subscriber streams to open.
    #[arg(long, default_value_t = 1)]
    subscribers: usize,
    /// Replay rate in shreds per second (mainnet is about 5,000).
    #[arg(long, default_value_t = 5_000)]
    rate: u64,
    /// Length of the measurement window in seconds.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Fewest account keys of one subscriber (over all its filters).
    #[arg(long = "keys-min", default_value_t = 10)]
    keys_min: usize,
    /// Most account keys of one subscriber (log-uniform between min and max).
    #[arg(long = "keys-max", default_value_t = 1_000)]
    keys_max: usize,
    /// Share of subscribers that also get keys seen in the replayed transactions (so they match);
    /// ceil(N × share) of them, subscriber 0 first.
    #[arg(long = "matching-share", default_value_t = 0.2)]
    matching_share: f64,
    /// Real keys given to each matching subscriber.
    #[arg(long = "matching-keys", default_value_t = 3)]
    matching_keys: usize,
    /// Streams per HTTP/2 connection.
    #[arg(long = "streams-per-connection", default_value_t = 100)]
    streams_per_connection: usize,
    /// Seconds of the empty-filter probe that learns which keys occur in the replay.
    #[arg(long = "probe-seconds", default_value_t = 3)]
    probe_seconds: u64,
    /// Seconds between the last stream starting and the window opening.
    #[arg(long = "settle-seconds", default_value_t = 1)]
    settle_seconds: u64,
    /// Worker threads of the harness's own runtime (the appliance shares the machine).
    #[arg(long = "client-threads", default_value_t = 1)]
    client_threads: usize,
    /// Passed to the appliance as `--subscriber-queue` when given.
    #[arg(long = "subscriber-queue")]
    subscriber_queue: Option<usize>,
    /// Passed to the appliance as `--realtime-priority` when given (SCHED_FIFO receive and
    /// worker threads).
    #[arg(long = "realtime-priority")]
    realtime_priority: Option<u8>,
    /// Passed to the appliance as `--grpc-realtime-priority` when given (SCHED_FIFO gRPC
    /// runtime threads).
    #[arg(long = "grpc-realtime-priority")]
    grpc_realtime_priority: Option<u8>,
    /// Seed of the filter generator (same seed, same filters).
    #[arg(long, default_value_t = 6)]
    seed: u64,
    /// Print a machine-readable JSON summary instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON summary to this file.
    #[arg(long = "json-out")]
    json_out: Option<PathBuf>,
    /// Print one markdown table row (used by `bench/latency.sh`).
    #[arg(long = "markdown-row")]
    markdown_row: bool,
    /// Keep the appliance's log in this file (default: discarded).
    #[arg(long = "appliance-log")]
    appliance_log: Option<PathBuf>,
    /// The appliance's deshred path, passed as `--deshred`: `incremental` (each transaction when
    /// its bytes are complete) or `batch` (with its whole entry batch).
    #[arg(long, default_value = "incremental", value_parser = ["incremental", "batch"])]
    deshred: String,
    /// The appliance's trust mode: `verified` (the replay's own key: a leader signature per FEC
    /// set, the default) or `trusted` (`--trust-feed`: Merkle proofs only), to measure what
    /// verification adds.
    #[arg(long, default_value = "verified", value_parser = ["verified", "trusted"])]
    trust: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if args.subscribers == 0 || args.rate == 0 || args.seconds == 0 {
        bail!("--subscribers, --rate and --seconds must be positive");
    }
    if args.keys_min == 0 || args.keys_min > args.keys_max || args.keys_max > 10_000 {
        bail!("need 1 <= --keys-min <= --keys-max <= 10000 (the server's per-request bound)");
    }
    if !(0.0..=1.0).contains(&args.matching_share) || args.streams_per_connection == 0 {
        bail!("--matching-share must lie in 0..=1 and --streams-per-connection be positive");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads.max(1))
        .enable_all()
        .build()
        .context("starting the harness runtime")?;
    let report = runtime.block_on(async {
        // On SIGINT or SIGTERM the run future is dropped, and with it the appliance child.
        tokio::select! {
            report = run(&args) => report,
            () = interrupted() => bail!("interrupted; the appliance was stopped"),
        }
    })?;
    if let Some(path) = &args.json_out {
        let json = serde_json::to_string_pretty(&report.to_json(&args))?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json(&args))?);
    } else if args.markdown_row {
        println!("{}", report.markdown_row(&args));
    } else {
        report.print_table(&args);
    }
    Ok(())
}

/// Resolves on SIGINT or SIGTERM (never, when no handler can be installed).
async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(mut interrupt), Ok(mut terminate)) => {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}

async fn run(args: &Args) -> anyhow::Result<report::Report> {
    let appliance = appliance::Appliance::start(args)?;
    appliance.wait_healthy(Duration::from_secs(30)).await?;
    let endpoint = format!("http://{}", appliance.grpc);
    let probe_channel = connect(&endpoint).await?;
    let observed = probe::observe(probe_channel, Duration::from_secs(args.probe_seconds)).await?;
    if observed.transactions.is_empty() {
        bail!(
            "the probe saw no transaction in {} s; is the replay running?",
            args.probe_seconds
        );
    }
    let mut rng = filters::Rng::new(args.seed);
    let requests: Vec<SubscribeRequest> = (0..args.subscribers)
        .map(|index| filters::request(index, args, &observed, &mut rng))
        .collect();
    let keys_total: usize = requests.iter().map(filters::key_count).sum();

    let connections = args.subscribers.div_ceil(args.streams_per_connection);
    let mut channels = Vec::with_capacity(connections);
    for _ in 0..connections {
        channels.push(connect(&endpoint).await?);
    }
    let ready = ready::Table::build(args)?;
    let shared = Arc::new(subscribers::Shared::new(ready)?);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let (started_tx, mut started_rx) = tokio::sync::mpsc::channel(args.subscribers);
    let mut tasks = Vec::with_capacity(args.subscribers);
    for (index, request) in requests.into_iter().enumerate() {
        let channel = channels[index / args.streams_per_connection].clone();
        tasks.push(tokio::spawn(subscribers::subscriber(
            channel,
            request,
            Arc::clone(&shared),
            stopped.clone(),
            started_tx.clone(),
        )));
    }
    drop(started_tx);
    let start_deadline = Instant::now() + Duration::from_secs(60);
    let mut started = 0;
    while started < args.subscribers {
        let left = start_deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, started_rx.recv()).await {
            Ok(Some(())) => started += 1,
            Ok(None) | Err(_) => break,
        }
    }
    tokio::time::sleep(Duration::from_secs(args.settle_seconds)).await;

    let cpu_before = cpu::Snapshot::take(appliance.pid());
    let metrics_before = appliance.metrics().await.unwrap_or_default();
    let window_start = Instant::now();
    shared.measuring.store(true, Ordering::Release);
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    shared.measuring.store(false, Ordering::Release);
    let window = window_start.elapsed();
    let cpu_after = cpu::Snapshot::take(appliance.pid());
    let metrics_after = appliance.metrics().await.unwrap_or_default();
    let _ = stop.send(true);
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(task.await.context("a subscriber task failed")?);
    }
    drop(appliance);
    let histograms = match Arc::try_unwrap(shared) {
        Ok(shared) => shared
            .histograms
            .into_inner()
            .map_err(|_| anyhow::anyhow!("histogram lock poisoned"))?,
        Err(_) => bail!("subscriber tasks still hold the histograms"),
    };
    Ok(report::Report {
        histograms,
        outcomes,
        started,
        connections,
        keys_total,
        observed_transactions: observed.transactions.len(),
        probe_updates_per_second: observed.updates as f64 / args.probe_seconds.max(1) as f64,
        window,
        cpu: cpu::Usage::between(&cpu_before, &cpu_after, window),
        load_average: load_average(),
        metrics: appliance::metrics_delta(&metrics_before, &metrics_after),
    })
}

/// One HTTP/2 connection to the stream service, retried for a while: `/health` answers before
/// the gRPC listener is bound.
async fn connect(endpoint: &str) -> anyhow::Result<Channel> {
    let endpoint = Endpoint::from_shared(endpoint.to_owned())?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match endpoint.connect().await {
            Ok(channel) => return Ok(channel),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(error) => {
                return Err(error).with_context(|| format!("connecting to {}", endpoint.uri()));
            }
        }
    }
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`): how busy the shared machine was.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A request stream that sends `first` and stays open until the returned sender is dropped; then
/// the call half-closes, and dropping the response as well cancels the call on the server.
fn request_stream(
    first: SubscribeRequest,
) -> (
    tokio_stream::wrappers::ReceiverStream<SubscribeRequest>,
    tokio::sync::mpsc::Sender<SubscribeRequest>,
) {
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    // A fresh channel of capacity 1 always has room for the first request.
    let _ = sender.try_send(first);
    (
        tokio_stream::wrappers::ReceiverStream::new(receiver),
        sender,
    )
}

/// The gRPC method the harness measures.
const SUBSCRIBE_DECODED_PATH: &str = "/stream.Stream/SubscribeDecoded";

fn unix_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64)
}

mod appliance {
    //! The appliance child process: free ports, start, `/health`, `/metrics`, stop on drop.

    use std::collections::HashMap;
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpListener, TcpStream};
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use anyhow::{Context, bail};

    use super::Args;

    pub struct Appliance {
        child: Child,
        pub grpc: SocketAddr,
        http: SocketAddr,
    }

    fn free_address() -> anyhow::Result<SocketAddr> {
        Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?)
    }

    impl Appliance {
        pub fn start(args: &Args) -> anyhow::Result<Self> {
            let grpc = free_address()?;
            let http = free_address()?;
            let mut command = Command::new(&args.appliance);
            command.arg("run");
            if let Some(replay) = &args.replay {
                command.arg("--replay").arg(replay).arg("--replay-loop");
            }
            command.args(["--replay-rate", &args.rate.to_string()]);
            command.args(["--deshred", &args.deshred]);
            if args.trust == "trusted" {
                command.arg("--trust-feed");
            }
            if args.burst {
                command.arg("--replay-burst");
            }
            command.args(["--grpc", &grpc.to_string(), "--http", &http.to_string()]);
            // Every subscriber connects from 127.0.0.1: lift the per-address stream cap to the
            // run's count; the data directory (lookup tables) goes to a scratch directory.
            let scratch =
                std::env::temp_dir().join(format!("latency-harness-{}", std::process::id()));
            std::fs::create_dir_all(&scratch)?;
            let config = scratch.join("appliance.toml");
            let per_ip = args
                .subscribers
                .max(stream::service::DEFAULT_MAX_SESSIONS_PER_IP);
            std::fs::write(
                &config,
                format!("[grpc]\nmax_subscribers_per_ip = {per_ip}\n"),
            )?;
            command
                .arg("--config")
                .arg(&config)
                .arg("--data-dir")
                .arg(scratch.join("data"));
            if let Some(queue) = args.subscriber_queue {
                command.args(["--subscriber-queue", &queue.to_string()]);
            }
            if let Some(priority) = args.realtime_priority {
                command.args(["--realtime-priority", &priority.to_string()]);
            }
            if let Some(priority) = args.grpc_realtime_priority {
                command.args(["--grpc-realtime-priority", &priority.to_string()]);
            }
            let log = match &args.appliance_log {
                Some(path) => Stdio::from(
                    std::fs::File::create(path)
                        .with_context(|| format!("creating {}", path.display()))?,
                ),
                None => Stdio::null(),
            };
            let child = command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .with_context(|| format!("starting {}", args.appliance.display()))?;
            Ok(Self { child, grpc, http })
        }

        pub fn pid(&self) -> u32 {
            self.child.id()
        }

        /// Polls `/health` until it answers 200.
        pub async fn wait_healthy(&self, limit: Duration) -> anyhow::Result<()> {
            let deadline = Instant::now() + limit;
            loop {
                let http = self.http;
                let answer = tokio::task::spawn_blocking(move || get(http, "/health")).await?;
                if matches!(answer, Ok((200, _))) {
                    return Ok(());
                }
                if Instant::now() > deadline {
                    bail!("the appliance did not become healthy on {}", self.http);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }

        /// The counters of `/metrics` (name with labels → value).
        pub async fn metrics(&self) -> anyhow::Result<HashMap<String, f64>> {
            let http = self.http;
            let (status, body) =
                tokio::task::spawn_blocking(move || get(http, "/metrics")).await??;
            if status != 200 {
                bail!("/metrics answered {status}");
            }
            Ok(body
                .lines()
                .filter(|line| !line.starts_with('#'))
                .filter_map(|line| {
                    let (name, value) = line.rsplit_once(' ')?;
                    Some((name.to_owned(), value.parse().ok()?))
                })
                .collect())
        }
    }

    impl Drop for Appliance {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// The change of the counters the report shows, over the window.
    pub fn metrics_delta(
        before: &HashMap<String, f64>,
        after: &HashMap<String, f64>,
    ) -> Vec<(String, f64)> {
        const SHOWN: [&str; 6] = [
            "appliance_datagrams_total",
            "appliance_updates_published_total",
            "appliance_stream_updates_sent_total",
            "appliance_stream_updates_dropped_total",
            "appliance_stream_disconnects_total",
            "appliance_rejected_total",
        ];
        let mut delta: Vec<(String, f64)> = after
            .iter()
            .filter(|(name, _)| SHOWN.iter().any(|shown| name.starts_with(shown)))
            .map(|(name, value)| {
                let earlier = before.get(name).copied().unwrap_or(0.0);
                (name.clone(), value - earlier)
            })
            .collect();
        delta.sort_by(|a, b| a.0.cmp(&b.0));
        delta
    }

    /// A plain HTTP/1.1 GET: status and body.
    fn get(address: SocketAddr, path: &str) -> anyhow::Result<(u16, String)> {
        let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: harness\r\nConnection: close\r\n\r\n"
        )?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        let status = response
            .split(' ')
            .nth(1)
            .and_then(|status| status.parse().ok())
            .context("malformed HTTP status line")?;
        let body = response
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default();
        Ok((status, body))
    }
}

mod probe {
    //! The empty-filter probe: which transactions (programs, static keys) the replay carries.

    use super::*;

    /// One distinct transaction seen by the probe.
    pub struct Seen {
        /// `DexProgram` values of its decoded instructions (direct) or legs (`DELTA_*`).
        pub programs: Vec<i32>,
        pub keys: Vec<[u8; 32]>,
    }

    pub struct Observed {
        pub transactions: Vec<Seen>,
        /// Transaction and delta updates received (repeats included).
        pub updates: u64,
    }

    /// Subscribes with no filter for `duration` and keeps each distinct signature once.
    pub async fn observe(channel: Channel, duration: Duration) -> anyhow::Result<Observed> {
        let mut client = StreamClient::new(channel);
        let request = SubscribeRequest {
            subscriptions: HashMap::new(),
            ping_id: None,
            ..Default::default()
        };
        let (requests, keep_open) = request_stream(request);
        let mut updates = client.subscribe_decoded(requests).await?.into_inner();
        let mut signatures = HashSet::new();
        let mut observed = Observed {
            transactions: Vec::new(),
            updates: 0,
        };
        let deadline = tokio::time::Instant::now() + duration;
        while let Ok(next) = tokio::time::timeout_at(deadline, updates.message()).await {
            let Some(update) = next? else { break };
            let (envelope, programs) = match update.update {
                Some(Update::Transaction(transaction)) => {
                    let programs = transaction
                        .decoded_instructions
                        .iter()
                        .map(|instruction| instruction.program)
                        .collect();
                    (transaction, programs)
                }
                Some(Update::Delta(delta)) => {
                    let programs = delta
                        .dex_legs
                        .iter()
                        .filter_map(|leg| leg.instruction.as_ref().map(|i| i.program))
                        .collect();
                    let Some(envelope) = delta.envelope else {
                        continue;
                    };
                    (envelope, programs)
                }
                _ => continue,
            };
            observed.updates += 1;
            if !signatures.insert(envelope.signature) {
                continue;
            }
            let keys = envelope
                .account_keys
                .iter()
                .filter_map(|key| key.as_slice().try_into().ok())
                .collect();
            observed.transactions.push(Seen { programs, keys });
        }
        // Half-close, then drop the response: the server's session ends (RST_STREAM).
        drop(keep_open);
        Ok(observed)
    }
}

mod filters {
    //! Realistic subscriber filters: a few programs (direct and `DELTA_*`) and 10–1,000 account
    //! keys, mostly random; a share of subscribers also gets keys of replayed transactions.

    use super::*;
    use crate::probe::Observed;

    /// SplitMix64: a small deterministic generator, enough for test keys and choices.
    pub struct Rng(u64);

    impl Rng {
        pub fn new(seed: u64) -> Self {
            Self(seed)
        }

        pub fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Uniform in `0..bound` (`bound` > 0).
        pub fn below(&mut self, bound: usize) -> usize {
            (self.next_u64() % bound as u64) as usize
        }

        /// Uniform in `0.0..1.0`.
        pub fn unit(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }

        fn key(&mut self) -> [u8; 32] {
            let mut key = [0u8; 32];
            for chunk in key.chunks_mut(8) {
                chunk.copy_from_slice(&self.next_u64().to_le_bytes());
            }
            key
        }
    }

    /// Keys present in more than this share of the replayed transactions (program ids, system
    /// accounts, the wrapped-SOL mint) are not handed out as "real" keys: they would make a
    /// subscriber match nearly everything.
    const UBIQUITOUS_SHARE: f64 = 0.05;

    /// The subscription request of subscriber `index`.
    pub fn request(
        index: usize,
        args: &Args,
        observed: &Observed,
        rng: &mut Rng,
    ) -> SubscribeRequest {
        let span = (args.keys_max as f64 / args.keys_min as f64).ln();
        let total_keys = ((args.keys_min as f64) * (span * rng.unit()).exp()).round() as usize;
        let total_keys = total_keys.clamp(args.keys_min, args.keys_max);
        let filter_count = 1 + rng.below(3).min(total_keys - 1);
        let mut filters: Vec<ProgramFilter> = (0..filter_count)
            .map(|_| ProgramFilter {
                programs: programs(rng),
                ..Default::default()
            })
            .collect();
        // Exactly ceil(N × share) matching subscribers, spread evenly over the indices (so over
        // the connections); subscriber 0 is one of them whenever the share is positive.
        let share = args.matching_share;
        let matching = ((index + 1) as f64 * share).ceil() > (index as f64 * share).ceil();
        let mut real = if matching {
            real_keys(observed, args.matching_keys, rng)
        } else {
            Vec::new()
        };
        // Only the first filter gets real keys; make sure it selects their programs too.
        for (_, programs) in &real {
            for program in programs {
                if !filters[0].programs.contains(program) {
                    filters[0].programs.push(*program);
                }
            }
        }
        real.truncate(total_keys);
        let random = total_keys - real.len();
        for (key, _) in real {
            filters[0]
                .accounts_include
                .push(bs58::encode(key).into_string());
        }
        for slot in 0..random {
            filters[slot % filter_count]
                .accounts_include
                .push(bs58::encode(rng.key()).into_string());
        }
        SubscribeRequest {
            subscriptions: filters
                .into_iter()
                .enumerate()
                .map(|(n, filter)| (format!("s{index}-f{n}"), filter))
                .collect(),
            ping_id: Some(index as i32),
            ..Default::default()
        }
    }

    /// Account keys over all filters of a request.
    pub fn key_count(request: &SubscribeRequest) -> usize {
        request
            .subscriptions
            .values()
            .map(|filter| filter.accounts_include.len())
            .sum()
    }

    /// Two to four distinct `DexProgram` values out of the twelve (direct and `DELTA_*`).
    fn programs(rng: &mut Rng) -> Vec<i32> {
        let count = 2 + rng.below(3);
        let mut chosen = Vec::with_capacity(count);
        while chosen.len() < count {
            let value = 1 + rng.below(12) as i32;
            if !chosen.contains(&value) {
                chosen.push(value);
            }
        }
        chosen
    }

    /// `count` distinct keys of replayed transactions that are not ubiquitous, each with the
    /// programs of the transaction it was taken from.
    fn real_keys(observed: &Observed, count: usize, rng: &mut Rng) -> Vec<([u8; 32], Vec<i32>)> {
        let mut frequency: HashMap<[u8; 32], usize> = HashMap::new();
        for seen in &observed.transactions {
            for key in &seen.keys {
                *frequency.entry(*key).or_default() += 1;
            }
        }
        let limit = ((observed.transactions.len() as f64) * UBIQUITOUS_SHARE).max(1.0) as usize;
        let mut chosen: Vec<([u8; 32], Vec<i32>)> = Vec::with_capacity(count);
        for _ in 0..count * 20 {
            if chosen.len() == count {
                break;
            }
            let seen = &observed.transactions[rng.below(observed.transactions.len())];
            if seen.keys.is_empty() || seen.programs.is_empty() {
                continue;
            }
            let key = seen.keys[rng.below(seen.keys.len())];
            let common = frequency.get(&key).is_some_and(|&n| n > limit);
            if !common && chosen.iter().all(|(known, _)| *known != key) {
                chosen.push((key, seen.programs.clone()));
            }
        }
        chosen
    }
}

mod stats {
    //! The measured stages and their HDR histograms (nanoseconds, three significant digits).

    use hdrhistogram::Histogram;
    use stream_proto::stream::ServerTiming;

    /// One latency between two stamps of a delivery.
    #[derive(Debug, Clone, Copy)]
    pub struct Stage {
        pub name: &'static str,
        pub what: &'static str,
    }

    pub const STAGES: [Stage; 12] = [
        Stage {
            name: "capture",
            what: "capture_done - first_read",
        },
        Stage {
            name: "deshred",
            what: "deshred_done - capture_done",
        },
        Stage {
            name: "decode",
            what: "decode_done - deshred_done",
        },
        Stage {
            name: "publish",
            what: "publish - decode_done",
        },
        Stage {
            name: "fan_out",
            what: "subscriber_recv - publish",
        },
        Stage {
            name: "server_total",
            what: "subscriber_recv - first_read",
        },
        Stage {
            name: "server_processing",
            what: "subscriber_recv - capture_done",
        },
        Stage {
            name: "grpc_hop",
            what: "client_recv - subscriber_recv",
        },
        Stage {
            name: "end_to_end",
            what: "client_recv - first_read",
        },
        Stage {
            name: "ready_to_client",
            what: "client_recv - ready (its last shred sent, from the pacing)",
        },
        Stage {
            name: "first_shred_to_client",
            what: "client_recv - its batch's first shred sent (from the pacing)",
        },
        Stage {
            name: "to_publish",
            what: "publish - first_read (what leader verification adds shows here)",
        },
    ];

    /// Index of `server_total` (first_read → subscriber_recv) in [`STAGES`]: the goal's stage.
    pub const SERVER_TOTAL: usize = 5;
    /// Index of `end_to_end` in [`STAGES`].
    pub const END_TO_END: usize = 8;
    /// Index of `ready_to_client` in [`STAGES`] (`first_shred_to_client` follows).
    pub const READY: usize = 9;
    /// Index of `to_publish` (first_read → publish) in [`STAGES`].
    pub const TO_PUBLISH: usize = 11;

    /// The largest latency kept exactly (60 s); larger values saturate.
    const HIGHEST_NS: u64 = 60_000_000_000;

    pub struct StageHistograms {
        pub stages: Vec<Histogram<u64>>,
        /// Deliveries whose stamps went backwards somewhere (recorded as 0).
        pub out_of_order: u64,
    }

    impl StageHistograms {
        /// One histogram per stage: 1 ns to 60 s at three significant digits.
        pub fn new() -> anyhow::Result<Self> {
            let stages = STAGES
                .iter()
                .map(|_| Histogram::new_with_bounds(1, HIGHEST_NS, 3))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Self {
                stages,
                out_of_order: 0,
            })
        }

        /// Records one delivery; `ready` gives the transaction's ready and batch-first receive
        /// times relative to its `first_read` ([`crate::ready::Offsets`]), when known.
        pub fn record(
            &mut self,
            timing: &ServerTiming,
            client_recv: u64,
            ready: Option<crate::ready::Offsets>,
        ) {
            let t = [
                timing.first_read_unix_nanos,
                timing.capture_done_unix_nanos,
                timing.deshred_done_unix_nanos,
                timing.decode_done_unix_nanos,
                timing.publish_unix_nanos,
                timing.subscriber_recv_unix_nanos,
                client_recv,
            ];
            let pairs: [(usize, usize); 9] = [
                (0, 1),
                (1, 2),
                (2, 3),
                (3, 4),
                (4, 5),
                (0, 5),
                (1, 5),
                (5, 6),
                (0, 6),
            ];
            if t.windows(2).any(|pair| pair[1] < pair[0]) {
                self.out_of_order += 1;
            }
            for (histogram, (from, to)) in self.stages.iter_mut().zip(pairs) {
                histogram.saturating_record(t[to].saturating_sub(t[from]));
            }
            self.stages[TO_PUBLISH].saturating_record(t[4].saturating_sub(t[0]));
            if let Some(offsets) = ready {
                let since = |offset: i64| {
                    let at = i128::from(timing.first_read_unix_nanos) + i128::from(offset);
                    u64::try_from(i128::from(client_recv) - at).unwrap_or(0)
                };
                self.stages[READY].saturating_record(since(offsets.ready_ns));
                self.stages[READY + 1].saturating_record(since(offsets.batch_first_ns));
            }
        }
    }

    /// Count and percentiles of one histogram, in microseconds.
    #[derive(Debug, Clone, Copy, serde::Serialize)]
    pub struct Summary {
        pub count: u64,
        pub p50_us: f64,
        pub p99_us: f64,
        pub p999_us: f64,
        pub max_us: f64,
    }

    pub fn summary(histogram: &Histogram<u64>) -> Summary {
        let us = |ns: u64| ns as f64 / 1_000.0;
        Summary {
            count: histogram.len(),
            p50_us: us(histogram.value_at_quantile(0.50)),
            p99_us: us(histogram.value_at_quantile(0.99)),
            p999_us: us(histogram.value_at_quantile(0.999)),
            max_us: us(histogram.max()),
        }
    }
}

mod ready {
    //! When each replayed transaction became ready: which shred completed its bytes, and which
    //! was its batch's first, learned by running the decoder library over the capture the
    //! appliance replays (records numbered in replay order). With uniform pacing the `n`-th record
    //! is sent `n / rate` s into the pass, so a record's receive time is its set's `first_read`
    //! (the set's earliest record, `j`) plus `(n - j) / rate`. Which set `first_read` names
    //! depends on the path: the set of the shred completing the transaction (incremental) or
    //! the batch (batch-wise). Burst pacing (`--burst`) sends each run of one set's records at
    //! once, at the due time of the run's first record: every record of the run is taken as
    //! received then (the run's own transmission, tens of µs, is not modelled).

    use std::collections::HashMap;

    use decoder::incremental::IncrementalConfig;
    use decoder::shred::{ParseOptions, parse_shred};
    use decoder::{DecoderConfig, LeaderSchedule, ReadyItem, ShredDecoder};

    use super::Args;

    /// A transaction's ready time and its batch's first shred's receive time, ns after the
    /// `first_read` its updates carry (negative: before it).
    #[derive(Debug, Clone, Copy)]
    pub struct Offsets {
        pub ready_ns: i64,
        pub batch_first_ns: i64,
    }

    /// Offsets by first signature.
    pub struct Table {
        by_signature: HashMap<Vec<u8>, Offsets>,
    }

    /// Record numbers (1-based, replay order) of one transaction.
    #[derive(Debug, Clone, Copy, Default)]
    struct Numbers {
        /// The record that completed its bytes, and the first record of that record's set.
        ready: u64,
        ready_set_first: u64,
        /// The first record of the set that completed its batch.
        batch_set_first: u64,
        /// The record of its batch's first data shred.
        batch_first: u64,
    }

    impl Table {
        /// The table for the replay of `args`.
        pub fn build(args: &Args) -> anyhow::Result<Self> {
            let mut by_signature = HashMap::new();
            let records = replay_records(args)?;
            let numbers = numbers(&records);
            let runs = run_starts(&records);
            // The record whose due time sends record `n`: itself, or its burst's first.
            let sent_with = |n: u64| match args.burst {
                true => runs.get(n.saturating_sub(1) as usize).copied().unwrap_or(n),
                false => n,
            };
            let per_record = 1e9 / args.rate as f64;
            let ns = |from: u64, to: u64| {
                let (from, to) = (sent_with(from), sent_with(to));
                ((to as f64 - from as f64) * per_record) as i64
            };
            for (signature, n) in numbers {
                let anchor = if args.deshred == "batch" {
                    n.batch_set_first
                } else {
                    n.ready_set_first
                };
                let offsets = Offsets {
                    ready_ns: ns(anchor, n.ready),
                    batch_first_ns: ns(anchor, n.batch_first),
                };
                by_signature.insert(signature, offsets);
            }
            Ok(Self { by_signature })
        }

        pub fn offsets(&self, signature: &[u8]) -> Option<Offsets> {
            self.by_signature.get(signature).copied()
        }
    }

    /// For each record (1-based number `n` at position `n - 1`), the number of the first record of
    /// its run: consecutive records of one FEC set, which burst pacing sends together.
    fn run_starts(records: &[Vec<u8>]) -> Vec<u64> {
        let mut starts = Vec::with_capacity(records.len());
        let mut current = (None, 0);
        for (n, record) in (1_u64..).zip(records) {
            let set = decoder::shred::peek_slot_and_fec_set(record);
            if set.is_none() || set != current.0 {
                current = (set, n);
            }
            starts.push(current.1);
        }
        starts
    }

    /// The records the appliance replays, in order: `--replay`, or its bundled slots.
    fn replay_records(args: &Args) -> anyhow::Result<Vec<Vec<u8>>> {
        let files = match &args.replay {
            Some(path) => vec![path.clone()],
            None => ["slot-361200000.full.bin", "slot-361200002.full.bin"]
                .iter()
                .map(|f| {
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("../appliance/replay")
                        .join(f)
                })
                .collect(),
        };
        let mut records = Vec::new();
        for file in files {
            let bytes = std::fs::read(&file)?;
            for record in capture::framing::records(&bytes) {
                records.push(record?.payload.to_vec());
            }
        }
        Ok(records)
    }

    /// Each transaction's record numbers, from two decoder runs (incremental and batch-wise)
    /// with each record's number as its receive time.
    fn numbers(records: &[Vec<u8>]) -> HashMap<Vec<u8>, Numbers> {
        let config = |enabled| {
            let mut config = DecoderConfig::default();
            config.fec.authenticate = false;
            config.incremental = IncrementalConfig {
                enabled,
                ..IncrementalConfig::default()
            };
            config
        };
        let mut first_of_index = HashMap::new();
        let mut out: HashMap<Vec<u8>, Numbers> = HashMap::new();
        let mut incremental = ShredDecoder::new(config(true), LeaderSchedule::default());
        let mut batch_wise = ShredDecoder::new(config(false), LeaderSchedule::default());
        for (n, record) in records.iter().enumerate() {
            let n = n as u64 + 1;
            if let Ok(shred) = parse_shred(record, ParseOptions::default())
                && shred.is_data()
            {
                first_of_index
                    .entry((shred.slot(), shred.index()))
                    .or_insert(n);
            }
            incremental.ingest(record, n);
            while let Some(item) = incremental.next_ready() {
                if let ReadyItem::Transaction(t) = item {
                    let entry = out
                        .entry(t.transaction.first_signature().to_vec())
                        .or_default();
                    entry.ready = t.completed_rx_ns;
                    entry.ready_set_first = t.first_rx_ns;
                    entry.batch_first = first_of_index
                        .get(&(t.slot, t.batch_start_index))
                        .copied()
                        .unwrap_or(t.first_rx_ns);
                }
            }
            batch_wise.ingest(record, n);
            while let Some(batch) = batch_wise.next_batch() {
                for transaction in batch.entries.transactions() {
                    out.entry(transaction.first_signature().to_vec())
                        .or_default()
                        .batch_set_first = batch.first_rx_ns;
                }
            }
        }
        out
    }
}

mod subscribers {
    //! One task per subscriber stream: start it, wait for its pong, record deliveries.

    use super::*;
    use crate::stats::StageHistograms;

    /// What all subscriber tasks share: the window flag and the histograms.
    pub struct Shared {
        pub measuring: AtomicBool,
        pub histograms: Mutex<StageHistograms>,
        /// When each replayed transaction became ready, relative to its `first_read`.
        pub ready: crate::ready::Table,
    }

    impl Shared {
        pub fn new(ready: crate::ready::Table) -> anyhow::Result<Self> {
            Ok(Self {
                measuring: AtomicBool::new(false),
                histograms: Mutex::new(StageHistograms::new()?),
                ready,
            })
        }
    }

    /// How one subscriber fared.
    #[derive(Debug, Default)]
    pub struct Outcome {
        pub started: bool,
        /// Transaction and delta updates received inside the window.
        pub updates: u64,
        /// The status the stream ended with before the harness stopped it, if any.
        pub ended: Option<(tonic::Code, String)>,
    }

    pub async fn subscriber(
        channel: Channel,
        request: SubscribeRequest,
        shared: Arc<Shared>,
        mut stop: tokio::sync::watch::Receiver<bool>,
        started: tokio::sync::mpsc::Sender<()>,
    ) -> Outcome {
        let mut outcome = Outcome::default();
        let (requests, keep_open) = request_stream(request);
        let mut updates = match light::subscribe(channel, requests).await {
            Ok(updates) => updates,
            Err(status) => {
                outcome.ended = Some((status.code(), status.message().to_owned()));
                return outcome;
            }
        };
        loop {
            let next = tokio::select! {
                _ = stop.changed() => break,
                next = updates.message() => next,
            };
            let update = match next {
                Ok(Some(update)) => update,
                Ok(None) => {
                    outcome.ended = Some((tonic::Code::Ok, "stream ended".to_owned()));
                    break;
                }
                Err(status) => {
                    outcome.ended = Some((status.code(), status.message().to_owned()));
                    break;
                }
            };
            let client_recv = unix_nanos();
            if update.pong.is_some() && !outcome.started {
                outcome.started = true;
                let _ = started.send(()).await;
                continue;
            }
            let Some(timing) = update.timing() else {
                continue;
            };
            if !shared.measuring.load(Ordering::Acquire) {
                continue;
            }
            outcome.updates += 1;
            let ready = update.signature().and_then(|s| shared.ready.offsets(s));
            // One uncontended lock per delivery (the harness runs one client thread by default).
            if let Ok(mut histograms) = shared.histograms.lock() {
                histograms.record(timing, client_recv, ready);
            }
        }
        drop(keep_open);
        outcome
    }
}

mod light {
    //! What a measuring subscriber decodes of an update: its kind and its `ServerTiming`. Prost
    //! skips every other field (keys, instructions, legs) without building it, so the harness's
    //! client, which shares the machine's cores with the appliance, spends little of them per
    //! delivery; the probe still decodes whole messages. Field numbers are those of
    //! `proto/stream.proto`; a personalised message carries `server_timing` twice (shared part,
    //! then the `subscriber_recv` suffix), which prost merges as for the full message.

    use stream_proto::stream::{ServerTiming, SubscribeRequest};
    use tonic::transport::Channel;
    use tonic::{Status, Streaming};

    use super::SUBSCRIBE_DECODED_PATH;

    /// `SubscribeUpdate`, reduced to the members the harness reads.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Update {
        /// Oneof member `transaction`.
        #[prost(message, optional, tag = "1")]
        pub transaction: Option<Envelope>,
        /// Oneof member `pong`.
        #[prost(int32, optional, tag = "2")]
        pub pong: Option<i32>,
        /// Oneof member `delta`.
        #[prost(message, optional, tag = "4")]
        pub delta: Option<Delta>,
    }

    /// `DeltaUpdate`, reduced to its envelope.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Delta {
        #[prost(message, optional, tag = "1")]
        pub envelope: Option<Envelope>,
    }

    /// `DecodedTransaction`, reduced to its signature and timing.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Envelope {
        #[prost(bytes = "vec", tag = "2")]
        pub signature: Vec<u8>,
        #[prost(message, optional, tag = "9")]
        pub server_timing: Option<ServerTiming>,
    }

    impl Update {
        /// The timing of a transaction or delta update.
        pub fn timing(&self) -> Option<&ServerTiming> {
            match (&self.transaction, &self.delta) {
                (Some(transaction), _) => transaction.server_timing.as_ref(),
                (None, Some(delta)) => delta.envelope.as_ref()?.server_timing.as_ref(),
                (None, None) => None,
            }
        }

        /// The first signature of a transaction or delta update.
        pub fn signature(&self) -> Option<&[u8]> {
            match (&self.transaction, &self.delta) {
                (Some(transaction), _) => Some(&transaction.signature),
                (None, Some(delta)) => Some(&delta.envelope.as_ref()?.signature),
                (None, None) => None,
            }
        }
    }

    /// `stream.Stream/SubscribeDecoded`, answered as [`Update`]s.
    pub async fn subscribe(
        channel: Channel,
        requests: tokio_stream::wrappers::ReceiverStream<SubscribeRequest>,
    ) -> Result<Streaming<Update>, Status> {
        let mut grpc = tonic::client::Grpc::new(channel)
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20);
        grpc.ready()
            .await
            .map_err(|error| Status::unavailable(format!("connection not ready: {error}")))?;
        let codec = tonic_prost::ProstCodec::<SubscribeRequest, Update>::default();
        let path = tonic::codegen::http::uri::PathAndQuery::from_static(SUBSCRIBE_DECODED_PATH);
        let response = grpc
            .streaming(tonic::Request::new(requests), path, codec)
            .await?;
        Ok(response.into_inner())
    }

    #[cfg(test)]
    mod tests {
        #![allow(clippy::unwrap_used)]

        use super::*;
        use prost::Message;
        use stream_proto::stream::{
            DecodedTransaction, DeltaUpdate, SubscribeUpdate, subscribe_update,
        };

        fn timing(base: u64) -> ServerTiming {
            ServerTiming {
                first_read_unix_nanos: base,
                capture_done_unix_nanos: base + 1,
                deshred_done_unix_nanos: base + 2,
                decode_done_unix_nanos: base + 3,
                publish_unix_nanos: base + 4,
                subscriber_recv_unix_nanos: base + 5,
                ..Default::default()
            }
        }

        fn transaction(base: u64) -> DecodedTransaction {
            DecodedTransaction {
                slot: 9,
                signature: vec![1; 64],
                account_keys: vec![vec![2; 32]; 5],
                matched_filters: vec!["f".into()],
                server_timing: Some(timing(base)),
                ..Default::default()
            }
        }

        #[test]
        fn reads_the_timing_and_kind_the_full_message_holds() {
            let cases = [
                subscribe_update::Update::Transaction(transaction(100)),
                subscribe_update::Update::Delta(DeltaUpdate {
                    envelope: Some(transaction(200)),
                    matched_leg_indices: vec![0, 2],
                    ..Default::default()
                }),
                subscribe_update::Update::Pong(0),
                subscribe_update::Update::Slot(Default::default()),
            ];
            for case in cases {
                let full = SubscribeUpdate {
                    update: Some(case.clone()),
                    ..Default::default()
                };
                let light = Update::decode(full.encode_to_vec().as_slice()).unwrap();
                let expected = match &case {
                    subscribe_update::Update::Transaction(t) => t.server_timing.as_ref(),
                    subscribe_update::Update::Delta(d) => {
                        d.envelope.as_ref().unwrap().server_timing.as_ref()
                    }
                    _ => None,
                };
                assert_eq!(light.timing(), expected, "{case:?}");
                assert_eq!(
                    light.pong.is_some(),
                    matches!(case, subscribe_update::Update::Pong(_))
                );
            }
        }

        #[test]
        fn merges_the_personal_suffix_into_the_shared_timing() {
            // The server's personalised bytes: shared message, then `1 { 9 { 6: stamp } }`.
            let mut shared = SubscribeUpdate {
                update: Some(subscribe_update::Update::Transaction(transaction(100))),
                ..Default::default()
            }
            .encode_to_vec();
            let suffix = SubscribeUpdate {
                update: Some(subscribe_update::Update::Transaction(DecodedTransaction {
                    server_timing: Some(ServerTiming {
                        subscriber_recv_unix_nanos: 777,
                        ..Default::default()
                    }),
                    ..Default::default()
                })),
                ..Default::default()
            };
            shared.extend(suffix.encode_to_vec());
            let light = Update::decode(shared.as_slice()).unwrap();
            let mut expected = timing(100);
            expected.subscriber_recv_unix_nanos = 777;
            assert_eq!(light.timing(), Some(&expected));
        }
    }
}

mod cpu {
    //! CPU time of the appliance per thread name and of the harness, from `/proc` (Linux).

    use std::collections::BTreeMap;
    use std::time::Duration;

    /// Clock ticks per second of `/proc/*/stat` times (USER_HZ, 100 on Linux).
    const TICKS_PER_SECOND: f64 = 100.0;

    pub struct Snapshot {
        /// Appliance thread name → ticks (threads of one name summed).
        appliance: BTreeMap<String, u64>,
        harness: u64,
    }

    /// utime + stime of one `/proc/.../stat` file, and the thread name.
    fn read_stat(path: &str) -> Option<(String, u64)> {
        let text = std::fs::read_to_string(path).ok()?;
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let name = text[open + 1..close].to_owned();
        let fields: Vec<&str> = text[close + 2..].split(' ').collect();
        // After "pid (comm) ": state is field 0, utime field 11, stime field 12.
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        Some((name, utime + stime))
    }

    impl Snapshot {
        pub fn take(pid: u32) -> Self {
            let mut appliance = BTreeMap::new();
            if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
                for task in tasks.flatten() {
                    let path = format!("{}/stat", task.path().display());
                    if let Some((name, ticks)) = read_stat(&path) {
                        *appliance.entry(name).or_default() += ticks;
                    }
                }
            }
            let harness = read_stat("/proc/self/stat").map_or(0, |(_, ticks)| ticks);
            Self { appliance, harness }
        }
    }

    /// Share of one core used over the window (1.0 = one core busy).
    #[derive(Debug, Clone, serde::Serialize)]
    pub struct Usage {
        pub appliance_threads: BTreeMap<String, f64>,
        pub appliance_total: f64,
        pub harness: f64,
    }

    impl Usage {
        pub fn between(before: &Snapshot, after: &Snapshot, window: Duration) -> Self {
            let seconds = window.as_secs_f64().max(1e-9);
            let cores = |ticks: u64| ticks as f64 / TICKS_PER_SECOND / seconds;
            let appliance_threads: BTreeMap<String, f64> = after
                .appliance
                .iter()
                .map(|(name, ticks)| {
                    let earlier = before.appliance.get(name).copied().unwrap_or(0);
                    (name.clone(), cores(ticks.saturating_sub(earlier)))
                })
                .collect();
            Self {
                appliance_total: appliance_threads.values().sum(),
                appliance_threads,
                harness: cores(after.harness.saturating_sub(before.harness)),
            }
        }
    }
}

mod report {
    //! The run's result: a table per stage, subscriber outcomes, CPU, and the appliance counters.

    use super::*;
    use crate::stats::{STAGES, StageHistograms, summary};
    use crate::subscribers::Outcome;

    /// The goal of issue 6: p99 of first_read → subscriber_recv at mainnet rate, in µs.
    const GOAL_P99_US: f64 = 100.0;

    pub struct Report {
        pub histograms: StageHistograms,
        pub outcomes: Vec<Outcome>,
        pub started: usize,
        pub connections: usize,
        pub keys_total: usize,
        pub observed_transactions: usize,
        pub probe_updates_per_second: f64,
        pub window: Duration,
        pub cpu: cpu::Usage,
        pub load_average: String,
        pub metrics: Vec<(String, f64)>,
    }

    impl Report {
        fn ended(&self) -> BTreeMap<String, usize> {
            let mut ended = BTreeMap::new();
            for outcome in &self.outcomes {
                if let Some((code, _)) = &outcome.ended {
                    *ended.entry(format!("{code:?}")).or_default() += 1;
                }
            }
            ended
        }

        fn dropped(&self) -> usize {
            self.outcomes
                .iter()
                .filter(|o| matches!(o.ended, Some((tonic::Code::ResourceExhausted, _))))
                .count()
        }

        /// Updates per subscriber: min, median, max, and how many received any.
        fn per_subscriber(&self) -> (u64, u64, u64, usize, u64) {
            let mut counts: Vec<u64> = self.outcomes.iter().map(|o| o.updates).collect();
            counts.sort_unstable();
            let total = counts.iter().sum();
            let any = counts.iter().filter(|&&n| n > 0).count();
            match (counts.first(), counts.last()) {
                (Some(&min), Some(&max)) => (min, counts[counts.len() / 2], max, any, total),
                _ => (0, 0, 0, 0, 0),
            }
        }

        pub fn print_table(&self, args: &Args) {
            println!(
                "latency harness: {} subscribers on {} connections ({} started), replay {} shreds/s{}, window {:.1} s, {} filter keys in all",
                args.subscribers,
                self.connections,
                self.started,
                args.rate,
                if args.burst { " in FEC-set bursts" } else { "" },
                self.window.as_secs_f64(),
                self.keys_total
            );
            println!(
                "probe: {} distinct transactions, {:.0} updates/s published (unfiltered)",
                self.observed_transactions, self.probe_updates_per_second
            );
            println!();
            println!(
                "{:<18} {:<32} {:>10} {:>10} {:>10} {:>10} {:>10}",
                "stage", "stamps", "count", "p50 µs", "p99 µs", "p999 µs", "max µs"
            );
            for (stage, histogram) in STAGES.iter().zip(&self.histograms.stages) {
                let s = summary(histogram);
                println!(
                    "{:<18} {:<32} {:>10} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                    stage.name, stage.what, s.count, s.p50_us, s.p99_us, s.p999_us, s.max_us
                );
            }
            println!();
            let (min, median, max, any, total) = self.per_subscriber();
            println!(
                "updates per subscriber: min {min}, median {median}, max {max}; {any} of {} received any; {total} in all",
                self.outcomes.len()
            );
            let ended = self.ended();
            if ended.is_empty() {
                println!("streams ended early: none (dropped: 0)");
            } else {
                println!(
                    "streams ended early: {ended:?} (dropped = ResourceExhausted: {})",
                    self.dropped()
                );
                if let Some((code, message)) = self.outcomes.iter().find_map(|o| o.ended.as_ref()) {
                    println!("  first: {code:?}: {message}");
                }
            }
            if self.histograms.out_of_order > 0 {
                println!(
                    "deliveries with decreasing stamps: {}",
                    self.histograms.out_of_order
                );
            }
            println!(
                "CPU (cores busy over the window): appliance {:.2} {:?}, harness {:.2}",
                self.cpu.appliance_total,
                self.cpu
                    .appliance_threads
                    .iter()
                    .map(|(name, cores)| format!("{name} {cores:.2}"))
                    .collect::<Vec<_>>(),
                self.cpu.harness
            );
            println!(
                "machine load average at the end: {} ({} cores)",
                self.load_average,
                std::thread::available_parallelism().map_or(0, |n| n.get())
            );
            println!("appliance counters over the window:");
            for (name, value) in &self.metrics {
                println!("  {name} {value}");
            }
            let total = summary(&self.histograms.stages[stats::SERVER_TOTAL]);
            println!(
                "goal p99 first_read -> subscriber_recv <= {GOAL_P99_US} µs: {} (p99 {:.1} µs), dropped {}",
                if total.p99_us <= GOAL_P99_US && total.count > 0 {
                    "met"
                } else {
                    "missed"
                },
                total.p99_us,
                self.dropped()
            );
        }

        pub fn markdown_row(&self, args: &Args) -> String {
            let s = |i: usize| summary(&self.histograms.stages[i]);
            let cell = |i: usize| {
                let s = s(i);
                format!("{:.0} / {:.0} / {:.0}", s.p50_us, s.p99_us, s.max_us)
            };
            let (_, median, _, any, total) = self.per_subscriber();
            let pacing = if args.burst { " (burst)" } else { "" };
            format!(
                "| {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {} / {} / {} | {} | {:.2} / {:.2} | {} |",
                args.subscribers,
                args.rate,
                pacing,
                s(stats::SERVER_TOTAL).count,
                cell(0),
                cell(4),
                cell(stats::SERVER_TOTAL),
                cell(6),
                cell(7),
                cell(stats::END_TO_END),
                total,
                median,
                any,
                self.dropped(),
                self.cpu.appliance_total,
                self.cpu.harness,
                self.load_average,
            )
        }

        pub fn to_json(&self, args: &Args) -> serde_json::Value {
            let stages: Vec<serde_json::Value> = STAGES
                .iter()
                .zip(&self.histograms.stages)
                .map(|(stage, histogram)| {
                    serde_json::json!({
                        "stage": stage.name,
                        "stamps": stage.what,
                        "summary": summary(histogram),
                    })
                })
                .collect();
            let (min, median, max, any, total) = self.per_subscriber();
            serde_json::json!({
                "subscribers": args.subscribers,
                "started": self.started,
                "connections": self.connections,
                "rate_shreds_per_second": args.rate,
                "burst_pacing": args.burst,
                "window_seconds": self.window.as_secs_f64(),
                "keys_total": self.keys_total,
                "probe": {
                    "distinct_transactions": self.observed_transactions,
                    "updates_per_second": self.probe_updates_per_second,
                },
                "stages": stages,
                "out_of_order": self.histograms.out_of_order,
                "updates_per_subscriber": {
                    "min": min, "median": median, "max": max,
                    "subscribers_with_updates": any, "total": total,
                },
                "ended": self.ended(),
                "dropped": self.dropped(),
                "cpu_cores": self.cpu,
                "load_average": self.load_average,
                "appliance_counters": self.metrics.iter().cloned().collect::<BTreeMap<_, _>>(),
            })
        }
    }
}
