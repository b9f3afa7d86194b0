//! [`LocalArchive`]: an [`ArchiveStore`](crate::store::ArchiveStore) over a directory of epoch
//! CARs (whole or pieces) with the indexes our builder writes next to them. Every file is opened
//! once at start and read with `pread`; opening checks each index's epoch and rootCid against its
//! CAR. Lookups:
//!
//! - block: slot-ranges → one read of the slot's bytes → parse; the parent's blockhash from
//!   slot-to-blockhash of whichever piece or epoch holds the parent. A source without those two
//!   tables (public files only) derives both from slot-to-cid, cid-to-offset-and-size and the
//!   Block/Entry nodes, memoized in [`crate::slotmemo`].
//! - transaction: sig-exists → sig-to-cid → cid-to-offset-and-size → read the section → confirm
//!   CID and first signature (compact indexes have false positives).
//! - signatures_for_address: the asig index only (no CAR reads); a piece without it ends the
//!   walk ([`ArchiveStore::signatures_page`](crate::store::ArchiveStore::signatures_page)).

mod lookup;
mod piece;
mod store;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cid::Cid;
use crate::epoch_of;
use crate::error::FormatError;
use crate::index::meta::IndexMeta;
use crate::readat::{LocalFile, ReadAt};
use crate::store::{ArchiveError, SlotLookup};
use piece::Piece;

/// A positioned-read source: a local file, bytes in memory or a remote file.
pub type Source = Box<dyn ReadAt>;

/// Epoch CARs and their indexes, local ([`EpochArchive::open`]) or behind an HTTP base address
/// laid out like the public file host ([`EpochArchive::open_http`]).
pub struct EpochArchive {
    /// Sorted by first slot; shared so that [`EpochArchive::merge`] composes stores without
    /// reopening files.
    pieces: Vec<Arc<Piece>>,
    origin: String,
}

/// What [`EpochArchive::pieces`] reports about one CAR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PieceInfo {
    pub name: String,
    pub epoch: u64,
    pub root: Cid,
    pub first_slot: u64,
    pub last_slot: u64,
}

/// The store over a local directory (the same type as the HTTP one).
pub type LocalArchive = EpochArchive;

/// Opens the file at a path relative to the archive's origin; `small` files may be loaded whole.
type Opener<'a> = dyn Fn(&Path, bool) -> Result<Source, ArchiveError> + 'a;

fn corrupt(what: &str, error: FormatError) -> ArchiveError {
    ArchiveError::Corrupt {
        what: what.to_string(),
        reason: error.to_string(),
    }
}

fn open_file(path: &Path) -> Result<Source, ArchiveError> {
    if !path.is_file() {
        return Err(ArchiveError::MissingIndex {
            path: path.display().to_string(),
        });
    }
    let file = LocalFile::open(path).map_err(|source| ArchiveError::Io {
        what: path.display().to_string(),
        source,
    })?;
    Ok(Box::new(file))
}

fn check_meta(what: &Path, meta: &IndexMeta, epoch: u64, root: &Cid) -> Result<(), ArchiveError> {
    meta.check(&what.display().to_string(), epoch, root)
        .map_err(|e| ArchiveError::IndexMismatch {
            what: what.display().to_string(),
            reason: e.to_string(),
        })
}

