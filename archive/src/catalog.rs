//! The archive's sources and their catalog: every `--archive` value (a local directory or an
//! http(s) base URL laid out like the public file host) opened into one [`ArchiveStore`], and the
//! periodic check that activates newly published epochs.
//!
//! - **Directory**: every `*.car` in it and in its subdirectories one level down (so a mirror of
//!   the host's `<N>/epoch-<N>.car` layout works as is), whole epochs or pieces, each with the
//!   indexes our builder writes next to it. Rescanned on every check: new CARs are opened, CARs
//!   whose root CID changed are reopened, removed ones are dropped.
//! - **URL** `BASE[#FIRST[-LAST]]`: whole epochs `<BASE>/<N>/epoch-<N>.car` with the published
//!   index names next to them (our own files optional), N from FIRST (default 0) upwards until
//!   the first epoch that is not (completely) published, at most LAST. Each check re-reads the `.cid` of every epoch held (a replaced
//!   epoch with a new root CID is reopened) and probes N = highest known + 1 (format §5
//!   "Availability and lag"): an epoch is activated only when its `.cid` parses, every required
//!   file answers `HEAD` with 200, the indexes' metadata match the CAR (checked at open) and the
//!   CAR's root is the `.cid`.
//!
//! Composition: sources in command-line order, each source's pieces in slot order; a piece is
//! dropped when an earlier one has the same root CID or overlaps its slot span
//! ([`EpochArchive::merge`]), so **the first `--archive` holding an epoch (or a slot span) wins**.
//! Everything opened is kept keyed by root CID and shared between successive stores; activation
//! swaps the store atomically ([`LiveStore`], `arc-swap`): requests in flight finish on the store
//! they started with and never wait for a check.

mod live;
mod metrics;
mod source;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::http::HttpError;
use crate::local::EpochArchive;
use crate::store::{ArchiveError, ArchiveStore};
use source::SourceState;

pub use live::LiveStore;
pub use metrics::CatalogMetrics;

/// Default pause between catalog checks.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// Why the sources could not be opened at start.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("--archive {source_text}: {reason}")]
    BadSource { source_text: String, reason: String },
    #[error("--archive {source_text}: {error}")]
    Open {
        source_text: String,
        #[source]
        error: ArchiveError,
    },
    #[error("--archive {source_text}: {url}: {error}")]
    Http {
        source_text: String,
        url: String,
        #[source]
        error: HttpError,
    },
}

impl CatalogError {
    /// Short stable label for metrics and logs.
    pub fn label(&self) -> &'static str {
        match self {
            Self::BadSource { .. } => "bad_source",
            Self::Open { .. } => "open",
            Self::Http { .. } => "http",
        }
    }
}

/// One `--archive` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    Dir(PathBuf),
    Url {
        base: String,
        first: u64,
        last: Option<u64>,
    },
}

impl SourceSpec {
    /// `http(s)://...[#FIRST[-LAST]]` is a URL source, anything else a directory.
    pub fn parse(text: &str) -> Result<SourceSpec, CatalogError> {
        let bad = |reason: String| CatalogError::BadSource {
            source_text: text.to_string(),
            reason,
        };
        if !(text.starts_with("http://") || text.starts_with("https://")) {
            let dir = PathBuf::from(text);
            if !dir.is_dir() {
                return Err(bad("not a directory (nor an http(s) URL)".into()));
            }
            return Ok(SourceSpec::Dir(dir));
        }
        let (base, range) = match text.split_once('#') {
            Some((base, range)) => (base, Some(range)),
            None => (text, None),
        };
        let number = |t: &str| {
            t.trim().parse::<u64>().map_err(|_| {
                bad(format!(
                    "epoch range {range:?}: {t:?} is not an epoch number"
                ))
            })
        };
        let (first, last) = match range {
            None => (0, None),
            Some(range) => match range.split_once('-') {
                Some((a, "")) => (number(a)?, None),
                Some((a, b)) => (number(a)?, Some(number(b)?)),
                None => (number(range)?, None),
            },
        };
        if last.is_some_and(|last| last < first) {
            return Err(bad(format!("epoch range {first}-{last:?} is empty")));
        }
        Ok(SourceSpec::Url {
            base: base.trim_end_matches('/').to_string(),
            first,
            last,
        })
    }
}

/// Every source, the live store over them and the catalog's counters.
pub struct Catalog {
    sources: Mutex<Vec<SourceState>>,
    store: Arc<LiveStore>,
    metrics: CatalogMetrics,
}

