//! `ShredDecoder`: the whole shred path on one thread, datagrams in, entry batches out.
//!
//! It is the composition of the two stages that a multi-core appliance runs on different
//! threads: a [`SetStage`] (parse, shred version, slot window, FEC resolver: verify, store,
//! recover) whose events go straight into one [`SlotStage`] (data shred store, deshredder, batch
//! assembly and strict parsing). The caller drains batches with [`ShredDecoder::next_batch`].
//! Time enters only as the `rx_ns` value passed with each datagram; every datagram ends in exactly
//! one [`ShredOutcome`]. The slot window is described in [`crate::set_stage`].

use thiserror::Error;

use crate::deshred::DeshredConfig;
use crate::fec::{Completion, DuplicateSet, FecConfig, FecCounters, FecError};
use crate::incremental::IncrementalConfig;
use crate::leader::LeaderSchedule;
use crate::merkle::MerkleError;
use crate::set_stage::{SetEvent, SetStage};
use crate::shred::{ParseOptions, ShredError, ShredKind};
pub use crate::slot_stage::{
    Batch, BatchCounters, BatchEnd, ReadyItem, ReadyMarker, ReadyTransaction,
};
use crate::slot_stage::{SlotStage, SlotStageConfig};

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

/// See the module documentation.
pub struct ShredDecoder {
    sets: SetStage,
    slots: SlotStage,
    duplicates: Vec<DuplicateSet>,
}

/// Duplicate blocks a [`ShredDecoder`] keeps for [`ShredDecoder::duplicates`] (all are counted in
/// `FecCounters::duplicate_sets`).
pub const DUPLICATES_KEPT: usize = 64;

impl ShredDecoder {
    /// Reserves every buffer the decoder will use.
    pub fn new(config: DecoderConfig, leaders: LeaderSchedule) -> Self {
        // Batch mode reads the data shreds in place in the resolver's pool (one copy fewer per
        // shred); incremental mode keeps the slot stage's own store, which its streams need.
        let (sets, slots) = match config.incremental.enabled {
            false => (
                SetStage::holding(config, leaders),
                SlotStage::borrowing(SlotStageConfig::from(&config)),
            ),
            true => (
                SetStage::new(config, leaders),
                SlotStage::new(SlotStageConfig::from(&config)),
            ),
        };
        Self {
            sets,
            slots,
            duplicates: Vec::with_capacity(DUPLICATES_KEPT),
        }
    }

    pub fn config(&self) -> &DecoderConfig {
        self.sets.config()
    }

    pub fn fec_counters(&self) -> FecCounters {
        self.sets.fec_counters()
    }

    pub fn batch_counters(&self) -> BatchCounters {
        self.slots.batch_counters()
    }

    /// FEC sets held by the set stage (complete sets are released once handed over).
    pub fn sets_in_flight(&self) -> usize {
        self.sets.sets_in_flight()
    }

    pub fn pending_batches(&self) -> usize {
        self.slots.pending_batches()
    }

    /// Highest slot of any authenticated FEC set so far.
    pub fn highest_slot(&self) -> Option<u64> {
        self.sets.highest_slot()
    }

    /// The payload of a data shred still held (received or recovered; handed on, or held by an
    /// unconfirmed set), for repair serving and tests.
    pub fn data_shred(&self, slot: u64, index: u32) -> Option<&[u8]> {
        self.sets
            .data_shred(slot, index)
            .or_else(|| self.slots.data_shred(slot, index))
    }

    /// The signed Merkle root of a FEC set held or completed recently.
    pub fn fec_set_root(&self, slot: u64, fec_set_index: u32) -> Option<[u8; 32]> {
        self.sets.fec_set_root(slot, fec_set_index)
    }

    /// Anchors the slot window before any shred arrives (e.g. at the cluster's root).
    pub fn set_reference_slot(&mut self, slot: u64) {
        self.sets.set_reference_slot(slot);
    }

    /// Replaces the leader schedule between datagrams (see [`SetStage::set_leaders`]).
    pub fn set_leaders(&mut self, leaders: LeaderSchedule) {
        self.sets.set_leaders(leaders);
    }

    /// Processes one datagram received at `rx_ns`.
    pub fn ingest(&mut self, datagram: &[u8], rx_ns: u64) -> ShredOutcome {
        let (slots, duplicates) = (&mut self.slots, &mut self.duplicates);
        self.sets.ingest(datagram, rx_ns, &mut |event| {
            if let SetEvent::Duplicate(duplicate) = event
                && duplicates.len() < DUPLICATES_KEPT
            {
                duplicates.push(duplicate);
            }
            slots.apply(&event);
        })
    }

    /// The first [`DUPLICATES_KEPT`] duplicate blocks seen, each with both roots.
    pub fn duplicates(&self) -> &[DuplicateSet] {
        &self.duplicates
    }

    /// Takes the next complete batch, assembled and strictly parsed. Batches that fail are
    /// counted and skipped.
    pub fn next_batch(&mut self) -> Option<Batch<'_>> {
        self.slots.next_batch_from(&mut self.sets)
    }

    /// Takes the next transaction, marker or batch end that is ready; see
    /// [`SlotStage::next_ready`]. Needs `incremental.enabled`.
    pub fn next_ready(&mut self) -> Option<ReadyItem<'_>> {
        self.slots.next_ready()
    }

    /// See [`SlotStage::has_ready`].
    pub fn has_ready(&self) -> bool {
        self.slots.has_ready()
    }
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
