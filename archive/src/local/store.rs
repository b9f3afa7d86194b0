//! The [`ArchiveStore`] contract over an [`EpochArchive`]: blocks, block times, transactions and
//! the address-signature walk across its pieces.

use super::EpochArchive;
use crate::block::decode_slot_range;
use crate::index::addr::OrdinalBounds;
use crate::model::{Block, SignatureInfo, SignatureQuery, TransactionInBlock};
use crate::store::{ArchiveError, ArchiveStore, SignaturePage, SlotLookup};

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
