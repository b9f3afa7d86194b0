//! Length: over 600 lines because the sources' probing, activation and scheduled checks are one
//! state machine over one catalog; ~50 of the lines are tests.
//!
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;

use crate::car;
use crate::cid::Cid;
use crate::http::{HttpClient, HttpError};
use crate::index::IndexPaths;
use crate::local::EpochArchive;
use crate::model::{Block, SignatureInfo, SignatureQuery, TransactionInBlock};
use crate::readat::{LocalFile, ReadAt};
use crate::store::{ArchiveError, ArchiveStore, SignaturePage, SlotLookup};

/// Default pause between catalog checks.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(24 * 3600);
/// Largest `.cid` file read (a CID's text is about 60 bytes).
const MAX_CID_TEXT: u64 = 1024;

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

/// Counters of the catalog (appended to `/metrics`).
#[derive(Debug, Default)]
pub struct CatalogMetrics {
    checks: AtomicU64,
    epochs_served: AtomicU64,
    pieces_served: AtomicU64,
    activations: AtomicU64,
    failures: Mutex<BTreeMap<&'static str, u64>>,
}

impl CatalogMetrics {
    fn fail(&self, reason: &'static str) {
        if let Ok(mut failures) = self.failures.lock() {
            *failures.entry(reason).or_default() += 1;
        }
    }

