//! Length: over 600 lines because one epoch's pieces, their indexes and the lookups over them share
//! the piece type; ~80 of the lines are tests.
//!
//! [`LocalArchive`]: an [`ArchiveStore`] over a directory of epoch CARs (whole or pieces) with
//! the indexes our builder writes next to them. Every file is opened once at start and read with
//! `pread`; opening checks each index's epoch and rootCid against its CAR. Lookups:
//!
//! - block: slot-ranges → one read of the slot's bytes → parse; the parent's blockhash from
//!   slot-to-blockhash of whichever piece or epoch holds the parent. A source without those two
//!   tables (public files only) derives both from slot-to-cid, cid-to-offset-and-size and the
//!   Block/Entry nodes, memoized in [`crate::slotmemo`].
//! - transaction: sig-exists → sig-to-cid → cid-to-offset-and-size → read the section → confirm
//!   CID and first signature (compact indexes have false positives).
//! - signatures_for_address: the asig index only (no CAR reads); a piece without it ends the
//!   walk ([`ArchiveStore::signatures_page`]).

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
use crate::node::{self, BlockNode, EntryNode, Node, SubsetNode};
use crate::readat::{LocalFile, ReadAt};
use crate::store::{ArchiveError, ArchiveStore, SignaturePage, SlotLookup};
use crate::{epoch_of, txwire, varint};

/// A positioned-read source: a local file, bytes in memory or a remote file.
pub type Source = Box<dyn ReadAt>;

