//! A leader's shredder for tests: entries of transactions made into the chained Merkle shreds a
//! leader sends (format of docs/decoder.md), so that a test can put any transaction it builds on
//! the wire. Each entry batch becomes whole FEC sets of 32 data and 32 coding shreds (its last
//! data shreds empty when the batch is short, as the leader pads its last erasure batch), its last
//! data shred flagged `DATA_COMPLETE` (and `LAST_SHRED_IN_SLOT` for the slot's last batch).
//! Parity, Merkle proofs, chaining and the leader's signature come from
//! [`capture::reslot::Reslotter`], the replay source's own re-encoder.

use capture::reslot::{ReslotError, ReslottedSlot, Reslotter};
use decoder::merkle::Hash;
use decoder::shred::{
    CHAINED_ROOT_LEN, CODING_SHREDS_PER_FEC_SET, DATA_HEADERS_LEN, DATA_SHREDS_PER_FEC_SET,
    FEC_SET_PROOF_SIZE, FLAG_DATA_COMPLETE, FLAG_LAST_SHRED_IN_SLOT, ShredKind, ShredVariant,
};
use ed25519_dalek::SigningKey;

/// The shred version the shreds carry (the shred fixtures').
pub const SHRED_VERSION: u16 = 50_093;

/// One PoH entry: its hash count, hash and transactions (wire bytes).
#[derive(Debug, Clone, Default)]
pub struct Entry {
    pub num_hashes: u64,
    pub hash: [u8; 32],
    pub transactions: Vec<Vec<u8>>,
}

/// An entry batch as the leader serializes it: bincode 1 `Vec<Entry>` (u64 lengths; each
/// transaction in its own wire format).
pub fn entry_batch(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for entry in entries {
        out.extend_from_slice(&entry.num_hashes.to_le_bytes());
        out.extend_from_slice(&entry.hash);
        out.extend_from_slice(&(entry.transactions.len() as u64).to_le_bytes());
        for transaction in &entry.transactions {
            out.extend_from_slice(transaction);
        }
    }
    out
}

/// Makes slots of shreds signed by one leader key.
pub struct Shredder {
    reslotter: Reslotter,
}

const DATA_VARIANT: ShredVariant = ShredVariant {
    kind: ShredKind::Data,
    proof_size: FEC_SET_PROOF_SIZE,
    chained: true,
    resigned: false,
};

impl Shredder {
    pub fn new(key: SigningKey) -> Self {
        Self {
            reslotter: Reslotter::new(key),
        }
    }

    /// The public key that signs the shreds (the slot's leader).
    pub fn leader(&self) -> [u8; 32] {
        self.reslotter.leader()
    }

    /// Every shred of `slot` (parent `parent`, first set chained to `parent_root`) carrying
    /// `batches` (serialized entry batches, see [`entry_batch`]) in order.
    pub fn shred_slot(
        &self,
        slot: u64,
        parent: u64,
        parent_root: &Hash,
        batches: &[Vec<u8>],
    ) -> Result<ReslottedSlot, ReslotError> {
        let mut shreds = Vec::new();
        let mut next_index = 0u32;
        for (number, batch) in batches.iter().enumerate() {
            let last_in_slot = number + 1 == batches.len();
            next_index = push_batch(&mut shreds, slot, next_index, batch, last_in_slot);
        }
        let records: Vec<&[u8]> = shreds.iter().map(Vec::as_slice).collect();
        self.reslotter.reslot(&records, slot, parent, parent_root)
    }
}

/// Data bytes one data shred carries.
fn capacity() -> usize {
    DATA_VARIANT.data_capacity().unwrap_or(0)
}

