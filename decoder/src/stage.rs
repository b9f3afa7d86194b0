//! The stage core's shared vocabulary, a leaf that `decoder`, `set_stage` and `slot_stage` all
//! import (the chain runs one way: `decoder` → `slot_stage` → `set_stage` → here): the decoder's
//! bounds ([`DecoderConfig`]), why a datagram was not used ([`Rejection`]) and the one outcome of
//! each datagram ([`ShredOutcome`]).

use thiserror::Error;

use crate::deshred::DeshredConfig;
use crate::fec::{Completion, FecConfig, FecError};
use crate::incremental::IncrementalConfig;
use crate::merkle::MerkleError;
use crate::shred::{ParseOptions, ShredError, ShredKind};

/// Every bound and policy switch of the decoder, with production defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecoderConfig {
    /// Accept only this shred version (cluster id); `None` accepts any.
    pub shred_version: Option<u16>,
    pub parse: ParseOptions,
    pub fec: FecConfig,
    pub deshred: DeshredConfig,
    /// Slots below `highest − slot_lookback` are stale. Default 128 (~51 s of slots).
    pub slot_lookback: u64,
    /// Slots above `highest + max_slots_ahead` are rejected. Default 2,048.
    pub max_slots_ahead: u64,
    /// Time without a FEC set confirmed inside the window after which shreds outside it are
    /// verified, and the first set confirmed there re-anchors the window (`set_stage`). Bounds
    /// how long a poisoned anchor (trusted feed) or a paused feed stops decoding. Default 2 s
    /// (a live feed confirms sets every few milliseconds). Needs receive times (`rx_ns` > 0).
    pub window_reset_after_ns: u64,
    /// Largest entry batch assembled; reserved at start. Default 32 MiB (a full slot's worth:
    /// 32,768 shreds × at most 1,115 entry bytes each fits in 35 MB, real batches are far smaller).
    pub max_batch_bytes: usize,
    /// Complete batches waiting for `next_batch`. Default 1,024; beyond it a batch is dropped and
    /// counted.
    pub max_pending_batches: usize,
    /// Incremental deshredding (`next_ready`); off by default.
    pub incremental: IncrementalConfig,
}

impl Default for DecoderConfig {
    fn default() -> Self {
        Self {
            shred_version: None,
            parse: ParseOptions::default(),
            fec: FecConfig::default(),
            deshred: DeshredConfig::default(),
            slot_lookback: 128,
            max_slots_ahead: 2048,
            window_reset_after_ns: 2_000_000_000,
            max_batch_bytes: 32 << 20,
            max_pending_batches: 1024,
            incremental: IncrementalConfig::default(),
        }
    }
}

/// Why a datagram was not used. One reason per leaf variant; `label()` is the metric label and
/// `index()` its position in [`Rejection::LABELS`], which indexes per-reason counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Rejection {
    #[error(transparent)]
    Shred(#[from] ShredError),
    #[error("shred version {found} differs from the expected {expected}")]
    WrongShredVersion { expected: u16, found: u16 },
    #[error("slot {slot} is below the window floor {floor}")]
    StaleSlot { slot: u64, floor: u64 },
    #[error("slot {slot} is beyond the window limit {limit}")]
    SlotTooFarAhead { slot: u64, limit: u64 },
    #[error(transparent)]
    Fec(#[from] FecError),
}

impl Rejection {
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Shred(error) => error.label(),
            Self::WrongShredVersion { .. } => "wrong_shred_version",
            Self::StaleSlot { .. } => "stale_slot",
            Self::SlotTooFarAhead { .. } => "slot_too_far_ahead",
            Self::Fec(error) => error.label(),
        }
    }

    /// How many reasons (distinct labels) there are.
    pub const COUNT: usize = 27;

    /// The label of every reason, sorted; [`Rejection::index`] is a label's position here, so
    /// counters indexed by it list in label order.
    pub const LABELS: [&'static str; Self::COUNT] = [
        "bad_coding_header",
        "bad_flags",
        "bad_index",
        "bad_parent_offset",
        "bad_proof_size",
        "bad_signature",
        "bad_size_field",
        "duplicate",
        "duplicate_block",
        "inconsistent_variant",
        "index_beyond_proof",
        "index_out_of_range",
        "legacy_variant",
        "merkle_root_mismatch",
        "misaligned_fec_set",
        "oversized",
        "ragged_proof",
        "set_already_complete",
        "set_failed",
        "slot_too_far_ahead",
        "stale_slot",
        "truncated",
        "unchained_variant",
        "unknown_leader",
        "unknown_variant",
        "unsupported_erasure_config",
        "wrong_shred_version",
    ];

    /// The reason's position in [`Rejection::LABELS`]: the index of its counter.
    pub const fn index(&self) -> usize {
        match self {
            Self::Shred(error) => match error {
                ShredError::Truncated { .. } => 21,
                ShredError::Oversized { .. } => 15,
                ShredError::LegacyVariant { .. } => 12,
                ShredError::UnchainedVariant { .. } => 22,
                ShredError::UnknownVariant { .. } => 24,
                ShredError::BadProofSize { .. } => 4,
                ShredError::IndexOutOfRange { .. } => 11,
                ShredError::MisalignedFecSet { .. } => 14,
                ShredError::BadIndex { .. } => 2,
                ShredError::BadSizeField { .. } => 6,
                ShredError::BadFlags { .. } => 1,
                ShredError::BadParentOffset { .. } => 3,
                ShredError::BadCodingHeader { .. } => 0,
                ShredError::UnsupportedErasureConfig { .. } => 25,
            },
            Self::WrongShredVersion { .. } => 26,
            Self::StaleSlot { .. } => 20,
            Self::SlotTooFarAhead { .. } => 19,
            Self::Fec(error) => match error {
                FecError::Duplicate => 7,
                FecError::SetAlreadyComplete => 17,
                FecError::SetFailed => 18,
                FecError::Merkle(MerkleError::RaggedProof { .. }) => 16,
                FecError::Merkle(MerkleError::IndexBeyondProof { .. }) => 10,
                FecError::UnknownLeader => 23,
                FecError::BadSignature => 5,
                FecError::MerkleRootMismatch => 13,
                FecError::InconsistentVariant => 9,
                FecError::DuplicateBlock => 8,
            },
        }
    }
}

