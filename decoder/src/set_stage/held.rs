//! Who owns a data shred's bytes, and until when: the one place this is written down, with
//! [`HeldShreds`], the trait through which a slot stage reads shreds its set stage still holds,
//! beside its one implementer ([`SetStage`]).
//!
//! 1. **The datagram** is the caller's: [`SetStage::ingest`] borrows it for the call only. A shred
//!    that fails any check leaves no trace.
//! 2. **The FEC resolver's pool** (`fec`, one fixed buffer per shred position of each set slot)
//!    owns every authenticated shred from the moment it is stored; recovery rebuilds missing data
//!    shreds in place there. An unconfirmed set's shreds stay in the pool and are handed on to
//!    nobody; the set may be replaced by another version or evicted, and its bytes are then gone.
//! 3. **The hand-over.** When its set is (or becomes) confirmed, each present data shred leaves as
//!    a [`SetEvent::DataShredReady`](super::SetEvent) whose `payload` borrows the pool for the
//!    duration of the sink callback only: a consumer on another thread copies it there (the
//!    appliance's workers do).
//! 4. **Copying mode** ([`SetStage::new`] with [`SlotStage::new`], and incremental mode): the slot
//!    stage copies each payload into its own store group during the callback, and once all 32 data
//!    shreds of a complete set have been handed over the set stage releases the set from the pool
//!    at once (its key and roots move to the completed-set filter). The slot stage's group then
//!    owns the bytes until all 32 were used in batches, its set is evicted upstream
//!    ([`SetEvent::SetEvicted`](super::SetEvent)), its slot falls below the window
//!    ([`SetEvent::SlotFloor`](super::SetEvent)), or its store is full and the group is the oldest
//!    (counted as `store_sets_evicted`).
//! 5. **Holding mode** ([`SetStage::holding`] with [`SlotStage::borrowing`], the
//!    [`ShredDecoder`]'s batch mode): complete sets stay in the pool and the slot stage keeps no
//!    payloads; it reads them in place through [`HeldShreds::held_payload`] while assembling a
//!    batch ([`SlotStage::next_batch_from`]) and calls [`HeldShreds::consumed`] for each shred it
//!    used (or dropped with its batch). A complete set is released once all 32 of its data shreds
//!    are consumed, and counts against `fec.max_sets_in_flight` until then. Eviction (oldest set
//!    first; a complete one is remembered in the filter) and the slot floor release it earlier,
//!    and the slot stage hears of both through the same events as in copying mode.
//! 6. **Batch bytes** are copied out of the store or the pool into the slot stage's batch buffer;
//!    a [`Batch`] or [`ReadyItem`] borrows that buffer until the next call on the stage.
//!
//! [`SlotStage::new`]: crate::slot_stage::SlotStage::new
//! [`SlotStage::borrowing`]: crate::slot_stage::SlotStage::borrowing
//! [`SlotStage::next_batch_from`]: crate::slot_stage::SlotStage::next_batch_from
//! [`ShredDecoder`]: crate::decoder::ShredDecoder
//! [`Batch`]: crate::slot_stage::Batch
//! [`ReadyItem`]: crate::slot_stage::ReadyItem

use super::SetStage;

/// Data shreds a [`SlotStage::borrowing`] stage reads from its caller: every shred it was told
/// about ([`SlotStage::insert`]) and has not seen forgotten ([`SlotStage::forget_set`],
/// [`SlotStage::release_slots_below`]) must be there (see the module documentation).
///
/// [`SlotStage::borrowing`]: crate::slot_stage::SlotStage::borrowing
/// [`SlotStage::insert`]: crate::slot_stage::SlotStage::insert
/// [`SlotStage::forget_set`]: crate::slot_stage::SlotStage::forget_set
/// [`SlotStage::release_slots_below`]: crate::slot_stage::SlotStage::release_slots_below
pub trait HeldShreds {
    /// The whole payload (headers included) of data shred `index` of `slot`, when held.
    fn held_payload(&self, slot: u64, index: u32) -> Option<&[u8]>;
    /// The stage has used data shred `index` of `slot` in a batch (or dropped it with its batch).
    fn consumed(&mut self, slot: u64, index: u32);
}

impl HeldShreds for SetStage {
    fn held_payload(&self, slot: u64, index: u32) -> Option<&[u8]> {
        self.fec.data_shred(slot, index)
    }

    fn consumed(&mut self, slot: u64, index: u32) {
        self.fec.mark_consumed(slot, index);
    }
}
