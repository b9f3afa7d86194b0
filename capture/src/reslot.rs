//! Renumbering a captured slot so that a replay loop looks like a live chain: every FEC set of
//! the slot is rewritten with a new slot number and parent, its parity re-encoded (data shards
//! include the slot), its Merkle tree and proofs recomputed, its chained root linked to the
//! previous set (or the given parent root), and its root signed with the replay's key, which the
//! replaying appliance then uses as the slot's leader. Pure: bytes in, bytes out.
//!
//! Input: every shred of one slot, all 64 of each FEC set (a complete capture, in any order).
//! Retransmitter signatures of resigned sets are zeroed, as a leader emits them.

use std::collections::BTreeMap;

use ed25519_dalek::{Signer, SigningKey};
use thiserror::Error;

use decoder::erasure::ErasureCoder;
use decoder::merkle::{self, FecSetTree, Hash};
use decoder::shred::{
    self, CHAINED_ROOT_LEN, CODE_SHRED_LEN, DATA_SHREDS_PER_FEC_SET, KindHeader,
    MERKLE_PROOF_ENTRY_LEN, ParseOptions, SHREDS_PER_FEC_SET, SIGNATURE_LEN, ShredKind,
};

/// Why a slot could not be renumbered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReslotError {
    #[error("record {record} is not a valid shred: {reason}")]
    BadShred { record: usize, reason: String },
    #[error("FEC set {fec_set_index} has {count} of its 64 shreds")]
    IncompleteSet { fec_set_index: u32, count: usize },
    #[error("new parent {parent} is not below new slot {slot} by at most 65,535")]
    BadParent { slot: u64, parent: u64 },
    #[error("the capture holds shreds of several slots")]
    SeveralSlots,
    #[error("erasure encoding failed")]
    Erasure,
}

/// Rewrites captured slots with a signing key.
pub struct Reslotter {
    coder: ErasureCoder,
    key: SigningKey,
}

/// One renumbered slot: its shreds (data then coding per FEC set, sets in order) and the root of
/// its last FEC set (what the next slot chains to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReslottedSlot {
    pub shreds: Vec<Vec<u8>>,
    pub last_root: Hash,
}

impl Reslotter {
    pub fn new(key: SigningKey) -> Self {
        Self {
            coder: ErasureCoder::new(),
            key,
        }
    }

