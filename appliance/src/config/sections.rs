//! The sections of the configuration file, one struct each, with their defaults.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use decoder::DecoderConfig;
use serde::{Deserialize, Serialize};

use super::ConfigError;
use super::{AttachMode, BindPreference};

/// Whether `run` receives and streams shreds (receive, workers, gRPC listener).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StreamMode {
    /// On, unless the appliance is given an archive or an upstream and no shred source: then it
    /// serves only HTTP (the archive, insights).
    #[default]
    Auto,
    /// Always (the embedded replay when no source is given).
    On,
    /// Never: HTTP only.
    Off,
}

/// Whether `run` with nothing to serve but the embedded replay also serves the bundled samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SamplesMode {
    /// When no shred source, archive or upstream is given (the embedded default): the archive
    /// serves the bundled epoch-0 pieces and insights the bundled sample chain.
    #[default]
    Auto,
    /// Never.
    Off,
}

/// Where shreds come from. With no source at all, the embedded replay runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sources {
    /// Whether to receive and stream shreds at all: `auto`, `on`, `off`.
    pub stream: StreamMode,
    /// The embedded default's archive and insights samples: `auto`, `off` (docs/samples.md).
    pub samples: SamplesMode,
    /// Batched-UDP sources (`ADDR:PORT`), one receive thread each.
    pub udp: Vec<SocketAddr>,
    /// AF_XDP sources (`IFACE:PORT`), one pinned receive thread per NIC queue.
    pub xdp: Vec<String>,
    /// Datagrams taken per receive call (recvmmsg batch / AF_XDP RX burst).
    pub receive_batch: usize,
    /// Datagram slots (2 KiB each) of each ring from a receive thread to a worker; full ring =
    /// drop and count.
    pub ring_slots: usize,
    /// Socket receive buffer of the UDP sources, bytes.
    pub socket_buffer_bytes: usize,
    /// Coalesced UDP reads (`UDP_GRO`): a burst of equal-sized datagrams of one sender is read
    /// as one message and split (docs/receive.md); one 64 KiB buffer per batch slot.
    pub udp_gro: bool,
    /// Cores of the receive threads, in source order (AF_XDP: queue order); empty = AF_XDP
    /// queue q on core q modulo the core count, UDP sources unpinned.
    pub cores: Vec<usize>,
    /// How the XDP program is attached: `auto` (native, else generic), `native`, `skb`.
    pub xdp_attach: AttachMode,
    /// How AF_XDP sockets bind: `auto` (zero-copy, else copy), `zerocopy`, `copy`.
    pub xdp_bind: BindPreference,
    /// Busy-poll the AF_XDP rings instead of sleeping in poll(2): one full core per queue.
    pub busy_poll: bool,
    /// Relay another appliance's stream (`http(s)://host:port` of its gRPC address) instead of
    /// receiving shreds: a second tier (docs/relay.md). Excludes every shred source.
    pub relay: Option<String>,
    /// `x-token` sent to the relay's origin.
    pub relay_token: Option<String>,
    /// PEM file of the CA that signed the relay origin's certificate (https origins).
    pub relay_tls_ca: Option<PathBuf>,
}

impl Default for Sources {
    fn default() -> Self {
        Self {
            stream: StreamMode::Auto,
            samples: SamplesMode::Auto,
            udp: Vec::new(),
            xdp: Vec::new(),
            receive_batch: 64,
            ring_slots: 8_192,
            socket_buffer_bytes: 64 << 20,
            udp_gro: true,
            cores: Vec::new(),
            xdp_attach: AttachMode::Auto,
            xdp_bind: BindPreference::Auto,
            busy_poll: false,
            relay: None,
            relay_token: None,
            relay_tls_ca: None,
        }
    }
}

/// The replay source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Replay {
    /// Capture to play (length-prefixed, pcap or ar); none = the bundled slots when no other
    /// source is configured.
    pub file: Option<PathBuf>,
    /// Shreds per second.
    pub rate: u64,
    /// Play forever, renumbering slots on every pass.
    #[serde(rename = "loop")]
    pub looping: bool,
    /// Send each FEC set's shreds back to back (its first shred paced, so the average stays at
    /// `rate`), as a leader emits them, instead of one shred every 1/rate s.
    pub burst: bool,
    /// The first slot number of a looping replay (default: the capture's first slot), so that a
    /// restarted appliance continues the chain forward as a live cluster would.
    pub first_slot: Option<u64>,
}

