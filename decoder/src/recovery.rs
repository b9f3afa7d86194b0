//! Rebuilding the missing data shreds of a FEC set that has 32 of its 64 shreds (format §8,
//! "Recovery procedure"), in place in the set's buffers.
//!
//! 1. Reed-Solomon fills every missing data shard (`[64, 64 + L)`); coding shards are not rebuilt,
//!    as nothing downstream reads them.
//! 2. A recovered data shard's first 19 bytes are the common header after the signature; they must
//!    name this set (variant, slot, index = fec_set_index + i, version, fec_set_index), and the
//!    rebuilt shred must pass the same checks as a received one.
//! 3. Authenticity without the coding half: the 32 data leaves hash to the data half's root, which
//!    must equal the top proof entry of a present coding shred. That shred's proof was checked
//!    against the signed root when it arrived, so its entry binds the data half (the same 20-byte
//!    binding the protocol's proofs rely on). A mismatch discards the recovered shreds.
//! 4. The rebuilt shreds get their proofs (five entries from the data half, the sixth the coding
//!    half's root, read from a present data shred's proof or, when none arrived, hashed from the
//!    32 coding leaves), and the signature, chained root and retransmitter signature that are not
//!    erasure coded.

use thiserror::Error;

use crate::erasure::{ErasureCoder, ErasureError};
use crate::fec::set::FecSet;
use crate::merkle::{self, HalfTree};
use crate::shred::{
    self, CHAINED_ROOT_LEN, DATA_SHREDS_PER_FEC_SET, MERKLE_PROOF_ENTRY_LEN, ParseOptions,
    SHREDS_PER_FEC_SET, SIGNATURE_LEN, ShredKind,
};

/// Proof entries below the top one: the levels inside one half of the tree.
const HALF_PROOF_LEN: usize = 5 * MERKLE_PROOF_ENTRY_LEN;

/// Why a set's recovery was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RecoveryError {
    #[error("variant leaves no room for an erasure shard")]
    NoShardRoom,
    #[error("no coding shred present to authenticate the recovered data")]
    NoCodingShred,
    #[error("Reed-Solomon refused the shards: {0}")]
    Erasure(#[from] ErasureError),
    #[error("recovered data shred {erasure_index} carries a header of another shred")]
    HeaderMismatch { erasure_index: usize },
    #[error("recovered data shred {erasure_index} fails the shred checks")]
    InvalidShred { erasure_index: usize },
    #[error("root of the recovered data differs from the signed root")]
    RootMismatch,
}

impl RecoveryError {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::NoShardRoom => "recovery_no_shard_room",
            Self::NoCodingShred => "recovery_no_coding_shred",
            Self::Erasure(_) => "recovery_erasure",
            Self::HeaderMismatch { .. } => "recovery_header_mismatch",
            Self::InvalidShred { .. } => "recovery_invalid_shred",
            Self::RootMismatch => "recovery_root_mismatch",
        }
    }
}

