//! `SlotStage`: the second half of the shred path, data shreds in, entry batches out.
//!
//! It takes the [`SetEvent`]s of one or more [`SetStage`](crate::set_stage::SetStage)s for the
//! slots it owns, copies each data shred's payload into a fixed store keyed by `(slot, index)`,
//! tells the [`Deshredder`] which shreds became present, and queues the entry batches that became
//! complete. The caller drains them with [`SlotStage::next_batch`], which assembles the batch
//! bytes into a buffer reserved at start and parses them strictly. Batch semantics are the
//! deshredder's: uncertain starts kept only on an exact parse, padding ignored, `DATA_COMPLETE`
//! boundaries, a batch emitted as soon as it is complete.
//!
//! Store (`slot_stage/store.rs`): groups of the 32 data shreds of one FEC set (~38 KB each),
//! `store_sets` of them reserved at construction. A stage built with [`SlotStage::borrowing`]
//! keeps no payloads: its caller holds them ([`HeldShreds`]) and lends them to
//! [`SlotStage::next_batch_from`], which saves one copy of every data shred. Who owns a shred's
//! bytes in either mode, and until when, is written down in [`crate::set_stage::held`]; when every
//! group is in use the oldest is evicted (counted) and the deshredder forgets its shreds.

mod ready;
mod store;

pub use crate::set_stage::HeldShreds;
pub use ready::{BatchEnd, ReadyItem, ReadyMarker, ReadyTransaction};

use std::collections::VecDeque;

use crate::deshred::{BatchSpan, DeshredConfig, Deshredder};
use crate::entry::marker::MarkerCounts;
use crate::entry::{EntryBatch, EntryError, parse_components};
use crate::fec::SetKey;
use crate::incremental::IncrementalConfig;
use crate::set_stage::{DataShredReady, SetEvent};
use crate::shred::{
    DATA_HEADERS_LEN, DATA_SHRED_LEN, DATA_SHREDS_PER_FEC_SET, MAX_SHREDS_PER_SLOT, offset,
};
use crate::stage::DecoderConfig;
use store::ShredStore;

/// Bounds of a slot stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotStageConfig {
    /// FEC sets' worth of data shreds held (32 payloads each). Default: the decoder's
    /// `fec.max_sets_in_flight` (1,024, ~39 MB).
    pub store_sets: usize,
    pub deshred: DeshredConfig,
    /// See [`DecoderConfig::max_batch_bytes`].
    pub max_batch_bytes: usize,
    /// See [`DecoderConfig::max_pending_batches`].
    pub max_pending_batches: usize,
    /// See [`DecoderConfig::incremental`].
    pub incremental: IncrementalConfig,
}

impl From<&DecoderConfig> for SlotStageConfig {
    fn from(config: &DecoderConfig) -> Self {
        Self {
            store_sets: config.fec.max_sets_in_flight,
            deshred: config.deshred,
            max_batch_bytes: config.max_batch_bytes,
            max_pending_batches: config.max_pending_batches,
            incremental: config.incremental,
        }
    }
}

impl Default for SlotStageConfig {
    fn default() -> Self {
        Self::from(&DecoderConfig::default())
    }
}