impl Default for Replay {
    fn default() -> Self {
        Self {
            file: None,
            rate: 5_000,
            looping: false,
            burst: false,
            first_slot: None,
        }
    }
}

/// `[grpc] resume_rate`: measured with `bench/src/bin/resume_relay.rs storm` (bench/README.md).
pub const DEFAULT_RESUME_RATE: u64 = 200_000;

/// The gRPC stream frontend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Grpc {
    pub address: SocketAddr,
    /// Updates a subscriber may fall behind before its stream ends with RESOURCE_EXHAUSTED.
    pub subscriber_queue: usize,
    /// Bytes of updates a subscriber may have queued before its stream ends the same way.
    pub subscriber_queue_bytes: usize,
    /// Age in seconds of a subscriber's oldest queued update before its stream ends the same way.
    pub subscriber_queue_max_age_secs: u64,
    /// Slots of published updates kept for streams that resume (`from_slot`); 0 turns resuming
    /// off (docs/resume.md).
    pub recent_slots: usize,
    /// Bytes of published updates kept for resuming streams, oldest out beyond it.
    pub recent_bytes: usize,
    /// Updates per second that the replays of all resuming streams together may send (0 = no
    /// limit), so that many resumes at once leave the live stream its CPU.
    pub resume_rate: u64,
    /// Entry batches a `SubscribeEntries` subscriber may fall behind by before it is cut.
    pub entries_queue: usize,
    /// Updates (transactions and slot updates) a Yellowstone `SubscribeDeshred` session may fall
    /// behind by before it is cut.
    pub deshred_queue: usize,
    /// Streams open at once from one remote address; one more is refused with RESOURCE_EXHAUSTED.
    pub max_subscribers_per_ip: usize,
    /// Streams open at once with one access token (`x-token`), whatever their addresses; counted
    /// only when tokens are configured. One more is refused with RESOURCE_EXHAUSTED.
    pub max_subscribers_per_token: usize,
    /// TCP connections open at once from one remote address; one more is closed at accept.
    pub max_connections_per_ip: usize,
    /// Seconds a new connection has to send its first bytes (HTTP/2 preface or TLS hello)
    /// before it is closed.
    pub first_bytes_timeout_secs: u64,
    /// Seconds after SIGTERM before the connections still open (gRPC and HTTP) are closed; below
    /// the systemd unit's `TimeoutStopSec` (20 s).
    pub shutdown_timeout_secs: u64,
    /// Named filters in one request.
    pub max_filters: usize,
    /// Account keys across the filters of one request.
    pub max_keys: usize,
    /// Streams open at once; one more is refused with RESOURCE_EXHAUSTED.
    pub max_subscribers: usize,
    /// PEM certificate chain and key: serve over TLS.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// `SCHED_FIFO` priority of the runtime's worker threads, 1..=99; 0 = ordinary scheduling.
    /// Meant below `workers.realtime_priority` (docs/fanout.md, "Real-time runtime"). Needs
    /// `CAP_SYS_NICE`.
    pub realtime_priority: u8,
    /// Codecs the stream may be sent in, to a client that accepts one (`grpc-accept-encoding`);
    /// empty = always uncompressed (bench/README.md: compression does not pay on updates).
    pub compression: Vec<GrpcCodec>,
}

/// A gRPC message compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum GrpcCodec {
    Gzip,
    Zstd,
}