    /// The public key that signs renumbered slots (the replay's leader).
    pub fn leader(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// Renumbers one complete slot to `slot` with parent `parent`; the first FEC set chains to
    /// `parent_root`.
    pub fn reslot(
        &self,
        shreds: &[&[u8]],
        slot: u64,
        parent: u64,
        parent_root: &Hash,
    ) -> Result<ReslottedSlot, ReslotError> {
        let parent_offset = slot
            .checked_sub(parent)
            .filter(|offset| (1..=u64::from(u16::MAX)).contains(offset) || slot == 0)
            .ok_or(ReslotError::BadParent { slot, parent })? as u16;
        let sets = group_sets(shreds)?;
        let mut chained = *parent_root;
        let mut out = Vec::with_capacity(shreds.len());
        for (fec_set_index, mut set) in sets {
            let count = set.iter().filter(|shred| !shred.is_empty()).count();
            if count != SHREDS_PER_FEC_SET {
                return Err(ReslotError::IncompleteSet {
                    fec_set_index,
                    count,
                });
            }
            chained = self.rewrite_set(&mut set, slot, parent_offset, &chained)?;
            out.extend(set);
        }
        Ok(ReslottedSlot {
            shreds: out,
            last_root: chained,
        })
    }

    /// Rewrites one complete set in place and returns its new root.
    fn rewrite_set(
        &self,
        set: &mut [Vec<u8>],
        slot: u64,
        parent_offset: u16,
        chained: &Hash,
    ) -> Result<Hash, ReslotError> {
        let data_variant = shred::parse_variant(
            set[0][64],
            ParseOptions {
                allow_unchained: true,
            },
        )
        .map_err(|error| ReslotError::BadShred {
            record: 0,
            reason: error.to_string(),
        })?;
        let shard_len = data_variant.shard_len().unwrap_or(0);
        for (erasure_index, buffer) in set.iter_mut().enumerate() {
            let kind = kind_of(erasure_index);
            let variant = data_variant.with_kind(kind);
            buffer[65..73].copy_from_slice(&slot.to_le_bytes());
            if kind == ShredKind::Data {
                buffer[83..85].copy_from_slice(&parent_offset.to_le_bytes());
            }
            if variant.chained {
                let offset = variant.proof_offset() - CHAINED_ROOT_LEN;
                buffer[offset..offset + CHAINED_ROOT_LEN].copy_from_slice(chained);
            }
            if variant.resigned {
                let len = variant.payload_len();
                buffer[len - SIGNATURE_LEN..len].fill(0);
            }
        }
        let mut shards: [&mut [u8]; SHREDS_PER_FEC_SET] = std::array::from_fn(|_| &mut [][..]);
        for (index, (shard, buffer)) in shards.iter_mut().zip(set.iter_mut()).enumerate() {
            let start = shred::shard_offset(kind_of(index));
            *shard = &mut buffer[start..start + shard_len];
        }
        self.coder
            .encode(&mut shards)
            .map_err(|_| ReslotError::Erasure)?;
        let mut leaves = [[0u8; 32]; SHREDS_PER_FEC_SET];
        for (erasure_index, (leaf, buffer)) in leaves.iter_mut().zip(set.iter()).enumerate() {
            let proof_offset = data_variant
                .with_kind(kind_of(erasure_index))
                .proof_offset();
            *leaf = merkle::leaf_hash(&buffer[SIGNATURE_LEN..proof_offset]);
        }
        let tree = FecSetTree::from_leaves(&leaves);
        let signature = self.key.sign(tree.root()).to_bytes();
        let proof_len = usize::from(data_variant.proof_size) * MERKLE_PROOF_ENTRY_LEN;
        for (erasure_index, buffer) in set.iter_mut().enumerate() {
            let proof_offset = data_variant
                .with_kind(kind_of(erasure_index))
                .proof_offset();
            tree.write_proof(
                erasure_index,
                &mut buffer[proof_offset..proof_offset + proof_len],
            );
            buffer[..SIGNATURE_LEN].copy_from_slice(&signature);
        }
        Ok(*tree.root())
    }
}

fn kind_of(erasure_index: usize) -> ShredKind {
    if erasure_index < DATA_SHREDS_PER_FEC_SET {
        ShredKind::Data
    } else {
        ShredKind::Code
    }
}

/// The shreds of each FEC set by erasure index (empty where absent), sets in index order.
fn group_sets(shreds: &[&[u8]]) -> Result<BTreeMap<u32, Vec<Vec<u8>>>, ReslotError> {
    let mut sets: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
    let mut slot = None;
    for (record, bytes) in shreds.iter().enumerate() {
        let parsed = shred::parse_shred(
            bytes,
            ParseOptions {
                allow_unchained: true,
            },
        )
        .map_err(|error| ReslotError::BadShred {
            record,
            reason: error.to_string(),
        })?;
        if *slot.get_or_insert(parsed.slot()) != parsed.slot() {
            return Err(ReslotError::SeveralSlots);
        }
        let erasure_index = match parsed.kind_header() {
            KindHeader::Data { .. } | KindHeader::Code { .. } => parsed.erasure_index(),
        };
        let set = sets
            .entry(parsed.fec_set_index())
            .or_insert_with(|| vec![Vec::new(); SHREDS_PER_FEC_SET]);
        let mut payload = parsed.payload().to_vec();
        payload.resize(parsed.variant().payload_len().min(CODE_SHRED_LEN), 0);
        set[erasure_index] = payload;
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing;
    use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder};

    const FULL: &[u8] =
        include_bytes!("../../decoder/tests/fixtures/shreds/slot-361200000.full.bin");

    #[test]
    fn renumbered_slot_decodes_to_the_same_entries_under_the_replay_leader() {
        let records: Vec<&[u8]> = framing::records(FULL).map(|r| r.unwrap().payload).collect();
        let reslotter = Reslotter::new(SigningKey::from_bytes(&[7; 32]));
        let renumbered = reslotter
            .reslot(&records, 500_000_000, 499_999_998, &[9; 32])
            .unwrap();
        let leader = LeaderSchedule::key_from_bytes(&reslotter.leader()).unwrap();
        let decode = |shreds: &[&[u8]], leaders: LeaderSchedule| {
            let mut decoder = ShredDecoder::new(DecoderConfig::default(), leaders);
            let mut entries = Vec::new();
            for shred in shreds {
                decoder.ingest(shred, 0);
                while let Some(batch) = decoder.next_batch() {
                    for entry in batch.entries.entries() {
                        entries.push((batch.span.slot, entry.num_hashes, *entry.hash));
                    }
                }
            }
            (entries, decoder.fec_counters())
        };
        let (original, _) = decode(&records, LeaderSchedule::Unchecked);
        let shreds: Vec<&[u8]> = renumbered.shreds.iter().map(Vec::as_slice).collect();
        // Every other shred only: recovery must rebuild from the re-encoded parity.
        let lossy: Vec<&[u8]> = shreds.iter().copied().step_by(2).collect();
        let (replayed, counters) = decode(&lossy, LeaderSchedule::Fixed(leader));
        assert_eq!(replayed.len(), original.len());
        assert!(replayed.iter().all(|(slot, _, _)| *slot == 500_000_000));
        let strip = |entries: &[(u64, u64, [u8; 32])]| -> Vec<(u64, [u8; 32])> {
            entries
                .iter()
                .map(|(_, hashes, hash)| (*hashes, *hash))
                .collect()
        };
        assert_eq!(strip(&replayed), strip(&original));
        assert_eq!(counters.chain_links_broken, 0);
        assert!(counters.sets_recovered > 0);
        // The first set chains to the given parent root.
        let first = shred::parse_shred(&renumbered.shreds[0], ParseOptions::default()).unwrap();
        assert_eq!(first.chained_root().unwrap(), &[9; 32]);
        assert_eq!(first.parent_slot(), Some(499_999_998));
    }

    #[test]
    fn incomplete_sets_are_refused() {
        let records: Vec<&[u8]> = framing::records(FULL)
            .map(|r| r.unwrap().payload)
            .skip(1)
            .collect();
        let reslotter = Reslotter::new(SigningKey::from_bytes(&[7; 32]));
        let error = reslotter.reslot(&records, 10, 9, &[0; 32]).unwrap_err();
        assert_eq!(
            error,
            ReslotError::IncompleteSet {
                fec_set_index: 0,
                count: 63
            }
        );
    }
}
