//! The flags of `appliance run` and how they override the configuration file: every flag has a
//! field in [`Config`], so `--check-config` validates and prints the merged whole.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;

use anyhow::bail;

use super::Config;
use super::{AttachMode, BindPreference};

/// `--deshred`: the per-transaction path or the batch-wise one.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeshredMode {
    Incremental,
    Batch,
}

/// Arguments of `appliance run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Configuration file (TOML, see config/appliance.example.toml); flags override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Validate the configuration (file and flags), print the effective settings and exit.
    #[arg(long = "check-config")]
    pub check_config: bool,
    /// Receive shreds on this UDP address (repeatable).
    #[arg(long = "udp")]
    pub udp: Vec<SocketAddr>,
    /// Receive shreds over AF_XDP on IFACE:PORT (repeatable; every receive queue of the
    /// interface gets a socket and a pinned thread).
    #[arg(long = "xdp", value_name = "IFACE:PORT")]
    pub xdp: Vec<String>,
    /// How to attach the XDP program: native (driver) mode, generic (skb) mode, or native with
    /// a fallback to generic.
    #[arg(long = "xdp-attach", value_enum)]
    pub xdp_attach: Option<AttachMode>,
    /// How to bind the AF_XDP sockets: zero-copy with a fallback to copy mode, or only one.
    #[arg(long = "xdp-bind", value_enum)]
    pub xdp_bind: Option<BindPreference>,
    /// Busy-poll the AF_XDP rings (SO_PREFER_BUSY_POLL, SO_BUSY_POLL, spinning) instead of
    /// sleeping in poll(2): lowest latency, one full core per queue.
    #[arg(long = "busy-poll")]
    pub busy_poll: bool,
    /// Cores for the receive threads, in source order (AF_XDP: queue order); default: queue q
    /// on core q modulo the core count, UDP sources unpinned.
    #[arg(long = "rx-cores", value_delimiter = ',')]
    pub rx_cores: Vec<usize>,
    /// Worker threads (1..=64) [default: 1 on ≤ 2 cores, else cores − receive threads].
    #[arg(long = "workers")]
    pub workers: Option<usize>,
    /// Receive and stream shreds: on, off (HTTP only), or auto: on unless an archive or upstream
    /// is given without a shred source [default: auto].
    #[arg(long = "stream", value_enum)]
    pub stream: Option<super::StreamMode>,
    /// The bundled archive and insights samples: auto (served when no shred source, archive or
    /// upstream is given) or off [default: auto].
    #[arg(long = "samples", value_enum)]
    pub samples: Option<super::SamplesMode>,
    /// How transactions leave the deshredder: each as soon as its bytes are complete
    /// (incremental) or with its whole entry batch (batch) [default: incremental].
    #[arg(long = "deshred", value_enum)]
    pub deshred: Option<DeshredMode>,
    /// Cores for the workers, in worker order [default: unpinned].
    #[arg(long = "worker-cores", value_delimiter = ',')]
    pub worker_cores: Vec<usize>,
    /// SCHED_FIFO priority (1-99) of the receive and worker threads; 0 = off [default: 0].
    #[arg(long = "realtime-priority")]
    pub realtime_priority: Option<u8>,
    /// SCHED_FIFO priority (1-99) of the gRPC runtime's worker threads, meant below
    /// --realtime-priority; 0 = off [default: 0].
    #[arg(long = "grpc-realtime-priority")]
    pub grpc_realtime_priority: Option<u8>,
    /// Send the stream compressed with this codec to clients that accept it (repeat for both);
    /// none = uncompressed [default: none].
    #[arg(long = "grpc-compression", value_enum)]
    pub grpc_compression: Vec<super::GrpcCodec>,
    /// Datagrams per receive batch (one recvmmsg call or one RX ring pass) [default: 64].
    #[arg(long = "rx-batch")]
    pub rx_batch: Option<NonZeroUsize>,
    /// Kernel receive buffer of each UDP socket, in bytes [default: 64 MiB].
    #[arg(long = "rx-buffer")]
    pub rx_buffer: Option<usize>,
    /// Relay another appliance's stream instead of receiving shreds: its gRPC address
    /// (http://HOST:PORT or https://...); subscribers here get everything it publishes, without
    /// a gap across reconnects (docs/relay.md).
    #[arg(long = "relay", value_name = "URL")]
    pub relay: Option<String>,
    /// Access token sent to the relay's origin (x-token).
    #[arg(long = "relay-token", value_name = "TOKEN")]
    pub relay_token: Option<String>,
    /// PEM file of the CA that signed the relay origin's TLS certificate.
    #[arg(long = "relay-tls-ca", value_name = "FILE")]
    pub relay_tls_ca: Option<PathBuf>,
    /// Replay this shred capture (length-prefixed, pcap or ar).
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Replay rate in shreds per second [default: 5000].
    #[arg(long = "replay-rate")]
    pub replay_rate: Option<u64>,
    /// Loop the replay forever.
    #[arg(long = "replay-loop")]
    pub replay_loop: bool,
    /// Send each FEC set's shreds back to back (the set's first shred is paced, so the average
    /// stays at --replay-rate), as a leader emits them, instead of one shred every 1/rate s.
    #[arg(long = "replay-burst")]
    pub replay_burst: bool,
    /// First slot number of a looping replay (the embedded default loops) [default: the
    /// capture's first slot].
    #[arg(long = "replay-first-slot", value_name = "SLOT")]
    pub replay_first_slot: Option<u64>,
    /// gRPC listen address [default: 127.0.0.1:9000].
    #[arg(long)]
    pub grpc: Option<SocketAddr>,
    /// HTTP listen address (/health, /metrics, archive, insights) [default: 127.0.0.1:8080].
    #[arg(long)]
    pub http: Option<SocketAddr>,
    /// Archive source: a directory or an http(s) base URL (`URL#FIRST[-LAST]` limits the epochs
    /// probed). Repeatable, mixed; the first source holding an epoch wins.
    #[arg(long)]
    pub archive: Vec<String>,
    /// Upstream validator JSON-RPC URL (http or https).
    #[arg(long)]
    pub upstream: Option<String>,
    /// PEM file of extra CA certificates trusted for an https upstream.
    #[arg(long = "upstream-ca")]
    pub upstream_ca: Option<PathBuf>,
    /// Pause between archive catalog checks (new or replaced epochs), e.g. 24h, 10m, 500ms
    /// [default: 24h].
    #[arg(long = "archive-check-interval")]
    pub archive_check_interval: Option<String>,
    /// actix worker threads of the HTTP address (JSON-RPC archive throughput scales with them)
    /// [default: 1].
    #[arg(long = "http-workers")]
    pub http_workers: Option<usize>,
    /// Origin a browser page may call the HTTP address from (CORS; repeatable): `*` any
    /// origin, `none` CORS off, else `scheme://host[:port]` [default: *].
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// Override a program id: NAME=BASE58 (NAME as in the specification, e.g. ALPHA_FUN).
    #[arg(long = "program-id", value_name = "NAME=BASE58")]
    pub program_ids: Vec<String>,
    /// Override the aggregator's program id.
    #[arg(long = "aggregator-id", value_name = "BASE58")]
    pub aggregator_id: Option<String>,
    /// Updates a subscriber may fall behind before its stream ends with RESOURCE_EXHAUSTED
    /// [default: 16384].
    #[arg(long = "subscriber-queue")]
    pub subscriber_queue: Option<usize>,
    /// Slots of published updates kept for streams that resume (`from_slot`); 0 = no resume
    /// [default: 150].
    #[arg(long = "recent-slots")]
    pub recent_slots: Option<usize>,
    /// gRPC streams open at once; one more is refused with RESOURCE_EXHAUSTED [default: 10000].
    #[arg(long = "max-subscribers")]
    pub max_subscribers: Option<usize>,
    /// Directory of every on-disk store (insights; later caches) [default: data].
    #[arg(long = "data-dir")]
    pub data_dir: Option<PathBuf>,
    /// Cluster JSON-RPC URL (http or https) of the leader schedule and shred version
    /// [default: --upstream].
    #[arg(long)]
    pub rpc: Option<String>,
    /// Accept sets signed by this key (base58) for every slot instead of a schedule
    /// (repeatable).
    #[arg(long = "leader", value_name = "PUBKEY")]
    pub leaders: Vec<String>,
    /// Trust the feed: no leader signatures checked, Merkle proofs and chained roots only.
    #[arg(long = "trust-feed")]
    pub trust_feed: bool,
    /// Log line format on standard error: text, or json (one object per line)
    /// [default: text].
    #[arg(long = "log-format", value_enum)]
    pub log_format: Option<super::LogFormat>,
    #[command(flatten)]
    pub security: super::SecurityArgs,
    #[command(flatten)]
    pub insights: InsightsArgs,
}

