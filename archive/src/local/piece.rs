//! One CAR with its indexes ([`Piece`]): opening every file, checking each index's epoch and
//! rootCid against the CAR, and finding the piece's slot span.

use std::path::Path;

use super::{Opener, Source, check_meta, corrupt};
use crate::car;
use crate::cid::Cid;
use crate::epoch_of;
use crate::index::IndexPaths;
use crate::index::addr::AddressIndex;
use crate::index::compact::CompactIndex;
use crate::index::sigexists::SigExists;
use crate::index::slots::{BlockHashes, BlockTimes, SlotRanges};
use crate::node::{self, Node, SubsetNode};
use crate::store::ArchiveError;

/// One CAR with its indexes.
pub(super) struct Piece {
    /// Key of this CAR's facts in the slot memo (new for every opened CAR).
    pub(super) id: u64,
    pub(super) name: String,
    /// The index files' names, so that an error names the damaged file.
    pub(super) paths: IndexPaths,
    pub(super) car: Source,
    pub(super) root: Cid,
    pub(super) epoch: u64,
    pub(super) first_slot: u64,
    pub(super) last_slot: u64,
    /// File offset of the first section (start of the first block's range).
    pub(super) data_start: u64,
    pub(super) sig_exists: SigExists<Source>,
    pub(super) sig_to_cid: CompactIndex<Source>,
    pub(super) cid_to_offset: CompactIndex<Source>,
    pub(super) block_times: BlockTimes<Source>,
    /// `slot-ranges.raw`; `None` (not published): ranges derived through `slot_to_cid`.
    pub(super) ranges: Option<SlotRanges<Source>>,
    /// Opened when `ranges` or `hashes` is missing (it is only needed to derive them).
    pub(super) slot_to_cid: Option<CompactIndex<Source>>,
    /// Our slot-to-blockhash; `None`: blockhashes read from the Entry nodes, memoized.
    pub(super) hashes: Option<BlockHashes<Source>>,
    /// Our asig index; `None`: getSignaturesForAddress stops at this piece (ask the upstream).
    pub(super) address: Option<AddressIndex<Source>>,
}

/// The index files of one CAR being opened: their names, how to open them, the CAR's root.
struct Opening<'a> {
    paths: &'a IndexPaths,
    opener: &'a Opener<'a>,
    /// Our own files may be missing (see [`Piece::open`]).
    own_optional: bool,
    root: Cid,
}