/// Recovers every missing data shred of `set` in place; on success all 32 are present. Without
/// `authenticate` (trusted feeds), steps 3 and 4 are skipped: no leaf hashes, root check or proofs.
pub(crate) fn recover(
    set: &mut FecSet,
    coder: &ErasureCoder,
    authenticate: bool,
) -> Result<(), RecoveryError> {
    let shard_len = set.variant.shard_len().ok_or(RecoveryError::NoShardRoom)?;
    let present = set.present;
    let authenticated_coding = (DATA_SHREDS_PER_FEC_SET..SHREDS_PER_FEC_SET)
        .find(|e| present >> e & 1 == 1)
        .ok_or(RecoveryError::NoCodingShred)?;
    let mut erasure_index = 0;
    let mut shards = set.buffers.each_mut().map(|buffer| {
        let kind = kind_of(erasure_index);
        erasure_index += 1;
        let start = shred::shard_offset(kind);
        &mut buffer[start..start + shard_len]
    });
    coder.reconstruct_data(&mut shards, present)?;

    let missing = (0..DATA_SHREDS_PER_FEC_SET).filter(|e| present >> e & 1 == 0);
    let retransmitter_signature = retransmitter_signature(set);
    let data_proof_offset = set.variant.proof_offset();
    if !authenticate {
        for erasure_index in missing {
            rebuild_data_shred(set, erasure_index, &retransmitter_signature)?;
        }
        set.present |= u64::from(u32::MAX);
        return Ok(());
    }
    for erasure_index in missing.clone() {
        rebuild_data_shred(set, erasure_index, &retransmitter_signature)?;
        set.leaves[erasure_index] =
            merkle::leaf_hash(&set.buffers[erasure_index][SIGNATURE_LEN..data_proof_offset]);
    }
    let data_half = HalfTree::from_leaves(&set.leaves[..DATA_SHREDS_PER_FEC_SET]);
    if data_half.root()[..MERKLE_PROOF_ENTRY_LEN] != top_proof_entry(set, authenticated_coding)[..]
    {
        return Err(RecoveryError::RootMismatch);
    }
    let coding_half_root = coding_half_root(set);
    for erasure_index in missing {
        let proof = &mut set.buffers[erasure_index][data_proof_offset..];
        data_half.write_proof(erasure_index, &mut proof[..HALF_PROOF_LEN]);
        proof[HALF_PROOF_LEN..HALF_PROOF_LEN + MERKLE_PROOF_ENTRY_LEN]
            .copy_from_slice(&coding_half_root);
    }
    set.present |= u64::from(u32::MAX);
    Ok(())
}

fn kind_of(erasure_index: usize) -> ShredKind {
    if erasure_index < DATA_SHREDS_PER_FEC_SET {
        ShredKind::Data
    } else {
        ShredKind::Code
    }
}

/// The last proof entry of a present shred: the root (prefix) of the other half of the tree.
fn top_proof_entry(set: &FecSet, erasure_index: usize) -> [u8; MERKLE_PROOF_ENTRY_LEN] {
    let offset = set.variant.with_kind(kind_of(erasure_index)).proof_offset() + HALF_PROOF_LEN;
    let mut entry = [0u8; MERKLE_PROOF_ENTRY_LEN];
    entry.copy_from_slice(&set.buffers[erasure_index][offset..offset + MERKLE_PROOF_ENTRY_LEN]);
    entry
}

/// The coding half's root prefix: from a received data shred's proof, or, when no data shred was
/// received (so all 32 coding shreds were), hashed from the coding leaves.
fn coding_half_root(set: &FecSet) -> [u8; MERKLE_PROOF_ENTRY_LEN] {
    let received_data = (0..DATA_SHREDS_PER_FEC_SET).find(|e| set.present >> e & 1 == 1);
    match received_data {
        Some(erasure_index) => top_proof_entry(set, erasure_index),
        None => {
            let tree = HalfTree::from_leaves(&set.leaves[DATA_SHREDS_PER_FEC_SET..]);
            let mut entry = [0u8; MERKLE_PROOF_ENTRY_LEN];
            entry.copy_from_slice(&tree.root()[..MERKLE_PROOF_ENTRY_LEN]);
            entry
        }
    }
}

/// The retransmitter signature of a resigned set, copied from the first present coding shred (as
/// the reference does); zeros when not resigned.
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
    let signature = set.signature;
    let chained_root = set.chained_root;
    let expected_index = key.fec_set_index + erasure_index as u32;
    let proof_offset = variant.proof_offset();
    let payload_len = variant.payload_len();
    let buffer = &mut set.buffers[erasure_index];
    buffer[..SIGNATURE_LEN].copy_from_slice(&signature);
    if variant.chained {
        buffer[proof_offset - CHAINED_ROOT_LEN..proof_offset].copy_from_slice(&chained_root);
    }
    if variant.resigned {
        buffer[payload_len - SIGNATURE_LEN..payload_len].copy_from_slice(retransmitter_signature);
    }
    let payload = &buffer[..payload_len];
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