impl RunArgs {
    /// The AF_XDP and core flags, and the replay's burst pacing.
    fn apply_receive_flags(&self, config: &mut Config) {
        if !self.rx_cores.is_empty() {
            config.sources.cores.clone_from(&self.rx_cores);
        }
        if let Some(attach) = self.xdp_attach {
            config.sources.xdp_attach = attach;
        }
        if let Some(bind) = self.xdp_bind {
            config.sources.xdp_bind = bind;
        }
        config.sources.busy_poll |= self.busy_poll;
        config.replay.burst |= self.replay_burst;
    }

    /// `--relay`, `--relay-token`, `--relay-tls-ca`.
    fn apply_relay_flags(&self, config: &mut Config) {
        if self.relay.is_some() {
            config.sources.relay.clone_from(&self.relay);
        }
        if self.relay_token.is_some() {
            config.sources.relay_token.clone_from(&self.relay_token);
        }
        if self.relay_tls_ca.is_some() {
            config.sources.relay_tls_ca.clone_from(&self.relay_tls_ca);
        }
    }

    /// `--rpc`, `--leader`, `--trust-feed`.
    fn apply_cluster_flags(&self, config: &mut Config) {
        if self.rpc.is_some() {
            config.cluster.rpc.clone_from(&self.rpc);
        }
        if !self.leaders.is_empty() {
            config.cluster.leaders.clone_from(&self.leaders);
        }
        config.cluster.trust_feed |= self.trust_feed;
    }