/// One CAR with its indexes.
struct Piece {
    /// Key of this CAR's facts in the slot memo (new for every opened CAR).
    id: u64,
    name: String,
    /// The index files' names, so that an error names the damaged file.
    paths: IndexPaths,
    car: Source,
    root: Cid,
    epoch: u64,
    first_slot: u64,
    last_slot: u64,
    /// File offset of the first section (start of the first block's range).
    data_start: u64,
    sig_exists: SigExists<Source>,
    sig_to_cid: CompactIndex<Source>,
    cid_to_offset: CompactIndex<Source>,
    block_times: BlockTimes<Source>,
    /// `slot-ranges.raw`; `None` (not published): ranges derived through `slot_to_cid`.
    ranges: Option<SlotRanges<Source>>,
    /// Opened when `ranges` or `hashes` is missing (it is only needed to derive them).
    slot_to_cid: Option<CompactIndex<Source>>,
    /// Our slot-to-blockhash; `None`: blockhashes read from the Entry nodes, memoized.
    hashes: Option<BlockHashes<Source>>,
    /// Our asig index; `None`: getSignaturesForAddress stops at this piece (ask the upstream).
    address: Option<AddressIndex<Source>>,
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
    /// Opens one CAR and its indexes. With `own_optional`, our own files (`slot-ranges.raw`,
    /// `slot-to-blockhash`, the four `asig-*`) may be missing (a source that publishes only the
    /// public files); slot-to-cid is then required when slot-ranges or slot-to-blockhash is
    /// missing. `Ok(None)`: the CAR holds no block.
    fn open(
        car_path: &Path,
        opener: &Opener<'_>,
        own_optional: bool,
    ) -> Result<Option<Piece>, ArchiveError> {
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
        let open_own = |path: &Path, small: bool| match opener(path, small) {
            Ok(source) => Ok(Some(source)),
            Err(ArchiveError::MissingIndex { .. }) if own_optional => Ok(None),
            Err(e) => Err(e),
        };
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
        let hashes = match open_own(&paths.slot_to_blockhash, true)? {
            Some(source) => {
                let hashes = BlockHashes::open(source)
                    .map_err(|e| corrupt(&paths.slot_to_blockhash.display().to_string(), e))?;
                check_meta(&paths.slot_to_blockhash, hashes.meta(), epoch, &root)?;
                Some(hashes)
            }
            None => None,
        };
        let ranges = match open_own(&paths.slot_ranges, true)? {
            Some(source) => Some(
                SlotRanges::open(source, epoch)
                    .map_err(|e| corrupt(&paths.slot_ranges.display().to_string(), e))?,
            ),
            None => None,
        };
        let slot_to_cid = if ranges.is_none() || hashes.is_none() {
            let index = CompactIndex::open(open_index(&paths.slot_to_cid)?)
                .map_err(|e| corrupt(&paths.slot_to_cid.display().to_string(), e))?;
            check_meta(&paths.slot_to_cid, index.meta(), epoch, &root)?;
            Some(index)
        } else {
            None
        };
        let a = &paths.address;
        let address = match (
            open_own(&a.txs, false)?,
            open_own(&a.sig_to_ordinal, false)?,
            open_own(&a.postings, false)?,
            open_own(&a.directory, false)?,
        ) {
            (Some(txs), Some(sig_to_ordinal), Some(postings), Some(directory)) => {
                let address = AddressIndex::open(txs, sig_to_ordinal, postings, directory)
                    .map_err(|e| corrupt(&a.txs.display().to_string(), e))?;
                check_meta(&a.txs, address.meta(), epoch, &root)?;
                check_meta(&a.directory, address.directory_meta(), epoch, &root)?;
                check_meta(
                    &a.sig_to_ordinal,
                    address.sig_to_ordinal_meta(),
                    epoch,
                    &root,
                )?;
                Some(address)
            }
            // Part of the four: being published (or withdrawn); used when all four are there.
            _ => None,
        };
        let mut piece = Piece {
            id: crate::rangecache::next_file_id(),
            name,
            paths: paths.clone(),
            car,
            root,
            epoch,
            first_slot: 0,
            last_slot: 0,
            data_start: header.data_start,
            sig_exists,
            sig_to_cid,
            cid_to_offset,
            block_times,
            ranges,
            slot_to_cid,
            hashes,
            address,
        };
        let bounds = match &piece.ranges {
            Some(ranges) => ranges
                .bounds()
                .map_err(|e| corrupt(&paths.slot_ranges.display().to_string(), e))?,
            None => piece.root_bounds()?,
        };
        let Some((first_slot, last_slot)) = bounds else {
            return Ok(None);
        };
        if epoch_of(first_slot) != epoch || epoch_of(last_slot) != epoch {
            return Err(ArchiveError::IndexMismatch {
                what: piece.name,
                reason: format!("slots {first_slot}..={last_slot} are not in epoch {epoch}"),
            });
        }
        piece.first_slot = first_slot;
        piece.last_slot = last_slot;
        Ok(Some(piece))
    }

    /// First and last present slot from the CAR's root: a Subset (piece) holds them, an Epoch
    /// node links its Subsets in slot order (format §2.1, §2.2). `None`: no block.
    fn root_bounds(&self) -> Result<Option<(u64, u64)>, ArchiveError> {
        let missing = |what: &str| ArchiveError::Corrupt {
            what: self.name.clone(),
            reason: format!("{what} not found through cid-to-offset-and-size"),
        };
        let bytes = self
            .section_of(&self.root)?
            .ok_or_else(|| missing("the root node"))?;
        match node::decode(&bytes).map_err(|e| corrupt(&self.name, e))? {
            Node::Subset(subset) if subset.blocks.is_empty() => Ok(None),
            Node::Subset(subset) => Ok(Some((subset.first, subset.last))),
            Node::Epoch(epoch) => {
                if epoch.epoch != self.epoch {
                    return Err(ArchiveError::IndexMismatch {
                        what: self.name.clone(),
                        reason: format!(
                            "Epoch node says {} but the indexes {}",
                            epoch.epoch, self.epoch
                        ),
                    });
                }
                let (Some(first), Some(last)) = (epoch.subsets.first(), epoch.subsets.last())
                else {
                    return Ok(None);
                };
                let subset = |cid: &Cid| -> Result<SubsetNode, ArchiveError> {
                    let bytes = self
                        .section_of(cid)?
                        .ok_or_else(|| missing("a Subset node"))?;
                    SubsetNode::decode(&bytes).map_err(|e| corrupt(&self.name, e))
                };
                Ok(Some((subset(first)?.first, subset(last)?.last)))
            }
            other => Err(ArchiveError::Corrupt {
                what: self.name.clone(),
                reason: format!("root node of kind {}", other.kind()),
            }),
        }
    }

