//! Rebuilding the missing shreds of a FEC set that has 32 of its 64 shreds (spec §8, "Recovery
//! procedure"), in place in the set's buffers.
//!
//! 1. Reed-Solomon fills every missing shard (data shards `[64, 64 + L)`, parity `[89, 89 + L)`).
//! 2. A recovered data shard's first 19 bytes are the common header after the signature; they must
//!    name this set (variant, slot, index = fec_set_index + i, version, fec_set_index) and the
//!    rebuilt shred must pass the same checks as a received one.
//! 3. Missing coding shreds get synthesized headers (`index = first_coding_index + j`, `position =
//!    j`), so that all 64 leaves can be hashed.
//! 4. The tree over all 64 leaves must reproduce the signed root; only then are the recovered
//!    shreds authentic, and their proofs are written. Signature, chained root and retransmitter
//!    signature are copied from the set (they are not erasure coded).

use thiserror::Error;

use crate::erasure::{ErasureCoder, ErasureError};
use crate::fec::FecSet;
use crate::merkle::{self, FecSetTree};
use crate::shred::{
    self, CHAINED_ROOT_LEN, CODE_HEADERS_LEN, DATA_SHREDS_PER_FEC_SET, MERKLE_PROOF_ENTRY_LEN,
    ParseOptions, SHREDS_PER_FEC_SET, SIGNATURE_LEN, ShredKind,
};

/// Why a set's recovery was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RecoveryError {
    #[error("variant leaves no room for an erasure shard")]
    NoShardRoom,
    #[error("no coding shred present to place the missing coding shreds")]
    NoCodingShred,
    #[error("Reed-Solomon refused the shards")]
    Erasure,
    #[error("recovered data shred {erasure_index} carries a header of another shred")]
    HeaderMismatch { erasure_index: usize },
    #[error("recovered data shred {erasure_index} fails the shred checks")]
    InvalidShred { erasure_index: usize },
    #[error("root of the recovered set differs from the signed root")]
    RootMismatch,
}

impl RecoveryError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::NoShardRoom => "recovery_no_shard_room",
            Self::NoCodingShred => "recovery_no_coding_shred",
            Self::Erasure => "recovery_erasure",
            Self::HeaderMismatch { .. } => "recovery_header_mismatch",
            Self::InvalidShred { .. } => "recovery_invalid_shred",
            Self::RootMismatch => "recovery_root_mismatch",
        }
    }
}

impl From<ErasureError> for RecoveryError {
    fn from(_: ErasureError) -> Self {
        Self::Erasure
    }
}

/// Recovers every missing shred of `set` in place; on success all 64 are present.
pub(crate) fn recover(set: &mut FecSet, coder: &ErasureCoder) -> Result<(), RecoveryError> {
    let shard_len = set.variant.shard_len().ok_or(RecoveryError::NoShardRoom)?;
    let first_coding_index = set.first_coding_index.ok_or(RecoveryError::NoCodingShred)?;
    let present = set.present;
    let mut erasure_index = 0;
    let mut shards = set.buffers.each_mut().map(|buffer| {
        let start = if erasure_index < DATA_SHREDS_PER_FEC_SET {
            shred::shard_offset(ShredKind::Data)
        } else {
            shred::shard_offset(ShredKind::Code)
        };
        let is_present = present >> erasure_index & 1 == 1;
        erasure_index += 1;
        (&mut buffer[start..start + shard_len], is_present)
    });
    coder.reconstruct(&mut shards)?;

    let retransmitter_signature = retransmitter_signature(set);
    for erasure_index in (0..SHREDS_PER_FEC_SET).filter(|e| present >> e & 1 == 0) {
        if erasure_index < DATA_SHREDS_PER_FEC_SET {
            rebuild_data_shred(set, erasure_index, &retransmitter_signature)?;
        } else {
            rebuild_code_shred(
                set,
                erasure_index,
                first_coding_index,
                &retransmitter_signature,
            );
        }
        let kind = kind_of(erasure_index);
        let proof_offset = set.variant.with_kind(kind).proof_offset();
        set.leaves[erasure_index] =
            merkle::leaf_hash(&set.buffers[erasure_index][SIGNATURE_LEN..proof_offset]);
    }
    let tree = FecSetTree::from_leaves(&set.leaves);
    if *tree.root() != set.root {
        return Err(RecoveryError::RootMismatch);
    }
    for erasure_index in (0..SHREDS_PER_FEC_SET).filter(|e| present >> e & 1 == 0) {
        let proof_offset = set.variant.with_kind(kind_of(erasure_index)).proof_offset();
        let proof_len = usize::from(set.variant.proof_size) * MERKLE_PROOF_ENTRY_LEN;
        let proof = &mut set.buffers[erasure_index][proof_offset..proof_offset + proof_len];
        tree.write_proof(erasure_index, proof);
    }
    set.present = u64::MAX;
    Ok(())
}