    /// `--udp`, `--xdp`, `--replay` and its pacing, `--relay`, `--stream`, `--samples`, the
    /// receive batch and socket buffer.
    fn apply_source_flags(&self, config: &mut Config) {
        if !self.udp.is_empty() {
            config.sources.udp.clone_from(&self.udp);
        }
        if !self.xdp.is_empty() {
            config.sources.xdp.clone_from(&self.xdp);
        }
        if self.replay.is_some() {
            config.replay.file.clone_from(&self.replay);
        }
        self.apply_relay_flags(config);
        if let Some(mode) = self.stream {
            config.sources.stream = mode;
        }
        if let Some(mode) = self.samples {
            config.sources.samples = mode;
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
        if self.replay_first_slot.is_some() {
            config.replay.first_slot = self.replay_first_slot;
        }
    }

    /// `--workers`, `--worker-cores`, `--realtime-priority`, `--deshred`.
    fn apply_worker_flags(&self, config: &mut Config) {
        if self.workers.is_some() {
            config.workers.count = self.workers;
        }
        if !self.worker_cores.is_empty() {
            config.workers.cores.clone_from(&self.worker_cores);
        }
        if let Some(priority) = self.realtime_priority {
            config.workers.realtime_priority = priority;
        }
        if let Some(mode) = self.deshred {
            config.decoder.incremental = mode == DeshredMode::Incremental;
        }
    }

    /// The gRPC and HTTP listeners: addresses, compression, priority, CORS, subscriber bounds.
    fn apply_listener_flags(&self, config: &mut Config) {
        if !self.grpc_compression.is_empty() {
            config.grpc.compression.clone_from(&self.grpc_compression);
        }
        if let Some(priority) = self.grpc_realtime_priority {
            config.grpc.realtime_priority = priority;
        }
        if let Some(address) = self.grpc {
            config.grpc.address = address;
        }
        if let Some(address) = self.http {
            config.http.address = address;
        }
        if let Some(workers) = self.http_workers {
            config.http.workers = workers;
        }
        if !self.cors_origins.is_empty() {
            config.http.cors_origins = self
                .cors_origins
                .iter()
                .filter(|origin| *origin != "none")
                .cloned()
                .collect();
        }
        if let Some(max) = self.max_subscribers {
            config.grpc.max_subscribers = max;
        }
        if let Some(queue) = self.subscriber_queue {
            config.grpc.subscriber_queue = queue;
        }
        if let Some(slots) = self.recent_slots {
            config.grpc.recent_slots = slots;
        }
    }

    /// `--archive`, `--upstream`, `--upstream-ca`, `--archive-check-interval`.
    fn apply_archive_flags(&self, config: &mut Config) {
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
    }

    /// `--program-id NAME=BASE58` and `--aggregator-id`.
    fn apply_program_flags(&self, config: &mut Config) -> anyhow::Result<()> {
        // Checked here under their flag names; a bad file entry is named as in the file.
        super::programs::registry(&self.program_ids, self.aggregator_id.as_deref())?;
        for pair in &self.program_ids {
            let Some((name, id)) = pair.split_once('=') else {
                bail!("--program-id {pair:?}: expected NAME=BASE58");
            };
            config.programs.ids.insert(name.to_owned(), id.to_owned());
        }
        if self.aggregator_id.is_some() {
            config.programs.aggregator.clone_from(&self.aggregator_id);
        }
        Ok(())
    }

    /// The configuration file (or the defaults) with the flags applied, validated.
    pub fn effective_config(&self) -> anyhow::Result<Config> {
        let mut config = match &self.config {
            Some(path) => Config::load(path)?,
            None => Config::default(),
        };
        self.apply_source_flags(&mut config);
        self.apply_worker_flags(&mut config);
        self.apply_listener_flags(&mut config);
        self.apply_archive_flags(&mut config);
        self.apply_program_flags(&mut config)?;
        self.apply_receive_flags(&mut config);
        self.apply_cluster_flags(&mut config);
        if let Some(format) = self.log_format {
            config.log.format = format;
        }
        if let Some(dir) = &self.data_dir {
            config.data.dir.clone_from(dir);
        }
        self.insights.apply(&mut config);
        self.security.apply(&mut config);
        config.validate()?;
        Ok(config)
    }
}

/// Insights flags of `appliance run` (the `[insights]` section).
#[derive(clap::Args, Debug)]
pub struct InsightsArgs {
    /// Insights store file [default: insights.redb in the data directory].
    #[arg(long = "insights-db")]
    pub insights_db: Option<PathBuf>,
    /// How long history snapshots are kept (e.g. 7d, 12h) [default: 7d].
    #[arg(long = "insights-retention", value_parser = duration_text)]
    pub insights_retention: Option<String>,
    /// How long full per-block statistics are kept (e.g. 1h) [default: 1h].
    #[arg(long = "insights-block-retention", value_parser = duration_text)]
    pub insights_block_retention: Option<String>,
    /// Pause between polls of the upstream's confirmed tip once caught up (e.g. 200ms)
    /// [default: 200ms].
    #[arg(long = "insights-poll", value_parser = duration_text)]
    pub insights_poll: Option<String>,
}

impl InsightsArgs {
    fn apply(&self, config: &mut Config) {
        if self.insights_db.is_some() {
            config.insights.db.clone_from(&self.insights_db);
        }
        for (flag, field) in [
            (&self.insights_retention, &mut config.insights.retention),
            (
                &self.insights_block_retention,
                &mut config.insights.block_retention,
            ),
            (&self.insights_poll, &mut config.insights.poll),
        ] {
            if let Some(text) = flag {
                field.clone_from(text);
            }
        }
    }
}

/// A duration flag, checked when parsed and kept as written (the file's form).
fn duration_text(text: &str) -> Result<String, String> {
    insights::parse_duration(text).map(|_| text.to_owned())
}