    /// The Block node of `slot` through slot-to-cid → cid-to-offset-and-size, with its section's
    /// offset and size; `None` when the slot has no block (a compact-index false positive leads
    /// to another node or another slot and is rejected here).
    fn block_node(&self, slot: u64) -> Result<Option<(u64, u64, BlockNode)>, ArchiveError> {
        let Some(index) = &self.slot_to_cid else {
            return Ok(None);
        };
        let Some(value) = index
            .lookup(&slot.to_le_bytes())
            .map_err(|e| self.index_error(&self.paths.slot_to_cid, e))?
        else {
            return Ok(None);
        };
        let Ok(cid) = Cid::from_bytes(&value) else {
            return Ok(None);
        };
        let Some((offset, size, bytes)) = self.section_with_place(&cid)? else {
            return Ok(None);
        };
        match BlockNode::decode(&bytes) {
            Ok(block) if block.slot == slot => Ok(Some((offset, size, block))),
            Ok(_) | Err(FormatError::UnexpectedKind { .. }) => Ok(None),
            Err(e) => Err(corrupt(&self.name, e)),
        }
    }

    /// The byte range of `slot` (every section of the slot, ending with its Block section), or
    /// `None` when the slot has no block: slot-ranges when published, else derived and memoized.
    fn slot_range(&self, slot: u64) -> Result<Option<(u64, u32)>, ArchiveError> {
        if let Some(ranges) = &self.ranges {
            return ranges
                .get(slot)
                .map_err(|e| self.index_error(&self.paths.slot_ranges, e));
        }
        let memo = crate::slotmemo::shared();
        if let Some(known) = memo.get(self.id, slot, |f| f.range) {
            return Ok(known);
        }
        let range = self.derive_range(slot)?;
        memo.update(self.id, slot, |f| f.range = Some(range));
        Ok(range)
    }

    /// Spec §1.4: a slot's range starts right after the previous present block's Block section
    /// (or at the data start for the CAR's first block) and ends with its own Block section. The
    /// writer appends a block only after its parent, so the previous present block is the Block
    /// node's `parent_slot` when that lies in this CAR's span; no scan of the CAR is needed.
    fn derive_range(&self, slot: u64) -> Result<Option<(u64, u32)>, ArchiveError> {
        if !(self.first_slot..=self.last_slot).contains(&slot) {
            return Ok(None);
        }
        let Some((offset, size, block)) = self.block_node(slot)? else {
            return Ok(None);
        };
        let parent = block.parent_slot;
        let start = if parent < slot && parent >= self.first_slot {
            match self.block_node(parent)? {
                Some((parent_offset, parent_size, _)) => parent_offset + parent_size,
                None => {
                    return Err(ArchiveError::IndexMismatch {
                        what: self.name.clone(),
                        reason: format!(
                            "parent slot {parent} of slot {slot} is not in slot-to-cid"
                        ),
                    });
                }
            }
        } else {
            self.data_start
        };
        let end = offset + size;
        let len = end
            .checked_sub(start)
            .filter(|_| start <= offset)
            .and_then(|len| u32::try_from(len).ok())
            .ok_or_else(|| ArchiveError::Corrupt {
                what: self.name.clone(),
                reason: format!("slot {slot}: range {start}..{end} is not a slot range"),
            })?;
        Ok(Some((start, len)))
    }