/// The one outcome of each datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShredOutcome {
    /// Authenticated and stored; `completion` is set when it completed its FEC set.
    Stored {
        slot: u64,
        fec_set_index: u32,
        kind: ShredKind,
        completion: Option<Completion>,
    },
    /// Well formed, but its FEC set was already complete (not re-verified: it is not needed).
    Redundant { slot: u64, kind: ShredKind },
    /// Not used; `slot` and `kind` when the header was readable.
    Rejected {
        slot: Option<u64>,
        kind: Option<ShredKind>,
        reason: Rejection,
    },
}

#[cfg(test)]
mod rejection_tests {
    use super::*;

    /// One rejection of every reason.
    fn every_reason() -> Vec<Rejection> {
        let shred = [
            ShredError::Truncated { len: 0, needed: 1 },
            ShredError::Oversized { len: 0 },
            ShredError::LegacyVariant { variant: 0 },
            ShredError::UnchainedVariant { variant: 0 },
            ShredError::UnknownVariant { variant: 0 },
            ShredError::BadProofSize { proof_size: 0 },
            ShredError::IndexOutOfRange { index: 0 },
            ShredError::MisalignedFecSet { fec_set_index: 0 },
            ShredError::BadIndex {
                index: 0,
                fec_set_index: 0,
            },
            ShredError::BadSizeField { size: 0, max: 0 },
            ShredError::BadFlags { flags: 0 },
            ShredError::BadParentOffset {
                parent_offset: 0,
                slot: 0,
            },
            ShredError::BadCodingHeader {
                num_data: 0,
                num_coding: 0,
                position: 0,
            },
            ShredError::UnsupportedErasureConfig {
                num_data: 0,
                num_coding: 0,
            },
        ];
        let fec = [
            FecError::Duplicate,
            FecError::SetAlreadyComplete,
            FecError::SetFailed,
            FecError::Merkle(MerkleError::RaggedProof { proof_len: 0 }),
            FecError::Merkle(MerkleError::IndexBeyondProof {
                index: 0,
                entries: 0,
            }),
            FecError::UnknownLeader,
            FecError::BadSignature,
            FecError::MerkleRootMismatch,
            FecError::InconsistentVariant,
            FecError::DuplicateBlock,
        ];
        let mut all: Vec<Rejection> = shred.into_iter().map(Rejection::Shred).collect();
        all.extend([
            Rejection::WrongShredVersion {
                expected: 0,
                found: 1,
            },
            Rejection::StaleSlot { slot: 0, floor: 1 },
            Rejection::SlotTooFarAhead { slot: 2, limit: 1 },
        ]);
        all.extend(fec.into_iter().map(Rejection::Fec));
        all
    }

    #[test]
    fn index_is_the_position_of_the_label() {
        let all = every_reason();
        assert_eq!(all.len(), Rejection::COUNT);
        let mut seen = [false; Rejection::COUNT];
        for rejection in all {
            assert_eq!(Rejection::LABELS[rejection.index()], rejection.label());
            seen[rejection.index()] = true;
        }
        assert!(seen.iter().all(|seen| *seen));
        assert!(Rejection::LABELS.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