/// Batch-level events that are not per-datagram outcomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounters {
    pub batches_emitted: u64,
    /// Certain-start batches whose bytes did not parse.
    pub batches_invalid: u64,
    /// Uncertain-start batches that did not parse exactly (kept for a later retry).
    pub batches_uncertain_rejected: u64,
    /// Batches whose shreds were evicted before assembly.
    pub batches_incomplete: u64,
    pub batches_too_large: u64,
    pub batches_dropped_queue_full: u64,
    /// Store groups evicted because every group was in use.
    pub store_sets_evicted: u64,
    /// Data shreds refused because they contradict the slot's last shred already seen (another
    /// `LAST_SHRED_IN_SLOT` index, or an index beyond it): a second version of the slot's end
    /// (duplicate block); the first version is used.
    pub duplicate_last_shreds: u64,
    /// Block markers in emitted batches, by kind (docs/decoder.md, format §9a); not errors.
    pub markers: MarkerCounts,
    /// Incremental mode: batches that turned out malformed after some of their transactions
    /// were handed out (also counted in `batches_invalid`).
    pub batches_malformed_after_transactions: u64,
    /// Incremental mode: a shred for an index already held, with different bytes; refused.
    pub conflicting_shreds_refused: u64,
    /// Incremental mode: batches served whole because every stream was in use.
    pub streams_unavailable: u64,
    /// Incremental mode: streams closed because their shreds were evicted or their slot released.
    pub streams_evicted: u64,
    /// Incremental mode: shreds of a slot whose every batch was already handed out; refused (a
    /// late copy of a batch's first shred would otherwise start the batch again).
    pub shreds_after_slot_done: u64,
}

/// A complete, strictly parsed data-complete range: usually one entry batch, possibly several
/// block components (entry batches and block markers, read through `entries`).
#[derive(Debug)]
pub struct Batch<'a> {
    pub span: BatchSpan,
    /// Earliest receive time of the FEC set whose shred completed the batch (`first_read`,
    /// product decisions §A).
    pub first_rx_ns: u64,
    /// Receive time of the shred that completed the batch.
    pub completed_rx_ns: u64,
    pub bytes: &'a [u8],
    pub entries: EntryBatch<'a>,
}

#[derive(Debug, Clone, Copy)]
struct PendingBatch {
    span: BatchSpan,
    first_rx_ns: u64,
    completed_rx_ns: u64,
}

/// See the module documentation.
pub struct SlotStage {
    config: SlotStageConfig,
    /// Empty (no groups) when the caller holds the payloads ([`SlotStage::borrowing`]).
    store: ShredStore,
    borrowed: bool,
    deshred: Deshredder,
    pending: VecDeque<PendingBatch>,
    batch_bytes: Vec<u8>,
    /// The entry bytes of the batch consumed last, when asked for
    /// ([`SlotStage::keep_entry_bytes`]); `None` when not.
    entry_bytes: Option<Vec<u8>>,
    counters: BatchCounters,
    /// Incremental mode only (empty otherwise); see [`ready`].
    streams: ready::Streams,
}

impl SlotStage {
    /// Reserves every buffer the stage will use.
    pub fn new(config: SlotStageConfig) -> Self {
        assert!(config.store_sets > 0, "store_sets must be positive");
        Self::build(config, false)
    }

    /// A batch-mode stage that keeps no payloads: the caller holds every data shred it inserts
    /// until [`HeldShreds::consumed`] or a forget, and drains with [`SlotStage::next_batch_from`].
    /// `store_sets` is not reserved; incremental deshredding is off.
    pub fn borrowing(config: SlotStageConfig) -> Self {
        let config = SlotStageConfig {
            store_sets: 0,
            incremental: IncrementalConfig::default(),
            ..config
        };
        Self::build(config, true)
    }

    fn build(config: SlotStageConfig, borrowed: bool) -> Self {
        assert!(
            config.max_pending_batches > 0,
            "max_pending_batches must be positive"
        );
        assert!(
            config.max_batch_bytes > 0,
            "max_batch_bytes must be positive"
        );
        Self {
            config,
            store: ShredStore::new(config.store_sets),
            borrowed,
            deshred: Deshredder::new(config.deshred),
            pending: VecDeque::with_capacity(config.max_pending_batches),
            batch_bytes: Vec::with_capacity(config.max_batch_bytes),
            entry_bytes: None,
            counters: BatchCounters::default(),
            streams: ready::Streams::new(&config.incremental, config.deshred.max_slots_in_flight),
        }
    }

    pub fn config(&self) -> &SlotStageConfig {
        &self.config
    }

    pub fn batch_counters(&self) -> BatchCounters {
        self.counters
    }