    /// The blockhash of `slot` (its last Entry's hash): slot-to-blockhash when published, else
    /// read from the Block and Entry nodes and memoized. `None` when the slot has no block.
    fn blockhash(&self, slot: u64) -> Result<Option<[u8; 32]>, ArchiveError> {
        if let Some(hashes) = &self.hashes {
            return hashes
                .get(slot)
                .map_err(|e| self.index_error(&self.paths.slot_to_blockhash, e));
        }
        let memo = crate::slotmemo::shared();
        if let Some(hash) = memo.get(self.id, slot, |f| f.blockhash) {
            return Ok(Some(hash));
        }
        let Some((_, _, block)) = self.block_node(slot)? else {
            return Ok(None);
        };
        let entry = match block.entries.last() {
            Some(cid) => self.section_of(cid)?,
            None => None,
        };
        let Some(entry) = entry else {
            return Err(ArchiveError::Corrupt {
                what: self.name.clone(),
                reason: format!("slot {slot}: the block's last entry is not in the CAR"),
            });
        };
        let hash = EntryNode::decode_hash(&entry).map_err(|e| corrupt(&self.name, e))?;
        self.remember_blockhash(slot, hash);
        Ok(Some(hash))
    }

    /// Keeps a blockhash learnt from a decoded block (when it is not in slot-to-blockhash).
    fn remember_blockhash(&self, slot: u64, hash: [u8; 32]) {
        if self.hashes.is_none() {
            crate::slotmemo::shared().update(self.id, slot, |f| f.blockhash = Some(hash));
        }
    }

    /// A damaged index file: the error names it.
    fn index_error(&self, path: &Path, error: FormatError) -> ArchiveError {
        corrupt(&path.display().to_string(), error)
    }

    /// Damaged CAR bytes at `offset`: the error names the CAR and the offset.
    fn corrupt_at(&self, offset: u64, error: FormatError) -> ArchiveError {
        ArchiveError::Corrupt {
            what: format!("{} at offset {offset}", self.name),
            reason: error.to_string(),
        }
    }

    fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, ArchiveError> {
        self.car
            .read_vec(offset, len)
            .map_err(|source| ArchiveError::Io {
                what: self.name.clone(),
                source,
            })
    }

    /// The node bytes of `cid` through cid-to-offset-and-size, confirmed by its CID.
    fn section_of(&self, cid: &Cid) -> Result<Option<Vec<u8>>, ArchiveError> {
        Ok(self.section_with_place(cid)?.map(|(_, _, node)| node))
    }

    /// The node bytes of `cid` with its section's file offset and size.
    fn section_with_place(&self, cid: &Cid) -> Result<Option<(u64, u64, Vec<u8>)>, ArchiveError> {
        let Some(value) = self
            .cid_to_offset
            .lookup(cid.as_bytes())
            .map_err(|e| self.index_error(&self.paths.cid_to_offset, e))?
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
        if size > car::MAX_SECTION_LEN + 16 {
            return Ok(None);
        }
        if offset + size > self.car.len() {
            // The index names a section the file no longer holds whole.
            return Err(self.corrupt_at(offset, FormatError::Truncated("CAR section")));
        }
        let bytes = self.read(offset, size as usize)?;
        let section = parse_section(&bytes, offset).map_err(|e| self.corrupt_at(offset, e))?;
        if section.cid != *cid {
            return Ok(None); // a false positive of the compact index
        }
        if !section.cid.verifies(section.node) {
            return Err(self.corrupt_at(offset, FormatError::CidMismatch));
        }
        let start = bytes.len() - section.node.len();
        Ok(Some((offset, size, bytes[start..].to_vec())))
    }