impl Default for Grpc {
    fn default() -> Self {
        Self {
            address: SocketAddr::from(([127, 0, 0, 1], 9000)),
            subscriber_queue: 16_384,
            subscriber_queue_bytes: stream::fanout::queue::DEFAULT_QUEUE_BYTES,
            subscriber_queue_max_age_secs: stream::fanout::queue::DEFAULT_QUEUE_MAX_AGE.as_secs(),
            recent_slots: stream::fanout::recent::DEFAULT_RECENT_SLOTS,
            recent_bytes: stream::fanout::recent::DEFAULT_RECENT_BYTES,
            resume_rate: DEFAULT_RESUME_RATE,
            entries_queue: stream::entries::DEFAULT_ENTRIES_QUEUE,
            deshred_queue: stream::deshred::DEFAULT_DESHRED_QUEUE,
            max_subscribers_per_ip: stream::service::DEFAULT_MAX_SESSIONS_PER_IP,
            max_subscribers_per_token: stream::service::DEFAULT_MAX_SESSIONS_PER_TOKEN,
            max_connections_per_ip: 200,
            first_bytes_timeout_secs: 5,
            shutdown_timeout_secs: 10,
            max_filters: 64,
            max_keys: 10_000,
            max_subscribers: stream::service::DEFAULT_MAX_SESSIONS,
            tls_cert: None,
            tls_key: None,
            realtime_priority: 0,
            compression: Vec::new(),
        }
    }
}

/// The HTTP frontend (health, metrics, JSON-RPC archive, insights).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Http {
    pub address: SocketAddr,
    /// actix worker threads.
    pub workers: usize,
    /// Seconds a request's body may take after its headers; then 400 and the connection closes.
    pub body_timeout_secs: u64,
    /// Origins a browser page may call from (CORS): `["*"]` any (the default, as a validator's
    /// RPC), `[]` none, else exact `scheme://host[:port]` origins.
    pub cors_origins: Vec<String>,
    /// Open TCP connections from one remote address; one more is closed at accept.
    pub max_connections_per_ip: usize,
}

impl Default for Http {
    fn default() -> Self {
        Self {
            address: SocketAddr::from(([127, 0, 0, 1], 8080)),
            workers: 1,
            body_timeout_secs: 10,
            cors_origins: vec!["*".to_owned()],
            max_connections_per_ip: front::http::DEFAULT_MAX_CONNECTIONS_PER_IP,
        }
    }
}

/// Access tokens; none = authentication off.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Auth {
    /// File with one token per line (preferred: keeps secrets out of this file).
    pub token_file: Option<PathBuf>,
    /// Tokens given inline.
    pub tokens: Vec<String>,
}

/// Bounds of the decoder core (shred intake, FEC sets, deshredding).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Decoder {
    /// Accept only this shred version (cluster id); none accepts any.
    pub shred_version: Option<u16>,
    /// FEC sets assembled or awaiting deshred at once (oldest evicted at the limit).
    pub max_sets_in_flight: usize,
    /// Completed sets remembered to classify late shreds.
    pub completed_sets_remembered: usize,
    /// Slots deshredded at once.
    pub max_slots_in_flight: usize,
    /// Slots below the highest seen minus this are stale.
    pub slot_lookback: u64,
    /// Slots above the highest seen plus this are rejected.
    pub max_slots_ahead: u64,
    /// Largest entry batch assembled, bytes (reserved at start).
    pub max_batch_bytes: usize,
    /// Complete batches waiting to be decoded.
    pub max_pending_batches: usize,
    /// Check Merkle proofs, leader signatures and chained roots. Turn off only for a trusted
    /// feed (a shredstream from one's own validator): forged shreds would then be decoded.
    pub authenticate: bool,
    /// Publish each transaction as soon as its bytes are complete (incremental deshredding,
    /// docs/incremental-deshred.md); false = the batch-wise path (a transaction waits for its
    /// whole entry batch).
    pub incremental: bool,
    /// Batches parsed incrementally at once per worker; a batch finding none free is published
    /// whole when complete (counted).
    pub max_open_streams: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        let defaults = DecoderConfig::default();
        Self {
            shred_version: defaults.shred_version,
            max_sets_in_flight: defaults.fec.max_sets_in_flight,
            completed_sets_remembered: defaults.fec.completed_sets_remembered,
            max_slots_in_flight: defaults.deshred.max_slots_in_flight,
            slot_lookback: defaults.slot_lookback,
            max_slots_ahead: defaults.max_slots_ahead,
            max_batch_bytes: defaults.max_batch_bytes,
            max_pending_batches: defaults.max_pending_batches,
            authenticate: defaults.fec.authenticate,
            incremental: true,
            max_open_streams: defaults.incremental.max_open_streams,
        }
    }
}

