//! [`LocalArchive`]: an [`ArchiveStore`] over a directory of epoch CARs (whole or pieces) with
//! the indexes our builder writes next to them. Every file is opened once at start and read with
//! `pread`; opening checks each index's epoch and rootCid against its CAR. Lookups:
//!
//! - block: slot-ranges → one read of the slot's bytes → parse; the parent's blockhash from
//!   slot-to-blockhash of whichever piece or epoch holds the parent.
//! - transaction: sig-exists → sig-to-cid → cid-to-offset-and-size → read the section → confirm
//!   CID and first signature (compact indexes have false positives).
//! - signatures_for_address: the asig index only (no CAR reads).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::block::{decode_slot_range, decode_transaction};
use crate::car::{self, parse_section};
use crate::cid::Cid;
use crate::error::FormatError;
use crate::index::IndexPaths;
use crate::index::addr::{AddressIndex, OrdinalBounds};
use crate::index::compact::CompactIndex;
use crate::index::meta::IndexMeta;
use crate::index::sigexists::SigExists;
use crate::index::slots::{BlockHashes, BlockTimes, SlotRanges};
use crate::model::{Block, SignatureInfo, SignatureQuery, TransactionInBlock};
use crate::readat::{LocalFile, ReadAt};
use crate::store::{ArchiveError, ArchiveStore, SlotLookup};
use crate::{epoch_of, txwire, varint};

/// A positioned-read source: a local file, bytes in memory or a remote file.
pub type Source = Box<dyn ReadAt>;

/// One CAR with its indexes.
struct Piece {
    name: String,
    car: Source,
    root: Cid,
    epoch: u64,
    first_slot: u64,
    last_slot: u64,
    sig_exists: SigExists<Source>,
    sig_to_cid: CompactIndex<Source>,
    cid_to_offset: CompactIndex<Source>,
    block_times: BlockTimes<Source>,
    ranges: SlotRanges<Source>,
    hashes: BlockHashes<Source>,
    address: AddressIndex<Source>,
}

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

impl Piece {
    fn open(car_path: &Path, opener: &Opener<'_>) -> Result<Option<Piece>, ArchiveError> {
        let name = car_path.display().to_string();
        let car = opener(car_path, false)?;
        let head = car
            .read_vec(0, car.len().min(1024) as usize)
            .map_err(|source| ArchiveError::Io {
                what: name.clone(),
                source,
            })?;
        let header = car::parse_header(&head).map_err(|e| corrupt(&name, e))?;
        let root = header.root;
        let paths = IndexPaths::for_car(car_path, &root);
        let open_index = |path: &Path| opener(path, false);
        let open_small = |path: &Path| opener(path, true);
        let sig_to_cid = CompactIndex::open(open_index(&paths.sig_to_cid)?)
            .map_err(|e| corrupt(&paths.sig_to_cid.display().to_string(), e))?;
        let epoch = sig_to_cid
            .meta()
            .epoch()
            .ok_or_else(|| ArchiveError::IndexMismatch {
                what: paths.sig_to_cid.display().to_string(),
                reason: "no epoch in metadata".into(),
            })?;
        check_meta(&paths.sig_to_cid, sig_to_cid.meta(), epoch, &root)?;
        let cid_to_offset = CompactIndex::open(open_index(&paths.cid_to_offset)?)
            .map_err(|e| corrupt(&paths.cid_to_offset.display().to_string(), e))?;
        check_meta(&paths.cid_to_offset, cid_to_offset.meta(), epoch, &root)?;
        let sig_exists = SigExists::open(open_index(&paths.sig_exists)?)
            .map_err(|e| corrupt(&paths.sig_exists.display().to_string(), e))?;
        check_meta(&paths.sig_exists, sig_exists.meta(), epoch, &root)?;
        let block_times = BlockTimes::open(open_small(&paths.slot_to_blocktime)?)
            .map_err(|e| corrupt(&paths.slot_to_blocktime.display().to_string(), e))?;
        if block_times.epoch() != epoch {
            return Err(ArchiveError::IndexMismatch {
                what: paths.slot_to_blocktime.display().to_string(),
                reason: format!("epoch {} instead of {epoch}", block_times.epoch()),
            });
        }
        let hashes = BlockHashes::open(open_small(&paths.slot_to_blockhash)?)
            .map_err(|e| corrupt(&paths.slot_to_blockhash.display().to_string(), e))?;
        check_meta(&paths.slot_to_blockhash, hashes.meta(), epoch, &root)?;
        let ranges = SlotRanges::open(open_small(&paths.slot_ranges)?, epoch)
            .map_err(|e| corrupt(&paths.slot_ranges.display().to_string(), e))?;
        let a = &paths.address;
        let address = AddressIndex::open(
            open_index(&a.txs)?,
            open_index(&a.sig_to_ordinal)?,
            open_index(&a.postings)?,
            open_index(&a.directory)?,
        )
        .map_err(|e| corrupt(&a.txs.display().to_string(), e))?;
        check_meta(&a.txs, address.meta(), epoch, &root)?;
        check_meta(&a.directory, address.directory_meta(), epoch, &root)?;
        check_meta(
            &a.sig_to_ordinal,
            address.sig_to_ordinal_meta(),
            epoch,
            &root,
        )?;
        let Some((first_slot, last_slot)) = ranges
            .bounds()
            .map_err(|e| corrupt(&paths.slot_ranges.display().to_string(), e))?
        else {
            return Ok(None);
        };
        Ok(Some(Piece {
            name,
            car,
            root,
            epoch,
            first_slot,
            last_slot,
            sig_exists,
            sig_to_cid,
            cid_to_offset,
            block_times,
            ranges,
            hashes,
            address,
        }))
    }

    fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, ArchiveError> {
        self.car
            .read_vec(offset, len)
            .map_err(|source| ArchiveError::Io {
                what: self.name.clone(),
                source,
            })
    }

    /// The section of `cid` through cid-to-offset-and-size, confirmed by its CID.
    fn section_of(&self, cid: &Cid) -> Result<Option<Vec<u8>>, ArchiveError> {
        let Some(value) = self
            .cid_to_offset
            .lookup(cid.as_bytes())
            .map_err(|e| corrupt(&self.name, e))?
        else {
            return Ok(None);
        };
        let mut o = [0u8; 8];
        o[..6].copy_from_slice(&value[..6]);
        let offset = u64::from_le_bytes(o);
        let mut size = u64::from(value[6]) | u64::from(value[7]) << 8 | u64::from(value[8]) << 16;
        if size == 0 {
            // Sections of 16 MiB and more: the size is the varint at the offset.
            let head = self.read(
                offset,
                varint::MAX_LEN.min((self.car.len().saturating_sub(offset)) as usize),
            )?;
            let (len, used) = varint::decode(&head).map_err(|e| corrupt(&self.name, e))?;
            size = len + used as u64;
        }
        if size > car::MAX_SECTION_LEN + 16 || offset + size > self.car.len() {
            return Ok(None);
        }
        let bytes = self.read(offset, size as usize)?;
        let section = parse_section(&bytes, offset).map_err(|e| corrupt(&self.name, e))?;
        if section.cid != *cid {
            return Ok(None); // a false positive of the compact index
        }
        let start = bytes.len() - section.node.len();
        Ok(Some(bytes[start..].to_vec()))
    }

    fn transaction(
        &self,
        signature: &[u8; 64],
    ) -> Result<Option<TransactionInBlock>, ArchiveError> {
        if !self
            .sig_exists
            .contains(signature)
            .map_err(|e| corrupt(&self.name, e))?
        {
            return Ok(None);
        }
        let Some(value) = self
            .sig_to_cid
            .lookup(signature)
            .map_err(|e| corrupt(&self.name, e))?
        else {
            return Ok(None);
        };
        let Ok(cid) = Cid::from_bytes(&value) else {
            return Ok(None);
        };
        let Some(node) = self.section_of(&cid)? else {
            return Ok(None);
        };
        let mut missing = None;
        let fetch = |c: &Cid| match self.section_of(c) {
            Ok(found) => found,
            Err(e) => {
                missing = Some(e);
                None
            }
        };
        let decoded = decode_transaction(&node, 0, fetch);
        if let Some(error) = missing {
            return Err(error);
        }
        let tx = match decoded {
            Ok(tx) => tx,
            // The CID led to another kind of node: a false positive.
            Err(FormatError::UnexpectedKind { .. }) => return Ok(None),
            Err(e) => return Err(corrupt(&self.name, e)),
        };
        if txwire::first_signature(&tx.wire).ok().as_ref() != Some(signature) {
            return Ok(None);
        }
        let block_time = self.block_time_of(tx.slot)?;
        Ok(Some(TransactionInBlock {
            transaction: tx,
            block_time,
        }))
    }