    fn transaction(
        &self,
        signature: &[u8; 64],
    ) -> Result<Option<TransactionInBlock>, ArchiveError> {
        if !self
            .sig_exists
            .contains(signature)
            .map_err(|e| self.index_error(&self.paths.sig_exists, e))?
        {
            return Ok(None);
        }
        let Some(value) = self
            .sig_to_cid
            .lookup(signature)
            .map_err(|e| self.index_error(&self.paths.sig_to_cid, e))?
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
            .map_err(|e| self.index_error(&self.paths.slot_to_blocktime, e))?;
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
        Self::from_cars(&cars, &opener, false, dir.display().to_string())
    }

    /// Opens the given epochs behind `base` (laid out like the public file host:
    /// `<N>/epoch-<N>.car`, `<N>/epoch-<N>.cid` and the index names next to it). Small per-slot
    /// tables are fetched whole and kept in memory; everything else is read with range requests.
    /// Only the CAR and the published indexes are required: without `slot-ranges.raw` and
    /// `slot-to-blockhash` ranges and blockhashes are derived from slot-to-cid and the CAR
    /// (memoized, [`crate::slotmemo`]); without the `asig-*` files getSignaturesForAddress stops at
    /// the epoch ([`ArchiveStore::signatures_page`]).
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
        let Some((offset, len)) = piece.slot_range(slot)? else {
            return Ok(SlotLookup::Skipped);
        };
        let bytes = piece.read(offset, len as usize)?;
        let decoded = decode_slot_range(&bytes, offset).map_err(|e| piece.corrupt_at(offset, e))?;
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
        piece.remember_blockhash(slot, block.blockhash);
        block.previous_blockhash = self.blockhash_of(block.parent_slot)?;
        Ok(SlotLookup::Found(block))
    }

    fn block_time(&self, slot: u64) -> Result<SlotLookup<Option<i64>>, ArchiveError> {
        let piece = match self.locate(slot) {
            SlotLookup::Found(piece) => piece,
            SlotLookup::Skipped => return Ok(SlotLookup::Skipped),
            SlotLookup::NotHeld => return Ok(SlotLookup::NotHeld),
        };
        if piece.slot_range(slot)?.is_none() {
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
        let page = self.signatures_page(address, query)?;
        match page.unindexed_epoch {
            Some(epoch) => Err(ArchiveError::NoAddressIndex { epoch }),
            None => Ok(page.rows),
        }
    }

    fn signatures_page(
        &self,
        address: &[u8; 32],
        query: &SignatureQuery,
    ) -> Result<SignaturePage, ArchiveError> {
        // A `before`/`until` signature that is not in the archive ends the query (the validator's
        // long-term storage treats it as a lookup failure and returns nothing); when an epoch is
        // held without an address index the signature may be there: that epoch is named.
        let unindexed = self
            .pieces
            .iter()
            .rev()
            .find(|p| p.address.is_none())
            .map(|p| p.epoch);
        let unknown = SignaturePage {
            rows: Vec::new(),
            unindexed_epoch: unindexed,
        };
        let before = match &query.before {
            Some(sig) => match self.ordinal_of(sig)? {
                Some(found) => Some(found),
                None => return Ok(unknown),
            },
            None => None,
        };
        let until = match &query.until {
            Some(sig) => match self.ordinal_of(sig)? {
                Some(found) => Some(found),
                None => return Ok(unknown),
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
            let Some(index) = &piece.address else {
                return Ok(SignaturePage {
                    rows: out,
                    unindexed_epoch: Some(piece.epoch),
                });
            };
            let bounds = OrdinalBounds {
                below: before.filter(|(bp, _)| *bp == i).map(|(_, o)| o),
                above: until.filter(|(up, _)| *up == i).map(|(_, o)| o),
            };
            let rows = index
                .query(address, bounds, query.limit - out.len())
                .map_err(|e| piece.index_error(&piece.paths.address.postings, e))?;
            out.extend(rows);
        }
        Ok(SignaturePage {
            rows: out,
            unindexed_epoch: None,
        })
    }

    fn newest_slot(&self) -> Option<u64> {
        self.pieces.iter().map(|p| p.last_slot).max()
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
