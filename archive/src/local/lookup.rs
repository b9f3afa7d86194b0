//! Lookups inside one [`Piece`]: a slot's Block node, byte range and blockhash (from our tables or
//! derived and memoized), a node's section through cid-to-offset-and-size, a transaction by its
//! signature, a slot's block time.

use std::path::Path;

use super::corrupt;
use super::piece::Piece;
use crate::block::decode_transaction;
use crate::car::{self, parse_section};
use crate::cid::Cid;
use crate::error::FormatError;
use crate::model::TransactionInBlock;
use crate::node::{BlockNode, EntryNode};
use crate::store::ArchiveError;
use crate::{txwire, varint};

impl Piece {
    /// The Block node of `slot` through slot-to-cid → cid-to-offset-and-size, with its section's
    /// offset and size; `None` when the slot has no block (a compact-index false positive leads
    /// to another node or another slot and is rejected here).
    pub(super) fn block_node(
        &self,
        slot: u64,
    ) -> Result<Option<(u64, u64, BlockNode)>, ArchiveError> {
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
    pub(super) fn slot_range(&self, slot: u64) -> Result<Option<(u64, u32)>, ArchiveError> {
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
    pub(super) fn derive_range(&self, slot: u64) -> Result<Option<(u64, u32)>, ArchiveError> {
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
    pub(super) fn blockhash(&self, slot: u64) -> Result<Option<[u8; 32]>, ArchiveError> {
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
    pub(super) fn remember_blockhash(&self, slot: u64, hash: [u8; 32]) {
        if self.hashes.is_none() {
            crate::slotmemo::shared().update(self.id, slot, |f| f.blockhash = Some(hash));
        }
    }

    /// A damaged index file: the error names it.
    pub(super) fn index_error(&self, path: &Path, error: FormatError) -> ArchiveError {
        corrupt(&path.display().to_string(), error)
    }

    /// Damaged CAR bytes at `offset`: the error names the CAR and the offset.
    pub(super) fn corrupt_at(&self, offset: u64, error: FormatError) -> ArchiveError {
        ArchiveError::Corrupt {
            what: format!("{} at offset {offset}", self.name),
            reason: error.to_string(),
        }
    }

    pub(super) fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>, ArchiveError> {
        self.car
            .read_vec(offset, len)
            .map_err(|source| ArchiveError::Io {
                what: self.name.clone(),
                source,
            })
    }

    /// The node bytes of `cid` through cid-to-offset-and-size, confirmed by its CID.
    pub(super) fn section_of(&self, cid: &Cid) -> Result<Option<Vec<u8>>, ArchiveError> {
        Ok(self.section_with_place(cid)?.map(|(_, _, node)| node))
    }

    /// The node bytes of `cid` with its section's file offset and size.
    pub(super) fn section_with_place(
        &self,
        cid: &Cid,
    ) -> Result<Option<(u64, u64, Vec<u8>)>, ArchiveError> {
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

    pub(super) fn transaction(
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

    pub(super) fn block_time_of(&self, slot: u64) -> Result<Option<i64>, ArchiveError> {
        let time = self
            .block_times
            .get(slot)
            .map_err(|e| self.index_error(&self.paths.slot_to_blocktime, e))?;
        Ok(time.filter(|&t| t != 0).map(i64::from))
    }
}
