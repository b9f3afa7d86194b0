//! `ShredDecoder`: the whole shred path on one thread, datagrams in, entry batches out.
//!
//! It is the composition of the two stages that a multi-core appliance runs on different
//! threads: a [`SetStage`] (parse, shred version, slot window, FEC resolver: verify, store,
//! recover) whose events go straight into one [`SlotStage`] (data shred store, deshredder, batch
//! assembly and strict parsing). The caller drains batches with [`ShredDecoder::next_batch`].
//! Time enters only as the `rx_ns` value passed with each datagram; every datagram ends in exactly
//! one [`ShredOutcome`]. The slot window is described in [`crate::set_stage`].

use crate::fec::{DuplicateSet, FecCounters};
use crate::leader::LeaderSchedule;
use crate::set_stage::{SetEvent, SetStage};
pub use crate::slot_stage::{
    Batch, BatchCounters, BatchEnd, ReadyItem, ReadyMarker, ReadyTransaction,
};
use crate::slot_stage::{SlotStage, SlotStageConfig};
pub use crate::stage::{DecoderConfig, Rejection, ShredOutcome};

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
