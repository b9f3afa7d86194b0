//! The appliance's configuration file (`appliance run --config FILE`, TOML): every bound of the
//! pipeline (ring sizes, sets in flight, slot window, queue sizes) with a sane default, validated
//! at start with errors that name the field. Command-line flags override the file; `appliance run
//! --check-config` validates the merged result, prints it and exits.
//!
//! Unknown fields are errors (a misspelt bound must not silently fall back to its default).
//! `config/appliance.example.toml` lists every field with its default and is parsed by a test.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use decoder::DecoderConfig;
use serde::{Deserialize, Serialize};

/// Why a configuration was refused. One variant per reason.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
}

/// The whole configuration. Every section and field is optional in the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub sources: Sources,
    pub replay: Replay,
    pub grpc: Grpc,
    pub http: Http,
    pub auth: Auth,
    pub decoder: Decoder,
    pub workers: Workers,
    pub archive: Archive,
    pub programs: Programs,
}

/// Where shreds come from. With no source at all, the embedded replay runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sources {
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
}

impl Default for Sources {
    fn default() -> Self {
        Self {
            udp: Vec::new(),
            xdp: Vec::new(),
            receive_batch: 64,
            ring_slots: 8_192,
            socket_buffer_bytes: 64 << 20,
            udp_gro: true,
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
}

impl Default for Replay {
    fn default() -> Self {
        Self {
            file: None,
            rate: 5_000,
            looping: false,
        }
    }
}

/// The gRPC stream frontend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Grpc {
    pub address: SocketAddr,
    /// Updates a subscriber may fall behind before its stream ends with RESOURCE_EXHAUSTED.
    pub subscriber_queue: usize,
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
}

impl Default for Grpc {
    fn default() -> Self {
        Self {
            address: SocketAddr::from(([127, 0, 0, 1], 9000)),
            subscriber_queue: 16_384,
            max_filters: 64,
            max_keys: 10_000,
            max_subscribers: server::stream_service::DEFAULT_MAX_SESSIONS,
            tls_cert: None,
            tls_key: None,
            realtime_priority: 0,
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
}

impl Default for Http {
    fn default() -> Self {
        Self {
            address: SocketAddr::from(([127, 0, 0, 1], 8080)),
            workers: 1,
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
        match server::insights::parse_duration(&self.catalog_interval) {
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

impl Config {
    /// Reads and parses a configuration file (not yet validated: flags may still change it).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|error| ConfigError::Parse {
            path: path.to_owned(),
            message: error.to_string(),
        })
    }

    /// The effective configuration as TOML (what `--check-config` prints).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|error| format!("# unprintable: {error}\n"))
    }

    /// Checks every bound; the first violation is the error.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let within = |field: &'static str, value: usize, min: usize, max: usize| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(ConfigError::Invalid {
                    field,
                    reason: format!("{value} is outside {min}..={max}"),
                })
            }
        };
        within("sources.receive_batch", self.sources.receive_batch, 1, 1024)?;
        within("sources.ring_slots", self.sources.ring_slots, 64, 1 << 24)?;
        if !self.sources.ring_slots.is_power_of_two() {
            return Err(ConfigError::Invalid {
                field: "sources.ring_slots",
                reason: format!("{} is not a power of two", self.sources.ring_slots),
            });
        }
        within(
            "sources.socket_buffer_bytes",
            self.sources.socket_buffer_bytes,
            64 << 10,
            1 << 30,
        )?;
        if self.replay.rate == 0 {
            return Err(ConfigError::Invalid {
                field: "replay.rate",
                reason: "must be positive".into(),
            });
        }
        within(
            "grpc.subscriber_queue",
            self.grpc.subscriber_queue,
            1,
            1 << 22,
        )?;
        within("grpc.max_filters", self.grpc.max_filters, 1, 4096)?;
        within("grpc.max_keys", self.grpc.max_keys, 1, 1_000_000)?;
        within(
            "grpc.max_subscribers",
            self.grpc.max_subscribers,
            1,
            1_000_000,
        )?;
        if self.grpc.tls_cert.is_some() != self.grpc.tls_key.is_some() {
            return Err(ConfigError::Invalid {
                field: "grpc.tls_cert",
                reason: "tls_cert and tls_key go together".into(),
            });
        }
        within("http.workers", self.http.workers, 1, 64)?;
        let d = &self.decoder;
        within(
            "decoder.max_sets_in_flight",
            d.max_sets_in_flight,
            64,
            1 << 20,
        )?;
        within(
            "decoder.completed_sets_remembered",
            d.completed_sets_remembered,
            64,
            1 << 22,
        )?;
        within(
            "decoder.max_slots_in_flight",
            d.max_slots_in_flight,
            2,
            1 << 16,
        )?;
        within(
            "decoder.slot_lookback",
            d.slot_lookback as usize,
            1,
            1 << 16,
        )?;
        within(
            "decoder.max_slots_ahead",
            d.max_slots_ahead as usize,
            1,
            1 << 20,
        )?;
        within(
            "decoder.max_batch_bytes",
            d.max_batch_bytes,
            1 << 20,
            1 << 30,
        )?;
        within(
            "decoder.max_pending_batches",
            d.max_pending_batches,
            1,
            1 << 20,
        )?;
        self.archive.catalog_interval()?;
        within(
            "archive.http_cache_mb",
            self.archive.http_cache_mb,
            0,
            1 << 20,
        )?;
        within(
            "archive.slot_memo_entries",
            self.archive.slot_memo_entries,
            0,
            1 << 24,
        )?;
        if let Some(count) = self.workers.count {
            within("workers.count (--workers)", count, 1, 64)?;
        }
        within(
            "workers.forward_slots",
            self.workers.forward_slots,
            64,
            1 << 20,
        )?;
        within(
            "workers.park_timeout_us",
            self.workers.park_timeout_us as usize,
            10,
            1_000_000,
        )?;
        within(
            "workers.realtime_priority (--realtime-priority)",
            usize::from(self.workers.realtime_priority),
            0,
            usize::from(crate::sched::MAX_PRIORITY),
        )?;
        within(
            "grpc.realtime_priority (--grpc-realtime-priority)",
            usize::from(self.grpc.realtime_priority),
            0,
            usize::from(crate::sched::MAX_PRIORITY),
        )?;
        if let Some(count) = self.workers.count
            && self.workers.cores.len() > count
        {
            return Err(ConfigError::Invalid {
                field: "workers.cores (--worker-cores)",
                reason: format!("{} cores for {count} workers", self.workers.cores.len()),
            });
        }
        for url in self.archive.upstream.iter() {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(ConfigError::Invalid {
                    field: "archive.upstream",
                    reason: format!("{url:?} is not an http(s) URL"),
                });
            }
        }
        Ok(())
    }

    /// The decoder core's configuration.
    pub fn decoder_config(&self) -> DecoderConfig {
        let mut config = DecoderConfig::default();
        let d = &self.decoder;
        config.shred_version = d.shred_version;
        config.fec.max_sets_in_flight = d.max_sets_in_flight;
        config.fec.completed_sets_remembered = d.completed_sets_remembered;
        config.deshred.max_slots_in_flight = d.max_slots_in_flight;
        config.slot_lookback = d.slot_lookback;
        config.max_slots_ahead = d.max_slots_ahead;
        config.max_batch_bytes = d.max_batch_bytes;
        config.max_pending_batches = d.max_pending_batches;
        config.fec.authenticate = d.authenticate;
        config
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const EXAMPLE: &str = include_str!("../../config/appliance.example.toml");

    #[test]
    fn the_example_file_spells_out_the_defaults() {
        let parsed = Config::parse(EXAMPLE, Path::new("example")).unwrap();
        assert_eq!(parsed, Config::default());
        parsed.validate().unwrap();
    }

    #[test]
    fn the_printed_configuration_parses_back() {
        let mut config = Config::default();
        config.sources.udp.push("0.0.0.0:8001".parse().unwrap());
        config.decoder.shred_version = Some(50093);
        config.programs.ids.insert(
            "ALPHA_FUN".into(),
            "11111111111111111111111111111111".into(),
        );
        let printed = config.to_toml();
        assert_eq!(
            Config::parse(&printed, Path::new("printed")).unwrap(),
            config
        );
    }

    #[test]
    fn unknown_fields_are_refused_with_their_name() {
        let error =
            Config::parse("[grpc]\nsubscriber_queu = 5\n", Path::new("f.toml")).unwrap_err();
        assert!(matches!(error, ConfigError::Parse { .. }));
        assert!(error.to_string().contains("subscriber_queu"), "{error}");
    }

    #[test]
    fn partial_files_keep_the_other_defaults() {
        let config = Config::parse("[decoder]\nslot_lookback = 64\n", Path::new("f")).unwrap();
        assert_eq!(config.decoder.slot_lookback, 64);
        assert_eq!(config.grpc, Grpc::default());
        assert_eq!(config.decoder_config().slot_lookback, 64);
    }

    #[test]
    fn bounds_are_checked_and_named() {
        let cases: [(&str, &str); 16] = [
            ("[workers]\ncount = 0\n", "workers.count (--workers)"),
            ("[workers]\ncount = 65\n", "workers.count (--workers)"),
            ("[workers]\nforward_slots = 1\n", "workers.forward_slots"),
            (
                "[workers]\ncount = 1\ncores = [0, 1]\n",
                "workers.cores (--worker-cores)",
            ),
            ("[sources]\nring_slots = 1000\n", "sources.ring_slots"),
            ("[sources]\nreceive_batch = 0\n", "sources.receive_batch"),
            ("[replay]\nrate = 0\n", "replay.rate"),
            ("[grpc]\nsubscriber_queue = 0\n", "grpc.subscriber_queue"),
            ("[grpc]\nmax_subscribers = 0\n", "grpc.max_subscribers"),
            ("[grpc]\ntls_cert = \"c.pem\"\n", "grpc.tls_cert"),
            (
                "[decoder]\nmax_sets_in_flight = 1\n",
                "decoder.max_sets_in_flight",
            ),
            ("[archive]\nupstream = \"ftp://x\"\n", "archive.upstream"),
            (
                "[archive]\ncatalog_interval = \"0s\"\n",
                "archive.catalog_interval",
            ),
            (
                "[archive]\nhttp_cache_mb = 2000000\n",
                "archive.http_cache_mb",
            ),
            (
                "[archive]\nslot_memo_entries = 20000000\n",
                "archive.slot_memo_entries",
            ),
            (
                "[archive]\ncatalog_interval = \"daily\"\n",
                "archive.catalog_interval",
            ),
        ];
        for (text, field) in cases {
            let config = Config::parse(text, Path::new("f")).unwrap();
            let error = config.validate().unwrap_err();
            assert!(
                matches!(&error, ConfigError::Invalid { field: f, .. } if *f == field),
                "{text}: {error}"
            );
        }
    }
}
