//! The JSON-RPC archive frontend (issue 7, serving half): `POST /` answers `getTransaction`,
//! `getBlock`, `getSignaturesForAddress`, `getSlot` and `getBlockTime` from an [`ArchiveStore`]
//! exactly as a Solana validator with long-term storage answers them, and routes everything else
//! (and slots or signatures not held here) to the upstream validator. Behaviour, routing, rate
//! limit and deviations: `docs/archive-rpc.md`.
//!
//! Modules, from the wire inwards: [`service`] (HTTP, rate limit, routing, batches),
//! [`envelope`] (JSON-RPC framing), [`params`] (the methods' parameters), [`methods`] (answers
//! from the store), [`encode`] / [`parsed`] / [`tx_error`] (the validator's JSON shapes, standing
//! on the leaves [`ui_instruction`], [`amount`] and [`base58`]),
//! [`upstream`] (the upstream client), [`rate_limit`], [`metrics`] and [`latency`], [`memory_store`] (an
//! in-memory store for tests and benchmarks), and [`absent`] (`POST /` when no archive is served).

pub mod absent;
pub mod amount;
pub mod base58;
mod damage_log;
pub mod encode;
pub mod envelope;
pub mod error;
pub mod latency;
pub mod memory_store;
pub mod methods;
pub mod metrics;
pub mod params;
pub mod parsed;
pub mod rate_limit;
pub mod service;
pub mod tx_error;
pub mod ui_instruction;
pub mod upstream;

use std::sync::Arc;

use archive::ArchiveStore;
use archive::catalog::Catalog;

use front::http::HttpMount;
pub use methods::MethodSettings;
pub use rate_limit::RateLimitConfig;
pub use upstream::{UpstreamConfig, UpstreamConfigError};

use front::tls_client::UpstreamTrust;

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
    catalog: Option<Arc<Catalog>>,
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
            catalog: None,
        }
    }

    /// The archive sources' catalog (when the store came from `--archive` values).
    pub fn catalog(&self) -> Option<&Arc<Catalog>> {
        self.catalog.as_ref()
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
        if let Some(catalog) = &self.catalog {
            catalog.metrics().render(out);
        }
        archive::rangecache::shared().render(out);
        archive::rangeclient::shared().render(out);
        archive::slotmemo::shared().render(out);
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
    #[error(transparent)]
    Archive(#[from] archive::catalog::CatalogError),
    #[error(transparent)]
    Upstream(#[from] UpstreamConfigError),
}

impl RpcSetupError {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Archive(e) => e.label(),
            Self::Upstream(e) => e.label(),
        }
    }
}

/// Opens the `--archive` values (local directories and http(s) base URLs, mixed, in priority
/// order) into one store: see [`archive::catalog`]. For commands that read the archive once
/// (no periodic catalog checks).
pub fn open_archives(archives: &[String]) -> Result<Arc<dyn ArchiveStore>, RpcSetupError> {
    Ok(archive::catalog::open_archives(archives)?)
}

/// The frontend for `appliance run --archive SOURCE... --upstream URL`: `None` when neither is
/// given. With only `--upstream`, the archive is empty and every call goes to the upstream. With
/// archives, the frontend carries their [`Catalog`] (start its checks with
/// [`Catalog::spawn_checks`]; its metrics are rendered with the frontend's).
pub fn from_flags(
    archives: &[String],
    upstream: Option<&str>,
    trust: &UpstreamTrust,
) -> Result<Option<Rpc>, RpcSetupError> {
    if archives.is_empty() && upstream.is_none() {
        return Ok(None);
    }
    let upstream = upstream
        .map(|url| UpstreamConfig::with_trust(url, trust))
        .transpose()?;
    let config = RpcConfig {
        upstream,
        ..RpcConfig::default()
    };
    if archives.is_empty() {
        return Ok(Some(Rpc::new(
            config,
            Arc::new(memory_store::MemoryStore::default()),
        )));
    }
    let catalog = Arc::new(Catalog::open(archives)?);
    let mut rpc = Rpc::new(config, catalog.store());
    rpc.catalog = Some(catalog);
    Ok(Some(rpc))
}
