//! One `--archive` source kept up to date ([`SourceState`]): a directory rescanned for new,
//! replaced and removed CARs; a URL whose held epochs are rechecked and whose next epochs are
//! probed (every required file published, the CAR's root equal to its `.cid`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{CatalogError, CatalogMetrics, SourceSpec};
use crate::car;
use crate::cid::Cid;
use crate::http::{HttpClient, HttpError};
use crate::index::IndexPaths;
use crate::local::EpochArchive;
use crate::readat::{LocalFile, ReadAt};
use crate::store::ArchiveError;

/// Largest `.cid` file read (a CID's text is about 60 bytes).
const MAX_CID_TEXT: u64 = 1024;

/// What one source holds now: opened CARs keyed by where they are, each pinned by root CID.
pub(super) struct SourceState {
    pub(super) text: String,
    pub(super) spec: SourceSpec,
    /// Directory: CAR path → (root, one-piece archive); URL: epoch → (root, archive).
    pub(super) held: BTreeMap<String, (Cid, Arc<EpochArchive>)>,
    pub(super) client: Option<HttpClient>,
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
    pub(super) fn refresh_dir(
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
    pub(super) fn refresh_url(
        &mut self,
        base: &str,
        first: u64,
        last: Option<u64>,
        strict: bool,
        metrics: &CatalogMetrics,
    ) -> Result<(), CatalogError> {
        let client = self.client.get_or_insert_with(HttpClient::new).clone();
        self.recheck_held(&client, base, metrics);
        self.probe_new(&client, base, (first, last), strict, metrics)
    }

    /// Re-reads the `.cid` of every held epoch: a new root CID reopens the epoch; a withdrawn or
    /// failing one is kept.
    fn recheck_held(&mut self, client: &HttpClient, base: &str, metrics: &CatalogMetrics) {
        let held: Vec<u64> = self
            .held
            .keys()
            .filter_map(|k| k.parse::<u64>().ok())
            .collect();
        for epoch in held {
            match self.probe(client, base, epoch) {
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
    }

    /// Probes the epochs after the highest held (from `first` when none is), up to `last`, until
    /// one is not (completely) published.
    fn probe_new(
        &mut self,
        client: &HttpClient,
        base: &str,
        (first, last): (u64, Option<u64>),
        strict: bool,
        metrics: &CatalogMetrics,
    ) -> Result<(), CatalogError> {
        let mut next = self
            .held
            .keys()
            .filter_map(|k| k.parse::<u64>().ok())
            .max()
            .map_or(first, |n| n + 1);
        let mut skipped = 0;
        while last.is_none_or(|last| next <= last) {
            match self.probe(client, base, next) {
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