    /// Completed checks (the one at start included).
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// Failures counted for `reason`.
    pub fn failures(&self, reason: &str) -> u64 {
        self.failures
            .lock()
            .map(|f| f.get(reason).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Appends the Prometheus text.
    pub fn render(&self, out: &mut String) {
        use crate::prom::{header, single};
        use std::fmt::Write;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        for (name, kind, help, value) in [
            (
                "appliance_archive_epochs_served",
                "gauge",
                "Epochs the archive serves now.",
                load(&self.epochs_served),
            ),
            (
                "appliance_archive_pieces_served",
                "gauge",
                "CAR files (whole epochs or pieces) the archive serves now.",
                load(&self.pieces_served),
            ),
            (
                "appliance_archive_catalog_checks_total",
                "counter",
                "Catalog checks of the archive sources (new or replaced epochs).",
                load(&self.checks),
            ),
            (
                "appliance_archive_catalog_activations_total",
                "counter",
                "Epochs or pieces the catalog checks put into service.",
                load(&self.activations),
            ),
        ] {
            single(out, name, kind, help, value);
        }
        let name = "appliance_archive_catalog_failures_total";
        header(
            out,
            name,
            "counter",
            "Archive sources or files a catalog check could not use, by reason.",
        );
        if let Ok(failures) = self.failures.lock() {
            for (reason, count) in failures.iter() {
                let _ = writeln!(out, "{name}{{reason=\"{reason}\"}} {count}");
            }
        }
    }
}

/// The store the frontends read: the current composition, swapped atomically by the catalog.
pub struct LiveStore {
    current: ArcSwap<EpochArchive>,
}

impl LiveStore {
    /// A store that always serves `archive` (no catalog).
    pub fn new(archive: EpochArchive) -> Self {
        LiveStore {
            current: ArcSwap::from_pointee(archive),
        }
    }

    /// The composition requests see now.
    pub fn current(&self) -> Arc<EpochArchive> {
        self.current.load_full()
    }
}

impl ArchiveStore for LiveStore {
    fn epochs(&self) -> Vec<u64> {
        self.current.load().epochs()
    }
    fn block(&self, slot: u64) -> Result<SlotLookup<Block>, ArchiveError> {
        self.current.load().block(slot)
    }
    fn block_time(&self, slot: u64) -> Result<SlotLookup<Option<i64>>, ArchiveError> {
        self.current.load().block_time(slot)
    }
    fn transaction(
        &self,
        signature: &[u8; 64],
    ) -> Result<Option<TransactionInBlock>, ArchiveError> {
        self.current.load().transaction(signature)
    }
    fn signatures_for_address(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<Vec<SignatureInfo>, ArchiveError> {
        // One snapshot for the whole query (before/until positions refer to it).
        self.current.load().signatures_for_address(address, query)
    }
    fn signatures_page(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<SignaturePage, ArchiveError> {
        self.current.load().signatures_page(address, query)
    }
    fn newest_slot(&self) -> Option<u64> {
        self.current.load().newest_slot()
    }
}

/// What one source holds now: opened CARs keyed by where they are, each pinned by root CID.
struct SourceState {
    text: String,
    spec: SourceSpec,
    /// Directory: CAR path → (root, one-piece archive); URL: epoch → (root, archive).
    held: BTreeMap<String, (Cid, Arc<EpochArchive>)>,
    client: Option<HttpClient>,
}

/// How one probe of a URL epoch ended.
enum Probe {
    /// Opened and checked.
    Active(Cid, EpochArchive),
    /// No `.cid` yet.
    NotPublished,
    /// Known and unchanged.
    Unchanged,
}

/// Why one epoch or CAR was not activated (the label is the metric's `reason`).
struct Failure {
    reason: &'static str,
    message: String,
}

impl Failure {
    fn archive(error: &ArchiveError) -> Self {
        Failure {
            reason: error.label(),
            message: error.to_string(),
        }
    }
    fn http(url: &str, error: &HttpError) -> Self {
        Failure {
            reason: match error {
                HttpError::Status(_) => "http_status",
                HttpError::Transport(_) => "http_transport",
                HttpError::NoSize => "http_no_size",
            },
            message: format!("{url}: {error}"),
        }
    }
}

fn epoch_key(epoch: u64) -> String {
    // Zero-padded so the map's order is numeric.
    format!("{epoch:020}")
}

/// Damaged epochs one URL check skips over before it stops probing further.
const MAX_SKIPPED_EPOCHS: u32 = 4;

impl SourceState {
    /// Brings the directory up to date. `strict` (at start): an unreadable directory is the
    /// error; a CAR that fails its checks is skipped, logged and counted either way.
    fn refresh_dir(
        &mut self,
        dir: &Path,
        strict: bool,
        metrics: &CatalogMetrics,
    ) -> Result<(), CatalogError> {
        let cars = list_cars(dir).map_err(|error| CatalogError::Open {
            source_text: self.text.clone(),
            error,
        })?;
        let mut next = BTreeMap::new();
        for car in cars {
            let key = car.display().to_string();
            let opened = read_root(&car).and_then(|root| {
                if let Some((held_root, archive)) = self.held.get(&key)
                    && *held_root == root
                {
                    return Ok((root, Arc::clone(archive)));
                }
                let archive = EpochArchive::open_cars(std::slice::from_ref(&car), &key)?;
                tracing::info!(car = %key, %root, "archive CAR activated");
                metrics.activations.fetch_add(1, Ordering::Relaxed);
                Ok((root, Arc::new(archive)))
            });
            match opened {
                Ok(entry) => {
                    next.insert(key, entry);
                }
                Err(error) if strict => {
                    // At start a damaged epoch is skipped: the rest of the archive, the stream
                    // and insights serve (a later check activates it once it is repaired).
                    let failure = Failure::archive(&error);
                    tracing::error!(car = %key, reason = failure.reason, error = %failure.message,
                        "archive CAR skipped: it fails its checks");
                    metrics.fail(failure.reason);
                }
                Err(error) => {
                    let failure = Failure::archive(&error);
                    tracing::warn!(car = %key, reason = failure.reason, error = %failure.message, "archive CAR not activated");
                    metrics.fail(failure.reason);
                    // Keep what was served from this path, if anything.
                    if let Some(old) = self.held.get(&key) {
                        next.insert(key, (old.0, Arc::clone(&old.1)));
                    }
                }
            }
        }
        self.held = next;
        Ok(())
    }

    /// Brings the URL source up to date: re-reads the `.cid` of held epochs, then probes new ones.
    fn refresh_url(
        &mut self,
        base: &str,
        first: u64,
        last: Option<u64>,
        strict: bool,
        metrics: &CatalogMetrics,
    ) -> Result<(), CatalogError> {
        let client = self.client.get_or_insert_with(HttpClient::new).clone();
        let held: Vec<u64> = self
            .held
            .keys()
            .filter_map(|k| k.parse::<u64>().ok())
            .collect();
        for epoch in held {
            match self.probe(&client, base, epoch) {
                Ok(Probe::Active(root, archive)) => {
                    tracing::info!(base, epoch, %root, "archive epoch replaced (new root CID)");
                    metrics.activations.fetch_add(1, Ordering::Relaxed);
                    self.held
                        .insert(epoch_key(epoch), (root, Arc::new(archive)));
                }
                Ok(Probe::Unchanged) => {}
                Ok(Probe::NotPublished) => {
                    tracing::warn!(
                        base,
                        epoch,
                        "archive epoch withdrawn (.cid gone); keeping it"
                    );
                    metrics.fail("withdrawn");
                }
                Err(failure) => {
                    tracing::warn!(base, epoch, reason = failure.reason, error = %failure.message, "archive epoch recheck failed; keeping it");
                    metrics.fail(failure.reason);
                }
            }
        }
        let mut next = self
            .held
            .keys()
            .filter_map(|k| k.parse::<u64>().ok())
            .max()
            .map_or(first, |n| n + 1);
        let mut skipped = 0;
        while last.is_none_or(|last| next <= last) {
            match self.probe(&client, base, next) {
                Ok(Probe::Active(root, archive)) => {
                    tracing::info!(base, epoch = next, %root, "archive epoch activated");
                    metrics.activations.fetch_add(1, Ordering::Relaxed);
                    self.held.insert(epoch_key(next), (root, Arc::new(archive)));
                    next += 1;
                }
                Ok(Probe::NotPublished | Probe::Unchanged) => break,
                Err(failure) => {
                    tracing::warn!(base, epoch = next, reason = failure.reason, error = %failure.message, "archive epoch not activated");
                    metrics.fail(failure.reason);
                    if strict && failure.reason == "http_transport" {
                        return Err(CatalogError::BadSource {
                            source_text: self.text.clone(),
                            reason: failure.message,
                        });
                    }
                    if matches!(failure.reason, "incomplete" | "http_transport") {
                        break;
                    }
                    // Published but damaged: skipped, so that later epochs still serve (a few
                    // per pass: a host answering every path with junk must not loop forever).
                    skipped += 1;
                    if skipped > MAX_SKIPPED_EPOCHS {
                        break;
                    }
                    next += 1;
                }
            }
        }
        Ok(())
    }

    /// Checks epoch `epoch` behind `base` and opens it when it is new or its root changed.
    fn probe(&self, client: &HttpClient, base: &str, epoch: u64) -> Result<Probe, Failure> {
        let cid_url = format!("{base}/{epoch}/epoch-{epoch}.cid");
        let Some(text) = client
            .get_text(&cid_url, MAX_CID_TEXT)
            .map_err(|e| Failure::http(&cid_url, &e))?
        else {
            return Ok(Probe::NotPublished);
        };
        let root: Cid = text.trim().parse().map_err(|e| Failure {
            reason: "bad_cid",
            message: format!("{cid_url}: {e}"),
        })?;
        if self
            .held
            .get(&epoch_key(epoch))
            .is_some_and(|(held, _)| *held == root)
        {
            return Ok(Probe::Unchanged);
        }
        let car = PathBuf::from(format!("{epoch}/epoch-{epoch}.car"));
        for file in required_files(&car, &root) {
            let url = format!("{base}/{}", file.display());
            match client.exists(&url) {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Failure {
                        reason: "incomplete",
                        message: format!("{url} is not published yet"),
                    });
                }
                Err(e) => return Err(Failure::http(&url, &e)),
            }
        }
        let archive = EpochArchive::open_http(base, &[epoch]).map_err(|e| Failure::archive(&e))?;
        if let Some(piece) = archive.pieces().iter().find(|p| p.root != root) {
            return Err(Failure {
                reason: "cid_mismatch",
                message: format!(
                    "{}: root {} but {cid_url} says {root}",
                    piece.name, piece.root
                ),
            });
        }
        Ok(Probe::Active(root, archive))
    }
}

/// The CAR and every index file the store opens for it.
/// The CAR and the published indexes (format §5): what a URL source must publish before an epoch
/// is activated. Our own files (`slot-ranges.raw`, `slot-to-blockhash`, `asig-*`) are optional:
/// used when published, derived or routed when not ([`EpochArchive::open_http`]).
fn required_files(car: &Path, root: &Cid) -> Vec<PathBuf> {
    let paths = IndexPaths::for_car(car, root);
    vec![
        car.to_path_buf(),
        paths.slot_to_cid,
        paths.sig_to_cid,
        paths.cid_to_offset,
        paths.sig_exists,
        paths.slot_to_blocktime,
    ]
}

/// `*.car` in `dir` and in its direct subdirectories, sorted by path.
fn list_cars(dir: &Path) -> Result<Vec<PathBuf>, ArchiveError> {
    let io = |source| ArchiveError::Io {
        what: dir.display().to_string(),
        source,
    };
    let mut cars = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.is_dir() {
            let Ok(inner) = std::fs::read_dir(&path) else {
                continue;
            };
            cars.extend(
                inner
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "car")),
            );
        } else if path.extension().is_some_and(|x| x == "car") {
            cars.push(path);
        }
    }
    cars.sort();
    Ok(cars)
}

/// The root CID in a local CAR's header.
fn read_root(car: &Path) -> Result<Cid, ArchiveError> {
    let what = car.display().to_string();
    let file = LocalFile::open(car).map_err(|source| ArchiveError::Io {
        what: what.clone(),
        source,
    })?;
    let head = file
        .read_vec(0, file.len().min(1024) as usize)
        .map_err(|source| ArchiveError::Io {
            what: what.clone(),
            source,
        })?;
    let header = car::parse_header(&head).map_err(|e| ArchiveError::Corrupt {
        what,
        reason: e.to_string(),
    })?;
    Ok(header.root)
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