impl EpochArchive {
    /// Opens every `*.car` in `dir` with its indexes (each file opened once, read with `pread`).
    pub fn open(dir: &Path) -> Result<EpochArchive, ArchiveError> {
        let io = |source| ArchiveError::Io {
            what: dir.display().to_string(),
            source,
        };
        let mut cars: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(io)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "car"))
            .collect();
        cars.sort();
        let opener = |path: &Path, _small: bool| open_file(path);
        Self::from_cars(&cars, &opener, false, dir.display().to_string())
    }

    /// Opens the given epochs behind `base` (laid out like the public file host:
    /// `<N>/epoch-<N>.car`, `<N>/epoch-<N>.cid` and the index names next to it). Small per-slot
    /// tables are fetched whole and kept in memory; everything else is read with range requests.
    /// Only the CAR and the published indexes are required: without `slot-ranges.raw` and
    /// `slot-to-blockhash` ranges and blockhashes are derived from slot-to-cid and the CAR
    /// (memoized, [`crate::slotmemo`]); without the `asig-*` files getSignaturesForAddress stops at
    /// the epoch
    /// ([`ArchiveStore::signatures_page`](crate::store::ArchiveStore::signatures_page)).
    pub fn open_http(base: &str, epochs: &[u64]) -> Result<EpochArchive, ArchiveError> {
        let client = crate::http::HttpClient::new();
        let base = base.trim_end_matches('/').to_string();
        let mut cars = Vec::with_capacity(epochs.len());
        for epoch in epochs {
            cars.push(PathBuf::from(format!("{epoch}/epoch-{epoch}.car")));
        }
        let opener = |path: &Path, small: bool| -> Result<Source, ArchiveError> {
            let url = format!("{base}/{}", path.display());
            let file = client.open(&url).map_err(|e| e.into_archive_error(&url))?;
            if small {
                let len = usize::try_from(file.len()).unwrap_or(usize::MAX);
                let bytes = file.read_vec(0, len).map_err(|source| ArchiveError::Io {
                    what: url.clone(),
                    source,
                })?;
                Ok(Box::new(bytes))
            } else {
                Ok(Box::new(file))
            }
        };
        Self::from_cars(&cars, &opener, true, base.clone())
    }

    fn from_cars(
        cars: &[PathBuf],
        opener: &Opener<'_>,
        own_optional: bool,
        origin: String,
    ) -> Result<EpochArchive, ArchiveError> {
        let mut pieces = Vec::with_capacity(cars.len());
        for car in cars {
            if let Some(piece) = Piece::open(car, opener, own_optional)? {
                pieces.push(Arc::new(piece));
            }
        }
        pieces.sort_by_key(|p| p.first_slot);
        for pair in pieces.windows(2) {
            if pair[1].first_slot <= pair[0].last_slot {
                return Err(ArchiveError::IndexMismatch {
                    what: pair[1].name.clone(),
                    reason: format!("overlaps {}", pair[0].name),
                });
            }
        }
        tracing::info!(origin = %origin, cars = pieces.len(), "archive opened");
        Ok(EpochArchive { pieces, origin })
    }

    /// Where the archive was opened from (directory or base URL).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Opens exactly the given local CAR files with their indexes (e.g. one file at a time, so
    /// that a catalog can keep what it opened keyed by root CID).
    pub fn open_cars(cars: &[PathBuf], origin: &str) -> Result<EpochArchive, ArchiveError> {
        let opener = |path: &Path, _small: bool| open_file(path);
        Self::from_cars(cars, &opener, false, origin.to_string())
    }

    /// The pieces held: name (CAR path or URL), epoch, root CID and present slot span.
    pub fn pieces(&self) -> Vec<PieceInfo> {
        self.pieces
            .iter()
            .map(|p| PieceInfo {
                name: p.name.clone(),
                epoch: p.epoch,
                root: p.root,
                first_slot: p.first_slot,
                last_slot: p.last_slot,
            })
            .collect()
    }

    /// One store over the pieces of `parts`, taken in order: a piece is dropped (and reported in
    /// the second value) when a piece already taken has the same root CID or overlaps its slot
    /// span, so the earlier part wins every duplicate. Files are shared, not reopened.
    pub fn merge<'a>(
        parts: impl IntoIterator<Item = &'a EpochArchive>,
        origin: &str,
    ) -> (EpochArchive, Vec<PieceInfo>) {
        let mut taken: Vec<Arc<Piece>> = Vec::new();
        let mut dropped = Vec::new();
        for part in parts {
            for piece in &part.pieces {
                let duplicate = taken.iter().any(|t| {
                    t.root == piece.root
                        || (t.first_slot <= piece.last_slot && piece.first_slot <= t.last_slot)
                });
                if duplicate {
                    dropped.push(PieceInfo {
                        name: piece.name.clone(),
                        epoch: piece.epoch,
                        root: piece.root,
                        first_slot: piece.first_slot,
                        last_slot: piece.last_slot,
                    });
                } else {
                    taken.push(Arc::clone(piece));
                }
            }
        }
        taken.sort_by_key(|p| p.first_slot);
        (
            EpochArchive {
                pieces: taken,
                origin: origin.to_string(),
            },
            dropped,
        )
    }

    /// Where `slot` stands: the piece holding its range, or skipped/not held.
    fn locate(&self, slot: u64) -> SlotLookup<&Piece> {
        let epoch = epoch_of(slot);
        let mut in_epoch = self.pieces.iter().filter(|p| p.epoch == epoch).peekable();
        if in_epoch.peek().is_none() {
            return SlotLookup::NotHeld;
        }
        let (mut lo, mut hi) = (u64::MAX, 0);
        for piece in in_epoch {
            if (piece.first_slot..=piece.last_slot).contains(&slot) {
                return SlotLookup::Found(piece);
            }
            lo = lo.min(piece.first_slot);
            hi = hi.max(piece.last_slot);
        }
        if (lo..=hi).contains(&slot) {
            SlotLookup::Skipped
        } else {
            SlotLookup::NotHeld
        }
    }

    fn blockhash_of(&self, slot: u64) -> Result<Option<[u8; 32]>, ArchiveError> {
        match self.locate(slot) {
            SlotLookup::Found(piece) => piece.blockhash(slot),
            _ => Ok(None),
        }
    }

    /// Finds the piece (position in `pieces`) and ordinal of a signature, newest piece first.
    fn ordinal_of(&self, signature: &[u8; 64]) -> Result<Option<(usize, u32)>, ArchiveError> {
        for (i, piece) in self.pieces.iter().enumerate().rev() {
            let Some(address) = &piece.address else {
                continue;
            };
            if let Some(ordinal) = address
                .ordinal_of(signature)
                .map_err(|e| corrupt(&piece.name, e))?
            {
                return Ok(Some((i, ordinal)));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::build::{BuildOptions, build_indexes};
    // The synthetic blocks are the test kit's, written by the archive crate the kit links
    // (a second copy of this crate under test): only files and integers cross over.
    use testkit::archive::writer::{CarWriter, RootKind, WriterOptions};
    use testkit::synth::{Synth, SynthOptions};

    /// Opens `car` as a public-files-only source would: our own files answer "missing".
    fn open_public(car: &Path) -> Piece {
        let opener = |path: &Path, _small: bool| {
            let name = path.display().to_string();
            if name.ends_with("slot-ranges.raw")
                || name.ends_with("slot-to-blockhash.index")
                || name.contains("-asig-")
            {
                return Err(ArchiveError::MissingIndex { path: name });
            }
            open_file(path)
        };
        Piece::open(car, &opener, true).unwrap().expect("blocks")
    }

    #[test]
    fn derived_ranges_and_blockhashes_are_the_writers() {
        let dir = tempfile::tempdir().unwrap();
        let car = dir.path().join("epoch-3.car");
        let blocks: Vec<_> = Synth::new(SynthOptions {
            first_slot: 3 * 432_000 + 7,
            slots: 40,
            seed: 5,
            ..SynthOptions::default()
        })
        .collect();
        let mut writer = CarWriter::new(
            std::fs::File::create(&car).unwrap(),
            RootKind::Epoch(3),
            WriterOptions::default(),
        )
        .unwrap();
        let written: Vec<_> = blocks
            .iter()
            .map(|b| writer.write_block(b).unwrap())
            .collect();
        writer.finish().unwrap();
        build_indexes(
            &car,
            &BuildOptions {
                progress: false,
                partitions: None,
            },
        )
        .unwrap();
        let piece = open_public(&car);
        assert!(piece.ranges.is_none() && piece.hashes.is_none() && piece.address.is_none());
        assert_eq!(
            (piece.first_slot, piece.last_slot),
            (blocks[0].slot, blocks.last().unwrap().slot)
        );
        // Every slot of the span, twice (derived, then memoized): the writer's own range of the
        // slot (first section written for the block .. end of its Block section) and hash.
        for _ in 0..2 {
            for slot in piece.first_slot - 3..=piece.last_slot + 3 {
                let want = written.iter().zip(&blocks).find(|(w, _)| w.slot == slot);
                let range = piece.slot_range(slot).unwrap();
                let hash = piece.blockhash(slot).unwrap();
                match want {
                    Some((w, b)) => {
                        let len = (w.offset + w.size - w.range_start) as u32;
                        assert_eq!(range, Some((w.range_start, len)), "slot {slot}");
                        assert_eq!(hash, Some(b.entries.last().unwrap().hash), "slot {slot}");
                    }
                    None => assert_eq!((range, hash), (None, None), "slot {slot}"),
                }
            }
        }
    }
}
