//! The data-insights API (product decisions §C in docs/decisions.md): per-block statistics of
//! confirmed blocks ingested from an upstream validator (or backfilled from the archive), kept in
//! an embedded store, and served under `/v1` as the 50-block snapshot, its history, the
//! congestion breakdown, fee estimates and wallet comparisons. Definitions: `docs/insights.md`.
//!
//! ```text
//! upstream getBlock JSON ─ from_rpc ─┐                          ┌─ live (pre-serialised bodies) ─ api /v1
//!                                     ├─ BlockStats ─ window ─ figures
//! archive Block ─────── from_archive ┘        └──── store (redb: blocks, snapshots, cursor) ─ history
//! ```

pub mod api;
pub mod backfill;
pub mod block_stats;
pub mod compute_budget;
pub mod config;
pub mod error;
pub mod figure_types;
pub mod figures;
pub mod from_archive;
pub mod from_rpc;
pub mod ingest;
pub mod live;
pub mod programs;
pub mod query;
pub mod responses;
pub mod store;
pub mod upstream;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

pub use config::{InsightsConfig, Limits, parse_duration};
pub use error::InsightsError;

use front::http::HttpMount;
use live::Shared;

/// The running insights service: the ingest thread and the state the `/v1` routes read.
pub struct Insights {
    shared: Arc<Shared>,
    shutdown: Arc<AtomicBool>,
    ingest: Option<JoinHandle<()>>,
}

impl Insights {
    /// Opens the store, restores the window, and starts following the upstream on a thread.
    pub fn start(config: InsightsConfig) -> Result<Self, InsightsError> {
        let store = store::Store::open(&config.db_path)?;
        let shared = Arc::new(Shared::new(store, config.limits));
        let ingest = ingest::Ingest::new(Arc::clone(&shared), config)?;
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&shutdown);
        let handle = std::thread::Builder::new()
            .name("insights-ingest".into())
            .spawn(move || ingest.run(&flag))
            .map_err(InsightsError::Spawn)?;
        Ok(Self {
            shared,
            shutdown,
            ingest: Some(handle),
        })
    }

    /// Serves what `store` holds, without an upstream: the window of its newest stored blocks and
    /// their history (the embedded default's sample, or a store filled by `insights backfill`).
    pub fn serve_stored(store: &Path, limits: Limits) -> Result<Self, InsightsError> {
        let shared = Arc::new(Shared::new(store::Store::open(store)?, limits));
        ingest::restore_window(&shared, u64::MAX)?;
        Ok(Self {
            shared,
            shutdown: Arc::new(AtomicBool::new(false)),
            ingest: None,
        })
    }

    /// The `/v1` routes serving this instance.
    pub fn mount(&self) -> HttpMount {
        api::mount(Some(Arc::clone(&self.shared)))
    }

    /// The shared state (store and live window).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Stops the ingest and waits for its thread (at most one upstream request's timeout).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.shutdown.store(true, Ordering::Release);
        if let Some(handle) = self.ingest.take()
            && handle.join().is_err()
        {
            tracing::warn!("insights ingest thread panicked");
        }
    }
}

impl Drop for Insights {
    fn drop(&mut self) {
        self.halt();
    }
}

/// The `/v1` routes when insights are off (no `--upstream`): every endpoint answers 503 with a
/// JSON error body; `/v1/openapi.json` is still served.
pub fn disabled_mount() -> HttpMount {
    api::mount(None)
}
