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
use crate::fec::{Completion, FecConfig, FecCounters, FecError};
use crate::leader::LeaderSchedule;
use crate::set_stage::SetStage;
use crate::shred::{ParseOptions, ShredError, ShredKind};
pub use crate::slot_stage::{Batch, BatchCounters};
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
    /// Idle time after which the window re-anchors. Default 10 s.
    pub window_reset_after_ns: u64,
    /// Largest entry batch assembled; reserved at start. Default 32 MiB (a full slot's worth:
    /// 32,768 shreds × at most 1,115 entry bytes each fits in 35 MB, real batches are far smaller).
    pub max_batch_bytes: usize,
    /// Complete batches waiting for `next_batch`. Default 1,024; beyond it a batch is dropped and
    /// counted.
    pub max_pending_batches: usize,
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
            window_reset_after_ns: 10_000_000_000,
            max_batch_bytes: 32 << 20,
            max_pending_batches: 1024,
        }
    }
}

/// Why a datagram was not used. One variant per reason; `label()` is the metric label.
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
}

impl ShredDecoder {
    /// Reserves every buffer the decoder will use.
    pub fn new(config: DecoderConfig, leaders: LeaderSchedule) -> Self {
        Self {
            slots: SlotStage::new(SlotStageConfig::from(&config)),
            sets: SetStage::new(config, leaders),
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

    /// The payload of a data shred still held (received or recovered), for repair serving and
    /// tests.
    pub fn data_shred(&self, slot: u64, index: u32) -> Option<&[u8]> {
        self.slots.data_shred(slot, index)
    }

    /// The signed Merkle root of a FEC set held or completed recently.
    pub fn fec_set_root(&self, slot: u64, fec_set_index: u32) -> Option<[u8; 32]> {
        self.sets.fec_set_root(slot, fec_set_index)
    }

    /// Anchors the slot window before any shred arrives (e.g. at the cluster's root).
    pub fn set_reference_slot(&mut self, slot: u64) {
        self.sets.set_reference_slot(slot);
    }

    /// Processes one datagram received at `rx_ns`.
    pub fn ingest(&mut self, datagram: &[u8], rx_ns: u64) -> ShredOutcome {
        let slots = &mut self.slots;
        self.sets
            .ingest(datagram, rx_ns, &mut |event| slots.apply(&event))
    }

    /// Takes the next complete batch, assembled and strictly parsed. Batches that fail are
    /// counted and skipped.
    pub fn next_batch(&mut self) -> Option<Batch<'_>> {
        self.slots.next_batch()
    }
}
