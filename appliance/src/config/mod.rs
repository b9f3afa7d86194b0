//! The appliance's configuration file (`appliance run --config FILE`, TOML): every bound of the
//! pipeline (ring sizes, sets in flight, slot window, queue sizes) with a sane default, validated
//! at start with errors that name the field. Command-line flags override the file; `appliance run
//! --check-config` validates the merged result, prints it and exits.
//!
//! Unknown fields are errors (a misspelt bound must not silently fall back to its default).
//! `config/appliance.example.toml` lists every field with its default and is parsed by a test.

use std::path::{Path, PathBuf};

pub mod flags;
pub mod programs;
mod sections;
mod security_args;
mod validate;
mod vocabulary;

pub use sections::{
    Archive, Auth, Cluster, Data, Decoder, Grpc, GrpcCodec, Http, Insights, Log, LogFormat,
    LookupTables, Programs, Replay, SamplesMode, Sources, StreamMode, Workers,
};
pub use security_args::SecurityArgs;
pub use vocabulary::{AttachMode, BindPreference, MAX_PRIORITY};

use decoder::DecoderConfig;
use serde::{Deserialize, Serialize};

/// Why a configuration was refused. One variant per reason.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The OS error is part of the message and not a `source`, so that `{:#}` prints it once.
    #[error("reading {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
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
    pub insights: Insights,
    pub data: Data,
    pub cluster: Cluster,
    pub lookup_tables: LookupTables,
    pub log: Log,
}

impl Config {
    /// Reads and parses a configuration file (not yet validated: flags may still change it).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_owned(),
            error,
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

    /// Whether `run` receives and streams shreds: `[sources] stream`; `auto` streams unless an
    /// archive or an upstream is configured and no shred source (UDP, AF_XDP, replay file) is.
    pub fn streams(&self) -> bool {
        match self.sources.stream {
            StreamMode::On => true,
            StreamMode::Off => false,
            StreamMode::Auto => {
                let http_product = !self.archive.sources.is_empty()
                    || self.archive.upstream.is_some()
                    || self.insights.db.is_some();
                self.has_shred_source() || !http_product
            }
        }
    }

    /// Whether `run` serves the bundled archive and insights samples: only on the embedded
    /// default (no shred source, archive, upstream or insights store), unless
    /// `[sources] samples = "off"`.
    pub fn samples(&self) -> bool {
        self.sources.samples == SamplesMode::Auto
            && !self.has_shred_source()
            && self.archive.sources.is_empty()
            && self.archive.upstream.is_none()
            && self.insights.db.is_none()
    }

    /// A source of updates: shreds (UDP, AF_XDP, a replay file) or a relay's origin.
    fn has_shred_source(&self) -> bool {
        !self.sources.udp.is_empty()
            || !self.sources.xdp.is_empty()
            || self.replay.file.is_some()
            || self.sources.relay.is_some()
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
        config.incremental.enabled = d.incremental;
        config.incremental.max_open_streams = d.max_open_streams;
        config
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const EXAMPLE: &str = include_str!("../../../config/appliance.example.toml");

    #[test]
    fn the_stream_runs_unless_only_http_products_are_configured() {
        let with = |text: &str| Config::parse(text, Path::new("t")).unwrap().streams();
        assert!(with(""), "the embedded default");
        assert!(!with("[archive]\nsources = [\"/a\"]\n"));
        assert!(!with("[archive]\nupstream = \"http://u\"\n"));
        assert!(with(
            "[archive]\nupstream = \"http://u\"\n[sources]\nudp = [\"127.0.0.1:1\"]\n"
        ));
        assert!(with(
            "[archive]\nsources = [\"/a\"]\n[replay]\nfile = \"/c\"\n"
        ));
        assert!(with(
            "[archive]\nsources = [\"/a\"]\n[sources]\nstream = \"on\"\n"
        ));
        assert!(!with("[sources]\nstream = \"off\"\n"));
        assert!(with(
            "[archive]\nsources = [\"/a\"]\n[sources]\nrelay = \"http://o:9000\"\n"
        ));
    }

    #[test]
    fn a_relay_takes_no_shred_source() {
        let check = |text: &str| Config::parse(text, Path::new("t")).unwrap().validate();
        check("[sources]\nrelay = \"http://o:9000\"\n").unwrap();
        for (text, says) in [
            ("[sources]\nrelay = \"o:9000\"\n", "not an http"),
            (
                "[sources]\nrelay = \"http://o:9000\"\nudp = [\"127.0.0.1:1\"]\n",
                "no shred source",
            ),
            (
                "[sources]\nrelay = \"http://o:9000\"\nstream = \"off\"\n",
                "a relay streams",
            ),
        ] {
            let error = check(text).unwrap_err().to_string();
            assert!(
                error.contains("sources.relay") && error.contains(says),
                "{error}"
            );
        }
    }

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
        let cases: [(&str, &str); 21] = [
            (
                "[lookup_tables]\nmax_entries = 0\n",
                "lookup_tables.max_entries",
            ),
            ("[lookup_tables]\nmax_mb = 0\n", "lookup_tables.max_mb"),
            (
                "[lookup_tables]\nfetch_queue = 0\n",
                "lookup_tables.fetch_queue",
            ),
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
            (
                "[http]\ncors_origins = [\"app.example\"]\n",
                "http.cors_origins (--cors-origin)",
            ),
            (
                "[http]\ncors_origins = [\"https://app.example/path\"]\n",
                "http.cors_origins (--cors-origin)",
            ),
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