    pub fn pending_batches(&self) -> usize {
        self.pending.len()
    }

    /// Store groups in use.
    pub fn sets_stored(&self) -> usize {
        self.store.index.len()
    }

    /// The payload of a data shred still held, for repair serving and tests.
    pub fn data_shred(&self, slot: u64, index: u32) -> Option<&[u8]> {
        self.store.get(slot, index)
    }

    /// Applies one event of a set stage.
    pub fn apply(&mut self, event: &SetEvent<'_>) {
        match event {
            SetEvent::DataShredReady(shred) => self.insert(shred),
            SetEvent::SetEvicted(key) => self.forget_set(*key),
            SetEvent::SlotFloor(floor) => self.release_slots_below(*floor),
            SetEvent::HighestSlot(_) | SetEvent::Reanchored { .. } | SetEvent::Duplicate(_) => {}
        }
    }

    /// Stores a data shred and queues the batches it completed (in incremental mode: opens or
    /// wakes the stream that parses its batch).
    pub fn insert(&mut self, shred: &DataShredReady<'_>) {
        debug_assert!(shred.index < MAX_SHREDS_PER_SLOT);
        if shred.index >= MAX_SHREDS_PER_SLOT || shred.payload.len() > DATA_SHRED_LEN {
            return;
        }
        if self.contradicts_last_shred(shred) {
            self.counters.duplicate_last_shreds += 1;
            return;
        }
        if self.config.incremental.enabled && self.refuse_known(shred) {
            return;
        }
        if !self.borrowed
            && let Some(evicted) = self.store.put(shred)
        {
            self.counters.store_sets_evicted += 1;
            self.forget_in_deshredder(evicted);
            self.close_streams_of_set(evicted);
        }
        let spans = self.deshred.insert(
            shred.slot,
            shred.index,
            shred.data_complete(),
            shred.last_in_slot(),
        );
        if self.config.incremental.enabled {
            self.advance_streams(shred);
        }
        for span in spans.into_iter().flatten() {
            if self.pending.iter().any(|pending| pending.span == span) || self.claimed(&span) {
                continue;
            }
            if self.pending.len() == self.config.max_pending_batches {
                self.counters.batches_dropped_queue_full += 1;
                continue;
            }
            self.pending.push_back(PendingBatch {
                span,
                first_rx_ns: shred.first_rx_ns,
                completed_rx_ns: shred.rx_ns,
            });
        }
    }

    /// The slot's end is known and `shred` lies beyond it, or ends the slot elsewhere.
    fn contradicts_last_shred(&mut self, shred: &DataShredReady<'_>) -> bool {
        self.deshred
            .last_index(shred.slot)
            .is_some_and(|last| shred.index > last || shred.last_in_slot() && shred.index != last)
    }

    /// Forgets the data shreds of a set evicted upstream.
    pub fn forget_set(&mut self, key: SetKey) {
        self.store.release(&key);
        self.forget_in_deshredder(key);
        self.close_streams_of_set(key);
    }

    /// Drops every slot below `slot_floor`.
    pub fn release_slots_below(&mut self, slot_floor: u64) {
        self.store.release_slots_below(slot_floor);
        self.deshred.release_slots_below(slot_floor);
        self.close_streams_below(slot_floor);
    }