impl Opening<'_> {
    fn index(&self, path: &Path) -> Result<Source, ArchiveError> {
        (self.opener)(path, false)
    }

    fn small(&self, path: &Path) -> Result<Source, ArchiveError> {
        (self.opener)(path, true)
    }

    /// One of our own files: `None` when it is missing and that is allowed.
    fn own(&self, path: &Path, small: bool) -> Result<Option<Source>, ArchiveError> {
        match (self.opener)(path, small) {
            Ok(source) => Ok(Some(source)),
            Err(ArchiveError::MissingIndex { .. }) if self.own_optional => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// sig-to-cid, whose metadata names the epoch every other index is checked against.
    fn sig_to_cid(&self) -> Result<(u64, CompactIndex<Source>), ArchiveError> {
        let path = &self.paths.sig_to_cid;
        let sig_to_cid = CompactIndex::open(self.index(path)?)
            .map_err(|e| corrupt(&path.display().to_string(), e))?;
        let epoch = sig_to_cid
            .meta()
            .epoch()
            .ok_or_else(|| ArchiveError::IndexMismatch {
                what: path.display().to_string(),
                reason: "no epoch in metadata".into(),
            })?;
        check_meta(path, sig_to_cid.meta(), epoch, &self.root)?;
        Ok((epoch, sig_to_cid))
    }

    /// A compact index other than sig-to-cid, checked against `epoch` and the root.
    fn compact(&self, path: &Path, epoch: u64) -> Result<CompactIndex<Source>, ArchiveError> {
        let index = CompactIndex::open(self.index(path)?)
            .map_err(|e| corrupt(&path.display().to_string(), e))?;
        check_meta(path, index.meta(), epoch, &self.root)?;
        Ok(index)
    }

    fn sig_exists(&self, epoch: u64) -> Result<SigExists<Source>, ArchiveError> {
        let path = &self.paths.sig_exists;
        let sig_exists = SigExists::open(self.index(path)?)
            .map_err(|e| corrupt(&path.display().to_string(), e))?;
        check_meta(path, sig_exists.meta(), epoch, &self.root)?;
        Ok(sig_exists)
    }

    fn block_times(&self, epoch: u64) -> Result<BlockTimes<Source>, ArchiveError> {
        let path = &self.paths.slot_to_blocktime;
        let block_times = BlockTimes::open(self.small(path)?)
            .map_err(|e| corrupt(&path.display().to_string(), e))?;
        if block_times.epoch() != epoch {
            return Err(ArchiveError::IndexMismatch {
                what: path.display().to_string(),
                reason: format!("epoch {} instead of {epoch}", block_times.epoch()),
            });
        }
        Ok(block_times)
    }

    fn hashes(&self, epoch: u64) -> Result<Option<BlockHashes<Source>>, ArchiveError> {
        let path = &self.paths.slot_to_blockhash;
        let Some(source) = self.own(path, true)? else {
            return Ok(None);
        };
        let hashes =
            BlockHashes::open(source).map_err(|e| corrupt(&path.display().to_string(), e))?;
        check_meta(path, hashes.meta(), epoch, &self.root)?;
        Ok(Some(hashes))
    }

    fn ranges(&self, epoch: u64) -> Result<Option<SlotRanges<Source>>, ArchiveError> {
        let path = &self.paths.slot_ranges;
        match self.own(path, true)? {
            Some(source) => Ok(Some(
                SlotRanges::open(source, epoch)
                    .map_err(|e| corrupt(&path.display().to_string(), e))?,
            )),
            None => Ok(None),
        }
    }

    /// The four asig files, used only when all four are there.
    fn address(&self, epoch: u64) -> Result<Option<AddressIndex<Source>>, ArchiveError> {
        let a = &self.paths.address;
        let root = &self.root;
        let address = match (
            self.own(&a.txs, false)?,
            self.own(&a.sig_to_ordinal, false)?,
            self.own(&a.postings, false)?,
            self.own(&a.directory, false)?,
        ) {
            (Some(txs), Some(sig_to_ordinal), Some(postings), Some(directory)) => {
                let address = AddressIndex::open(txs, sig_to_ordinal, postings, directory)
                    .map_err(|e| corrupt(&a.txs.display().to_string(), e))?;
                check_meta(&a.txs, address.meta(), epoch, root)?;
                check_meta(&a.directory, address.directory_meta(), epoch, root)?;
                check_meta(
                    &a.sig_to_ordinal,
                    address.sig_to_ordinal_meta(),
                    epoch,
                    root,
                )?;
                Some(address)
            }
            // Part of the four: being published (or withdrawn); used when all four are there.
            _ => None,
        };
        Ok(address)
    }
}

impl Piece {
    /// Opens one CAR and its indexes. With `own_optional`, our own files (`slot-ranges.raw`,
    /// `slot-to-blockhash`, the four `asig-*`) may be missing (a source that publishes only the
    /// public files); slot-to-cid is then required when slot-ranges or slot-to-blockhash is
    /// missing. `Ok(None)`: the CAR holds no block.
    pub(super) fn open(
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
        let opening = Opening {
            paths: &paths,
            opener,
            own_optional,
            root,
        };
        let (epoch, sig_to_cid) = opening.sig_to_cid()?;
        let cid_to_offset = opening.compact(&paths.cid_to_offset, epoch)?;
        let sig_exists = opening.sig_exists(epoch)?;
        let block_times = opening.block_times(epoch)?;
        let hashes = opening.hashes(epoch)?;
        let ranges = opening.ranges(epoch)?;
        let slot_to_cid = if ranges.is_none() || hashes.is_none() {
            Some(opening.compact(&paths.slot_to_cid, epoch)?)
        } else {
            None
        };
        let address = opening.address(epoch)?;
        let piece = Piece {
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
        piece.with_bounds()
    }

    /// Sets the present slot span (slot-ranges, else the CAR's root) and checks it lies in the
    /// indexes' epoch. `None`: the CAR holds no block.
    fn with_bounds(mut self) -> Result<Option<Piece>, ArchiveError> {
        let epoch = self.epoch;
        let bounds = match &self.ranges {
            Some(ranges) => ranges
                .bounds()
                .map_err(|e| corrupt(&self.paths.slot_ranges.display().to_string(), e))?,
            None => self.root_bounds()?,
        };
        let Some((first_slot, last_slot)) = bounds else {
            return Ok(None);
        };
        if epoch_of(first_slot) != epoch || epoch_of(last_slot) != epoch {
            return Err(ArchiveError::IndexMismatch {
                what: self.name,
                reason: format!("slots {first_slot}..={last_slot} are not in epoch {epoch}"),
            });
        }
        self.first_slot = first_slot;
        self.last_slot = last_slot;
        Ok(Some(self))
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
}