    fn block_time_of(&self, slot: u64) -> Result<Option<i64>, ArchiveError> {
        let time = self
            .block_times
            .get(slot)
            .map_err(|e| corrupt(&self.name, e))?;
        Ok(time.filter(|&t| t != 0).map(i64::from))
    }
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
        Self::from_cars(&cars, &opener, dir.display().to_string())
    }

    /// Opens the given epochs behind `base` (laid out like the public file host:
    /// `<N>/epoch-<N>.car`, `<N>/epoch-<N>.cid` and the index names next to it). Small per-slot
    /// tables are fetched whole and kept in memory; everything else is read with range requests.
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
        Self::from_cars(&cars, &opener, base.clone())
    }

    fn from_cars(
        cars: &[PathBuf],
        opener: &Opener<'_>,
        origin: String,
    ) -> Result<EpochArchive, ArchiveError> {
        let mut pieces = Vec::with_capacity(cars.len());
        for car in cars {
            if let Some(piece) = Piece::open(car, opener)? {
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
        Self::from_cars(cars, &opener, origin.to_string())
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
            SlotLookup::Found(piece) => piece.hashes.get(slot).map_err(|e| corrupt(&piece.name, e)),
            _ => Ok(None),
        }
    }

    /// Finds the piece (position in `pieces`) and ordinal of a signature, newest piece first.
    fn ordinal_of(&self, signature: &[u8; 64]) -> Result<Option<(usize, u32)>, ArchiveError> {
        for (i, piece) in self.pieces.iter().enumerate().rev() {
            if let Some(ordinal) = piece
                .address
                .ordinal_of(signature)
                .map_err(|e| corrupt(&piece.name, e))?
            {
                return Ok(Some((i, ordinal)));
            }
        }
        Ok(None)
    }
}

impl ArchiveStore for EpochArchive {
    fn epochs(&self) -> Vec<u64> {
        let mut epochs: Vec<u64> = self.pieces.iter().map(|p| p.epoch).collect();
        epochs.dedup();
        epochs
    }

    fn block(&self, slot: u64) -> Result<SlotLookup<Block>, ArchiveError> {
        let piece = match self.locate(slot) {
            SlotLookup::Found(piece) => piece,
            SlotLookup::Skipped => return Ok(SlotLookup::Skipped),
            SlotLookup::NotHeld => return Ok(SlotLookup::NotHeld),
        };
        let Some((offset, len)) = piece
            .ranges
            .get(slot)
            .map_err(|e| corrupt(&piece.name, e))?
        else {
            return Ok(SlotLookup::Skipped);
        };
        let bytes = piece.read(offset, len as usize)?;
        let decoded = decode_slot_range(&bytes, offset).map_err(|e| corrupt(&piece.name, e))?;
        if decoded.block.slot != slot {
            return Err(ArchiveError::IndexMismatch {
                what: piece.name.clone(),
                reason: format!(
                    "slot-ranges entry of slot {slot} holds slot {}",
                    decoded.block.slot
                ),
            });
        }
        let mut block = decoded.block;
        block.previous_blockhash = self.blockhash_of(block.parent_slot)?;
        Ok(SlotLookup::Found(block))
    }

    fn block_time(&self, slot: u64) -> Result<SlotLookup<Option<i64>>, ArchiveError> {
        let piece = match self.locate(slot) {
            SlotLookup::Found(piece) => piece,
            SlotLookup::Skipped => return Ok(SlotLookup::Skipped),
            SlotLookup::NotHeld => return Ok(SlotLookup::NotHeld),
        };
        if piece
            .ranges
            .get(slot)
            .map_err(|e| corrupt(&piece.name, e))?
            .is_none()
        {
            return Ok(SlotLookup::Skipped);
        }
        Ok(SlotLookup::Found(piece.block_time_of(slot)?))
    }

    fn transaction(
        &self,
        signature: &[u8; 64],
    ) -> Result<Option<TransactionInBlock>, ArchiveError> {
        for piece in self.pieces.iter().rev() {
            if let Some(found) = piece.transaction(signature)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    fn signatures_for_address(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<Vec<SignatureInfo>, ArchiveError> {
        // A `before`/`until` signature that is not in the archive ends the query (the validator's
        // long-term storage treats it as a lookup failure and returns nothing).
        let before = match &query.before {
            Some(sig) => match self.ordinal_of(sig)? {
                Some(found) => Some(found),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        let until = match &query.until {
            Some(sig) => match self.ordinal_of(sig)? {
                Some(found) => Some(found),
                None => return Ok(Vec::new()),
            },
            None => None,
        };
        let mut out = Vec::with_capacity(query.limit.min(1000));
        for (i, piece) in self.pieces.iter().enumerate().rev() {
            if out.len() >= query.limit {
                break;
            }
            if before.is_some_and(|(bp, _)| i > bp) {
                continue;
            }
            if until.is_some_and(|(up, _)| i < up) {
                break;
            }
            let bounds = OrdinalBounds {
                below: before.filter(|(bp, _)| *bp == i).map(|(_, o)| o),
                above: until.filter(|(up, _)| *up == i).map(|(_, o)| o),
            };
            let rows = piece
                .address
                .query(address, bounds, query.limit - out.len())
                .map_err(|e| corrupt(&piece.name, e))?;
            out.extend(rows);
        }
        Ok(out)
    }

    fn newest_slot(&self) -> Option<u64> {
        self.pieces.iter().map(|p| p.last_slot).max()
    }
}