fn kind_of(erasure_index: usize) -> ShredKind {
    if erasure_index < DATA_SHREDS_PER_FEC_SET {
        ShredKind::Data
    } else {
        ShredKind::Code
    }
}

/// The retransmitter signature of a resigned set, copied from the first present coding shred (as
/// the reference does), else from the first present data shred; zeros when not resigned.
fn retransmitter_signature(set: &FecSet) -> [u8; SIGNATURE_LEN] {
    let mut signature = [0u8; SIGNATURE_LEN];
    if !set.variant.resigned {
        return signature;
    }
    let order = (DATA_SHREDS_PER_FEC_SET..SHREDS_PER_FEC_SET).chain(0..DATA_SHREDS_PER_FEC_SET);
    if let Some(source) = order.into_iter().find(|e| set.present >> e & 1 == 1) {
        let len = set.variant.with_kind(kind_of(source)).payload_len();
        signature.copy_from_slice(&set.buffers[source][len - SIGNATURE_LEN..len]);
    }
    signature
}

/// Writes the non-erasure-coded parts of a data shred whose shard was recovered, then checks it.
fn rebuild_data_shred(
    set: &mut FecSet,
    erasure_index: usize,
    retransmitter_signature: &[u8; SIGNATURE_LEN],
) -> Result<(), RecoveryError> {
    let variant = set.variant;
    let key = set.key;
    let shred_version = set.shred_version;
    let expected_index = key.fec_set_index + erasure_index as u32;
    write_tail(set, erasure_index, ShredKind::Data, retransmitter_signature);
    let signature = set.signature;
    let buffer = &mut set.buffers[erasure_index];
    buffer[..SIGNATURE_LEN].copy_from_slice(&signature);
    let payload = &buffer[..variant.payload_len()];
    let parsed = shred::parse_shred(
        payload,
        ParseOptions {
            allow_unchained: !variant.chained,
        },
    )
    .map_err(|_| RecoveryError::InvalidShred { erasure_index })?;
    let header_matches = parsed.variant() == variant
        && parsed.slot() == key.slot
        && parsed.index() == expected_index
        && parsed.shred_version() == shred_version
        && parsed.fec_set_index() == key.fec_set_index;
    if !header_matches {
        return Err(RecoveryError::HeaderMismatch { erasure_index });
    }
    Ok(())
}

/// Synthesizes the headers and tail of a missing coding shred around its recovered parity.
fn rebuild_code_shred(
    set: &mut FecSet,
    erasure_index: usize,
    first_coding_index: u32,
    retransmitter_signature: &[u8; SIGNATURE_LEN],
) {
    let position = erasure_index - DATA_SHREDS_PER_FEC_SET;
    let version = set.shred_version.to_le_bytes();
    let key = set.key;
    write_tail(set, erasure_index, ShredKind::Code, retransmitter_signature);
    let code_variant = set.variant.with_kind(ShredKind::Code).to_byte();
    let signature = set.signature;
    let buffer = &mut set.buffers[erasure_index];
    buffer[..SIGNATURE_LEN].copy_from_slice(&signature);
    buffer[64] = code_variant;
    buffer[65..73].copy_from_slice(&key.slot.to_le_bytes());
    buffer[73..77].copy_from_slice(&(first_coding_index + position as u32).to_le_bytes());
    buffer[77..79].copy_from_slice(&version);
    buffer[79..83].copy_from_slice(&key.fec_set_index.to_le_bytes());
    buffer[83..85].copy_from_slice(&(DATA_SHREDS_PER_FEC_SET as u16).to_le_bytes());
    buffer[85..87]
        .copy_from_slice(&((SHREDS_PER_FEC_SET - DATA_SHREDS_PER_FEC_SET) as u16).to_le_bytes());
    buffer[87..CODE_HEADERS_LEN].copy_from_slice(&(position as u16).to_le_bytes());
}

/// Writes the chained root and retransmitter signature after the shard of a rebuilt shred.
fn write_tail(
    set: &mut FecSet,
    erasure_index: usize,
    kind: ShredKind,
    retransmitter_signature: &[u8; SIGNATURE_LEN],
) {
    let variant = set.variant.with_kind(kind);
    let proof_offset = variant.proof_offset();
    let payload_len = variant.payload_len();
    let chained_root = set.chained_root;
    let buffer = &mut set.buffers[erasure_index];
    if variant.chained {
        buffer[proof_offset - CHAINED_ROOT_LEN..proof_offset].copy_from_slice(&chained_root);
    }
    if variant.resigned {
        buffer[payload_len - SIGNATURE_LEN..payload_len].copy_from_slice(retransmitter_signature);
    }
}