impl Catalog {
    /// Parses and opens every source (a directory CAR that cannot be opened, a malformed value or
    /// an unreachable URL is an error; a URL without published epochs is not).
    pub fn open(sources: &[String]) -> Result<Catalog, CatalogError> {
        let mut states = Vec::with_capacity(sources.len());
        for text in sources {
            states.push(SourceState {
                text: text.clone(),
                spec: SourceSpec::parse(text)?,
                held: BTreeMap::new(),
                client: None,
            });
        }
        let catalog = Catalog {
            sources: Mutex::new(Vec::new()),
            store: Arc::new(LiveStore::new(EpochArchive::merge([], "empty").0)),
            metrics: CatalogMetrics::default(),
        };
        catalog.refresh(&mut states, true)?;
        if let Ok(mut held) = catalog.sources.lock() {
            *held = states;
        }
        Ok(catalog)
    }

    /// The live store (hand it to the JSON-RPC frontend or the backfill).
    pub fn store(&self) -> Arc<LiveStore> {
        Arc::clone(&self.store)
    }

    pub fn metrics(&self) -> &CatalogMetrics {
        &self.metrics
    }

    /// One catalog check: rescans directories, rechecks and probes URLs, swaps the store.
    /// Failures are logged and counted; what was served stays served.
    pub fn check(&self) {
        let Ok(mut states) = self.sources.lock() else {
            self.metrics.fail("poisoned");
            return;
        };
        if let Err(error) = self.refresh(&mut states, false) {
            tracing::warn!(%error, "archive catalog check failed");
            self.metrics.fail(error.label());
        }
    }

    fn refresh(&self, states: &mut [SourceState], strict: bool) -> Result<(), CatalogError> {
        for state in states.iter_mut() {
            match state.spec.clone() {
                SourceSpec::Dir(dir) => state.refresh_dir(&dir, strict, &self.metrics)?,
                SourceSpec::Url { base, first, last } => {
                    state.refresh_url(&base, first, last, strict, &self.metrics)?
                }
            }
        }
        let parts: Vec<Arc<EpochArchive>> = states
            .iter()
            .flat_map(|s| s.held.values().map(|(_, a)| Arc::clone(a)))
            .collect();
        let (merged, dropped) = EpochArchive::merge(parts.iter().map(|a| a.as_ref()), "catalog");
        for piece in dropped {
            tracing::warn!(piece = %piece.name, epoch = piece.epoch, root = %piece.root, "archive piece shadowed by an earlier --archive (same root or overlapping slots)");
        }
        self.metrics
            .epochs_served
            .store(merged.epochs().len() as u64, Ordering::Relaxed);
        self.metrics
            .pieces_served
            .store(merged.pieces().len() as u64, Ordering::Relaxed);
        self.metrics.checks.fetch_add(1, Ordering::Relaxed);
        tracing::info!(epochs = ?merged.epochs(), "archive catalog check done");
        self.store.current.store(Arc::new(merged));
        Ok(())
    }

    /// Runs [`Catalog::check`] every `interval` on its own thread until the catalog is dropped
    /// elsewhere (the thread holds only a weak reference).
    pub fn spawn_checks(self: &Arc<Self>, interval: Duration) -> std::io::Result<()> {
        let weak = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("archive-catalog".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(interval);
                    let Some(catalog) = weak.upgrade() else {
                        return;
                    };
                    catalog.check();
                }
            })?;
        Ok(())
    }
}

/// Opens `sources` (the `--archive` values) into one store, without periodic checks (for
/// one-shot commands such as the insights backfill).
pub fn open_archives(sources: &[String]) -> Result<Arc<dyn ArchiveStore>, CatalogError> {
    Ok(Catalog::open(sources)?.store())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_values_parse() {
        assert_eq!(
            SourceSpec::parse("https://h.example/base/#800-805").unwrap(),
            SourceSpec::Url {
                base: "https://h.example/base".into(),
                first: 800,
                last: Some(805)
            }
        );
        assert_eq!(
            SourceSpec::parse("http://h/#7").unwrap(),
            SourceSpec::Url {
                base: "http://h".into(),
                first: 7,
                last: None
            }
        );
        assert_eq!(
            SourceSpec::parse("http://h#7-").unwrap(),
            SourceSpec::Url {
                base: "http://h".into(),
                first: 7,
                last: None
            }
        );
        assert!(matches!(
            SourceSpec::parse("http://h#9-3"),
            Err(CatalogError::BadSource { .. })
        ));
        assert!(matches!(
            SourceSpec::parse("http://h#x"),
            Err(CatalogError::BadSource { .. })
        ));
        assert!(matches!(
            SourceSpec::parse("/nonexistent/archive"),
            Err(CatalogError::BadSource { .. })
        ));
        let dir = std::env::temp_dir();
        assert_eq!(
            SourceSpec::parse(dir.to_str().unwrap()).unwrap(),
            SourceSpec::Dir(dir)
        );
    }
}