/// Appends `batch`'s FEC sets from shred index `first`; returns the next free index.
fn push_batch(
    out: &mut Vec<Vec<u8>>,
    slot: u64,
    first: u32,
    batch: &[u8],
    last_in_slot: bool,
) -> u32 {
    let chunks: Vec<&[u8]> = batch.chunks(capacity()).collect();
    let sets = chunks.len().div_ceil(DATA_SHREDS_PER_FEC_SET).max(1);
    let count = sets * DATA_SHREDS_PER_FEC_SET;
    for set in 0..sets {
        let fec_set_index = first + (set * DATA_SHREDS_PER_FEC_SET) as u32;
        for position in 0..DATA_SHREDS_PER_FEC_SET {
            let number = set * DATA_SHREDS_PER_FEC_SET + position;
            let flags = match (number + 1 == count, last_in_slot) {
                (true, true) => FLAG_LAST_SHRED_IN_SLOT,
                (true, false) => FLAG_DATA_COMPLETE,
                (false, _) => 0,
            };
            let data = chunks.get(number).copied().unwrap_or_default();
            let index = first + number as u32;
            out.push(data_shred(slot, index, fec_set_index, flags, data));
        }
        for position in 0..CODING_SHREDS_PER_FEC_SET {
            out.push(code_shred(slot, fec_set_index, position as u16));
        }
    }
    first + count as u32
}

fn common_header(variant: ShredVariant, slot: u64, index: u32, fec_set_index: u32) -> Vec<u8> {
    let mut shred = vec![0u8; variant.payload_len()];
    shred[64] = variant.to_byte();
    shred[65..73].copy_from_slice(&slot.to_le_bytes());
    shred[73..77].copy_from_slice(&index.to_le_bytes());
    shred[77..79].copy_from_slice(&SHRED_VERSION.to_le_bytes());
    shred[79..83].copy_from_slice(&fec_set_index.to_le_bytes());
    shred
}

fn data_shred(slot: u64, index: u32, fec_set_index: u32, flags: u8, data: &[u8]) -> Vec<u8> {
    let mut shred = common_header(DATA_VARIANT, slot, index, fec_set_index);
    // A valid parent offset for the parser; the reslotter writes the real one.
    shred[83..85].copy_from_slice(&1u16.to_le_bytes());
    shred[85] = flags;
    let size = (DATA_HEADERS_LEN + data.len()) as u16;
    shred[86..88].copy_from_slice(&size.to_le_bytes());
    shred[DATA_HEADERS_LEN..DATA_HEADERS_LEN + data.len()].copy_from_slice(data);
    debug_assert!(DATA_HEADERS_LEN + data.len() <= DATA_VARIANT.proof_offset() - CHAINED_ROOT_LEN);
    shred
}

fn code_shred(slot: u64, fec_set_index: u32, position: u16) -> Vec<u8> {
    let variant = DATA_VARIANT.with_kind(ShredKind::Code);
    let index = fec_set_index + u32::from(position);
    let mut shred = common_header(variant, slot, index, fec_set_index);
    shred[83..85].copy_from_slice(&(DATA_SHREDS_PER_FEC_SET as u16).to_le_bytes());
    shred[85..87].copy_from_slice(&(CODING_SHREDS_PER_FEC_SET as u16).to_le_bytes());
    shred[87..89].copy_from_slice(&position.to_le_bytes());
    shred
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Test code: a failed unwrap is a failed test.

    use super::*;
    use decoder::{DecoderConfig, LeaderSchedule, ShredDecoder};

    #[test]
    fn shredded_batches_decode_to_their_entries_under_the_leader() {
        let shredder = Shredder::new(SigningKey::from_bytes(&[3; 32]));
        let big = Entry {
            num_hashes: 7,
            hash: [5; 32],
            // No transactions, but a batch of many entries: spans two FEC sets.
            transactions: Vec::new(),
        };
        let batches = vec![
            entry_batch(&[Entry::default()]),
            entry_batch(&vec![big; 1_000]),
        ];
        let slot = shredder.shred_slot(1_000, 999, &[1; 32], &batches).unwrap();
        assert_eq!(slot.shreds.len(), 64 * 3);
        let leader = LeaderSchedule::key_from_bytes(&shredder.leader()).unwrap();
        let mut decoder =
            ShredDecoder::new(DecoderConfig::default(), LeaderSchedule::Fixed(leader));
        let mut entries = Vec::new();
        for shred in slot.shreds.iter().step_by(2) {
            decoder.ingest(shred, 0);
            while let Some(batch) = decoder.next_batch() {
                entries.push(batch.entries.entries().count());
            }
        }
        assert_eq!(entries, vec![1, 1_000]);
    }
}