/// The worker pool (docs/workers.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Workers {
    /// Worker threads, 1..=64; none = 1 on a machine with at most 2 cores, else the cores left
    /// after the receive threads.
    pub count: Option<usize>,
    /// Data shred slots (1.2 KiB each) of each ring from one worker to another; full ring = drop
    /// and count.
    pub forward_slots: usize,
    /// Cores to pin the workers to, in worker order; empty = unpinned.
    pub cores: Vec<usize>,
    /// Longest park of an idle worker, microseconds: a safety net only, since the threads
    /// feeding a worker unpark it when they publish (docs/workers.md).
    pub park_timeout_us: u64,
    /// `SCHED_FIFO` priority of the receive and worker threads, 1..=99; 0 = ordinary scheduling
    /// (docs/workers.md, "Real-time priority"). Needs `CAP_SYS_NICE`.
    pub realtime_priority: u8,
}

impl Default for Workers {
    fn default() -> Self {
        Self {
            count: None,
            forward_slots: 4_096,
            cores: Vec::new(),
            park_timeout_us: 1_000,
            realtime_priority: 0,
        }
    }
}

/// The JSON-RPC archive and the upstream validator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Archive {
    /// Directories or http(s) base URLs holding epochs (`URL#FIRST[-LAST]` limits the epochs
    /// probed); the first source holding an epoch wins.
    pub sources: Vec<String>,
    /// Upstream validator JSON-RPC URL, http or https (proxy, newest epochs, insights ingest).
    pub upstream: Option<String>,
    /// PEM file of extra CA certificates trusted for an https upstream (next to Mozilla's roots).
    pub upstream_ca: Option<PathBuf>,
    /// Pause between catalog checks of the sources (new epochs, replaced ones), e.g. "24h".
    pub catalog_interval: String,
    /// Bound of the cache of index buckets fetched from http(s) sources, in MiB (0 = no cache).
    pub http_cache_mb: usize,
    /// Bound of the memo of slot ranges and blockhashes derived for sources that publish neither
    /// `slot-ranges.raw` nor `slot-to-blockhash` (public files only), in slots (0 = no memo).
    pub slot_memo_entries: usize,
}

impl Default for Archive {
    fn default() -> Self {
        Self {
            sources: Vec::new(),
            upstream: None,
            upstream_ca: None,
            catalog_interval: "24h".into(),
            http_cache_mb: (archive::rangecache::DEFAULT_BYTES >> 20) as usize,
            slot_memo_entries: archive::slotmemo::DEFAULT_ENTRIES,
        }
    }
}

impl Archive {
    /// The catalog interval as a duration (validated by [`Config::validate`]).
    pub fn catalog_interval(&self) -> Result<std::time::Duration, ConfigError> {
        match insights::parse_duration(&self.catalog_interval) {
            Ok(d) if !d.is_zero() => Ok(d),
            Ok(_) => Err(ConfigError::Invalid {
                field: "archive.catalog_interval",
                reason: "must be above zero".into(),
            }),
            Err(reason) => Err(ConfigError::Invalid {
                field: "archive.catalog_interval",
                reason,
            }),
        }
    }
}

/// Program id overrides (a fork, a devnet deployment).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Programs {
    /// NAME (as in the specification, e.g. ALPHA_FUN) → base58 program id.
    pub ids: BTreeMap<String, String>,
    /// The aggregator's program id.
    pub aggregator: Option<String>,
}

/// How `appliance run` logs (to standard error).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Log {
    /// `text` (human-readable lines) or `json` (one JSON object per line, for log shippers).
    pub format: LogFormat,
}

/// The log line format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// Where every on-disk store of the appliance lives (the insights store today; later caches).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Data {
    /// The data directory, created at start when a store needs it.
    pub dir: PathBuf,
}

impl Default for Data {
    fn default() -> Self {
        Self {
            dir: PathBuf::from("data"),
        }
    }
}

/// The insights ingest and API (ingesting when `archive.upstream` is set).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Insights {
    /// Store file; unset = `insights.redb` in `data.dir`.
    pub db: Option<PathBuf>,
    /// How long history snapshots are kept, e.g. "7d".
    pub retention: String,
    /// How long full per-block statistics are kept, e.g. "1h".
    pub block_retention: String,
    /// Pause between polls of the upstream's confirmed tip once caught up, e.g. "200ms".
    pub poll: String,
}