    /// Takes the next complete batch, assembled and strictly parsed. Batches that fail are
    /// counted and skipped. Batch mode only: with incremental deshredding enabled it returns
    /// `None` (use [`SlotStage::next_ready`]); a [`SlotStage::borrowing`] stage drains with
    /// [`SlotStage::next_batch_from`].
    pub fn next_batch(&mut self) -> Option<Batch<'_>> {
        if self.config.incremental.enabled || self.borrowed {
            return None;
        }
        self.take_batch(None)
    }

    /// [`SlotStage::next_batch`] of a [`SlotStage::borrowing`] stage, reading the payloads from
    /// `held`; `None` from a stage that keeps its own.
    pub fn next_batch_from(&mut self, held: &mut dyn HeldShreds) -> Option<Batch<'_>> {
        if !self.borrowed {
            return None;
        }
        self.take_batch(Some(held))
    }

    fn take_batch(&mut self, mut held: Option<&mut dyn HeldShreds>) -> Option<Batch<'_>> {
        let (pending, first_rx_ns, summary) = loop {
            let pending = self.pending.pop_front()?;
            let Some(first_rx_ns) = self.assemble(&pending, reborrow(&mut held)) else {
                continue;
            };
            // Only owned counts leave this match, so the batch buffer is free again for the next
            // iteration; the view is rebuilt from them below without a second walk.
            match parse_components(&self.batch_bytes) {
                Ok(entries) => break (pending, first_rx_ns, entries.summary()),
                Err(error) => self.note_parse_failure(&pending.span, &error, reborrow(&mut held)),
            }
        };
        self.consume(&pending.span, held);
        self.counters.batches_emitted += 1;
        self.counters.markers.merge(&summary.markers);
        let bytes = self.batch_bytes.as_slice();
        Some(Batch {
            span: pending.span,
            first_rx_ns,
            completed_rx_ns: pending.completed_rx_ns,
            bytes,
            entries: EntryBatch::from_validated(bytes, summary),
        })
    }

    fn forget_in_deshredder(&mut self, key: SetKey) {
        self.deshred
            .forget(key.slot, key.fec_set_index, DATA_SHREDS_PER_FEC_SET as u32);
    }

    /// Copies the batch's entry bytes into the batch buffer and returns its `first_rx_ns`: the
    /// earliest receive time of the set whose shred completed it (not of the batch's earliest
    /// set: the product decision defines `first_read` so); `None` when it cannot.
    fn assemble(
        &mut self,
        pending: &PendingBatch,
        held: Option<&mut dyn HeldShreds>,
    ) -> Option<u64> {
        let span = &pending.span;
        self.batch_bytes.clear();
        for index in span.start_index..=span.end_index {
            let Some(payload) = payload_of(&self.store, held.as_deref(), span.slot, index) else {
                self.counters.batches_incomplete += 1;
                return None;
            };
            // Stored shreds passed `parse_shred`, so `size` lies in 88..=88 + capacity.
            let size = usize::from(u16::from_le_bytes([
                payload[offset::DATA_SIZE],
                payload[offset::DATA_SIZE + 1],
            ]));
            let data = payload.get(DATA_HEADERS_LEN..size).unwrap_or_default();
            if self.batch_bytes.len() + data.len() > self.config.max_batch_bytes {
                self.counters.batches_too_large += 1;
                self.consume(span, held);
                return None;
            }
            self.batch_bytes.extend_from_slice(data);
        }
        Some(pending.first_rx_ns)
    }

    fn note_parse_failure(
        &mut self,
        span: &BatchSpan,
        _error: &EntryError,
        held: Option<&mut dyn HeldShreds>,
    ) {
        if span.start_certain {
            self.counters.batches_invalid += 1;
            self.consume(span, held);
        } else {
            // The true start may lie earlier; leave the shreds for when the predecessor arrives.
            self.counters.batches_uncertain_rejected += 1;
        }
    }

    /// Keeps (or stops keeping) a copy of each consumed batch's entry bytes, for
    /// [`SlotStage::last_entry_bytes`]. Turning it on reserves one batch buffer
    /// (`max_batch_bytes`) once; turning it off frees it.
    pub fn keep_entry_bytes(&mut self, keep: bool) {
        match (keep, self.entry_bytes.is_some()) {
            (true, false) => {
                self.entry_bytes = Some(Vec::with_capacity(self.config.max_batch_bytes));
            }
            (false, true) => self.entry_bytes = None,
            _ => {}
        }
    }

    /// The entry bytes (the bincode `Vec<Entry>` as deshredded) of the batch that ended last:
    /// valid right after its [`ReadyItem::BatchEnd`] or [`SlotStage::next_batch`], while
    /// [`SlotStage::keep_entry_bytes`] is on.
    pub fn last_entry_bytes(&self) -> Option<&[u8]> {
        self.entry_bytes.as_deref()
    }

    /// Copies the span's data into the kept entry bytes (when kept) before it is consumed.
    fn copy_entry_bytes(&mut self, span: &BatchSpan, held: Option<&dyn HeldShreds>) {
        let Some(out) = self.entry_bytes.as_mut() else {
            return;
        };
        out.clear();
        for index in span.start_index..=span.end_index {
            let Some(payload) = payload_of(&self.store, held, span.slot, index) else {
                break;
            };
            let (_, data) = ready::flags_and_data(payload);
            if out.len() + data.len() > self.config.max_batch_bytes {
                break;
            }
            out.extend_from_slice(data);
        }
    }

    fn consume(&mut self, span: &BatchSpan, held: Option<&mut dyn HeldShreds>) {
        self.copy_entry_bytes(span, held.as_deref());
        if self.deshred.mark_emitted(span) && self.config.incremental.enabled {
            self.streams.note_slot_done(span.slot);
        }
        match held {
            Some(held) => (span.start_index..=span.end_index)
                .for_each(|index| held.consumed(span.slot, index)),
            None => (span.start_index..=span.end_index)
                .for_each(|index| self.store.mark_consumed(span.slot, index)),
        }
    }
}

