//! The JSON-RPC archive frontend (issue 7, serving half): `POST /` answers `getTransaction`,
//! `getBlock`, `getSignaturesForAddress`, `getSlot` and `getBlockTime` from an [`ArchiveStore`]
//! exactly as a Solana validator with long-term storage answers them, and routes everything else
//! (and slots or signatures not held here) to the upstream validator. Behaviour, routing, rate
//! limit and deviations: `docs/archive-rpc.md`.
//!
//! Modules, from the wire inwards: [`service`] (HTTP, rate limit, routing, batches),
//! [`envelope`] (JSON-RPC framing), [`params`] (the methods' parameters), [`methods`] (answers
//! from the store), [`encode`] / [`parsed`] / [`tx_error`] (the validator's JSON shapes),
//! [`upstream`] (the upstream client), [`rate_limit`], [`metrics`], and [`memory_store`] (an
//! in-memory store for tests and benchmarks).

pub mod base58;
pub mod encode;
pub mod envelope;
pub mod error;
pub mod fixture;
pub mod memory_store;
pub mod methods;
pub mod metrics;
pub mod params;
pub mod parsed;
pub mod rate_limit;
pub mod service;
pub mod tx_error;
pub mod upstream;

use std::sync::Arc;

use archive::ArchiveStore;

use crate::http::HttpMount;
pub use methods::MethodSettings;
pub use rate_limit::RateLimitConfig;
pub use upstream::{UpstreamConfig, UpstreamConfigError};

/// Settings of the JSON-RPC frontend.
#[derive(Debug, Clone, Default)]
pub struct RpcConfig {
    pub rate_limit: RateLimitConfig,
    pub methods: MethodSettings,
    /// The upstream validator; without one, calls not held here get the "not available" answers
    /// and other methods -32601.
    pub upstream: Option<UpstreamConfig>,
}

/// The frontend's shared state: hand [`Rpc::mount`] to the HTTP server and [`Rpc::render_metrics`]
/// to `/metrics`.
#[derive(Clone)]
pub struct Rpc {
    shared: Arc<service::Shared>,
    upstream: Option<UpstreamConfig>,
}

impl Rpc {
    pub fn new(config: RpcConfig, store: Arc<dyn ArchiveStore>) -> Self {
        Self {
            shared: Arc::new(service::Shared {
                store,
                limiter: rate_limit::RateLimiter::new(config.rate_limit),
                metrics: metrics::RpcMetrics::default(),
                settings: config.methods,
            }),
            upstream: config.upstream,
        }
    }

    /// Registers `POST /` on each worker (each worker gets its own upstream client).
    pub fn mount(&self) -> HttpMount {
        let rpc = self.clone();
        Arc::new(move |config| {
            let frontend = service::Frontend::new(Arc::clone(&rpc.shared), rpc.upstream.as_ref());
            service::configure(config, frontend);
        })
    }

    /// Appends the frontend's metrics (Prometheus text) to `out`.
    pub fn render_metrics(&self, out: &mut String) {
        self.shared.metrics.render(&self.shared.limiter, out);
    }

    /// The counters, for tests and the appliance.
    pub fn metrics(&self) -> &metrics::RpcMetrics {
        &self.shared.metrics
    }
}

/// Shorthand: the mount for `store` with `config`.
pub fn mount(config: RpcConfig, store: Arc<dyn ArchiveStore>) -> HttpMount {
    Rpc::new(config, store).mount()
}

/// Why the frontend could not be set up from the command line.
#[derive(Debug, thiserror::Error)]
pub enum RpcSetupError {
    #[error(
        "--archive {0}: archives behind an HTTP address are not supported by this build yet; mirror the epoch directory locally"
    )]
    RemoteArchive(String),
    #[error(
        "--archive given {0} times: this build serves one directory; put every epoch's CARs and indexes in one directory"
    )]
    SeveralArchives(usize),
    #[error("--archive {dir}: {source}")]
    Open {
        dir: String,
        #[source]
        source: archive::ArchiveError,
    },
    #[error(transparent)]
    Upstream(#[from] UpstreamConfigError),
}

impl RpcSetupError {
    pub fn label(&self) -> &'static str {
        match self {
            Self::RemoteArchive(_) => "remote_archive",
            Self::SeveralArchives(_) => "several_archives",
            Self::Open { .. } => "open",
            Self::Upstream(_) => "upstream",
        }
    }
}

/// The frontend for `appliance run --archive DIR --upstream URL`: `None` when neither is given.
/// With only `--upstream`, the archive is empty and every call goes to the upstream.
pub fn from_flags(
    archives: &[String],
    upstream: Option<&str>,
) -> Result<Option<Rpc>, RpcSetupError> {
    if archives.is_empty() && upstream.is_none() {
        return Ok(None);
    }
    let upstream = upstream.map(UpstreamConfig::new).transpose()?;
    let store: Arc<dyn ArchiveStore> = match archives {
        [] => Arc::new(memory_store::MemoryStore::default()),
        [dir] if dir.starts_with("http://") || dir.starts_with("https://") => {
            return Err(RpcSetupError::RemoteArchive(dir.clone()));
        }
        [dir] => Arc::new(
            archive::local::LocalArchive::open(std::path::Path::new(dir)).map_err(|source| {
                RpcSetupError::Open {
                    dir: dir.clone(),
                    source,
                }
            })?,
        ),
        several => return Err(RpcSetupError::SeveralArchives(several.len())),
    };
    Ok(Some(Rpc::new(
        RpcConfig {
            upstream,
            ..RpcConfig::default()
        },
        store,
    )))
}