impl Default for Insights {
    fn default() -> Self {
        Self {
            db: None,
            retention: "7d".into(),
            block_retention: "1h".into(),
            poll: "200ms".into(),
        }
    }
}

impl Insights {
    /// The store file: `db`, else `insights.redb` in the data directory.
    pub fn store_path(&self, data: &Data) -> PathBuf {
        self.db
            .clone()
            .unwrap_or_else(|| data.dir.join("insights.redb"))
    }

    /// The three durations, each named on error.
    pub fn durations(&self) -> Result<InsightsDurations, ConfigError> {
        Ok(InsightsDurations {
            retention: duration("insights.retention", &self.retention)?,
            block_retention: duration("insights.block_retention", &self.block_retention)?,
            poll: duration("insights.poll", &self.poll)?,
        })
    }
}

/// The parsed durations of [`Insights`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsightsDurations {
    pub retention: std::time::Duration,
    pub block_retention: std::time::Duration,
    pub poll: std::time::Duration,
}

/// A duration field ("7d", "10m", "500ms"), its name in the error.
fn duration(field: &'static str, text: &str) -> Result<std::time::Duration, ConfigError> {
    insights::parse_duration(text).map_err(|reason| ConfigError::Invalid { field, reason })
}

/// Where the leader schedule and the shred version come from (docs/deploy.md, "Trust modes").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cluster {
    /// Cluster JSON-RPC URL (http or https) of the leader schedule, epoch schedule and cluster
    /// nodes; unset = `archive.upstream` when that is set.
    pub rpc: Option<String>,
    /// Fixed leader keys (base58) accepted for every slot instead of a schedule, e.g. a private
    /// link to one's own validator.
    pub leaders: Vec<String>,
    /// Accept the feed without leader signatures (Merkle proofs and chained roots only).
    pub trust_feed: bool,
    /// Timeout of one RPC request, seconds.
    pub timeout_secs: u64,
    /// Largest RPC answer read, MiB (a mainnet leader schedule is a few MiB).
    pub max_response_mb: u64,
}

impl Default for Cluster {
    fn default() -> Self {
        Self {
            rpc: None,
            leaders: Vec::new(),
            trust_feed: false,
            timeout_secs: 30,
            max_response_mb: 64,
        }
    }
}

impl Cluster {
    /// The RPC the schedule is fetched from: `rpc`, else the archive's upstream.
    pub fn rpc_url<'a>(&'a self, archive: &'a Archive) -> Option<&'a str> {
        self.rpc.as_deref().or(archive.upstream.as_deref())
    }
}

/// The address lookup-table cache (docs/lookup-tables.md): its bounds, the fetch queue of the
/// cluster RPC (`cluster.rpc`), the store and the preload list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LookupTables {
    /// Most tables cached (least recently used out).
    pub max_entries: usize,
    /// Most memory charged by cached tables, MiB (≈ 8.4 KiB per full table of 256 addresses).
    pub max_mb: usize,
    /// Tables waiting to be fetched from the cluster; a full queue drops and counts.
    pub fetch_queue: usize,
    /// Seconds after a stream-learned change before its table is fetched again to confirm it.
    pub confirm_after_secs: u64,
    /// Store file; unset = `lookup-tables.redb` in `data.dir`.
    pub db: Option<PathBuf>,
    /// Keep the cache across restarts.
    pub persist: bool,
    /// File of table addresses (base58, one per line, `#` comments) fetched at start.
    pub preload: Option<PathBuf>,
}

impl Default for LookupTables {
    fn default() -> Self {
        Self {
            max_entries: 100_000,
            max_mb: 512,
            fetch_queue: 4096,
            confirm_after_secs: 30,
            db: None,
            persist: true,
            preload: None,
        }
    }
}

impl LookupTables {
    /// The store file: `db`, else `lookup-tables.redb` in the data directory.
    pub fn store_path(&self, data: &Data) -> PathBuf {
        self.db
            .clone()
            .unwrap_or_else(|| data.dir.join("lookup-tables.redb"))
    }
}