/// A shorter borrow of the caller's held shreds, for one call.
fn reborrow<'b>(held: &'b mut Option<&mut dyn HeldShreds>) -> Option<&'b mut dyn HeldShreds> {
    match held {
        Some(held) => Some(&mut **held),
        None => None,
    }
}

/// A data shred's payload from the caller's `held` shreds when given, else from `store`.
fn payload_of<'a>(
    store: &'a ShredStore,
    held: Option<&'a dyn HeldShreds>,
    slot: u64,
    index: u32,
) -> Option<&'a [u8]> {
    match held {
        Some(held) => held.held_payload(slot, index),
        None => store.get(slot, index),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shred(slot: u64, index: u32, payload: &[u8]) -> DataShredReady<'_> {
        DataShredReady {
            slot,
            index,
            flags: 0,
            first_rx_ns: u64::from(index),
            rx_ns: u64::from(index),
            payload,
        }
    }

    #[test]
    fn a_full_store_evicts_its_oldest_set_and_counts_it() {
        let mut stage = SlotStage::new(SlotStageConfig {
            store_sets: 2,
            ..SlotStageConfig::default()
        });
        let payload = [7u8; 100];
        stage.insert(&shred(1, 0, &payload));
        stage.insert(&shred(1, 33, &payload));
        assert_eq!(stage.data_shred(1, 0), Some(&payload[..]));
        stage.insert(&shred(2, 5, &payload));
        assert_eq!(stage.batch_counters().store_sets_evicted, 1);
        assert_eq!(stage.data_shred(1, 0), None, "the oldest set went");
        assert_eq!(stage.data_shred(1, 33), Some(&payload[..]));
        assert_eq!(stage.data_shred(2, 5), Some(&payload[..]));
        assert_eq!(stage.sets_stored(), 2);
    }

    #[test]
    fn evicted_sets_and_old_slots_are_forgotten() {
        let mut stage = SlotStage::new(SlotStageConfig::default());
        let payload = [1u8; 90];
        stage.insert(&shred(10, 3, &payload));
        stage.insert(&shred(11, 3, &payload));
        stage.apply(&SetEvent::SetEvicted(SetKey {
            slot: 10,
            fec_set_index: 0,
        }));
        assert_eq!(stage.data_shred(10, 3), None);
        stage.apply(&SetEvent::SlotFloor(12));
        assert_eq!(stage.data_shred(11, 3), None);
        assert_eq!(stage.sets_stored(), 0);
    }
}
