//! Incremental deshredding: each batch whose start is certain gets a *stream* that parses it as
//! its data shreds become contiguous from its start, and [`SlotStage::next_ready`] hands out each
//! transaction as soon as its bytes are complete, in batch order, then the batch's end with its
//! verdict.
//!
//! A stream holds a cursor (shred index and offset of the first unparsed byte), the parser's
//! counters ([`RangeParser`]), the next shred index it has not looked at and the latest arrival
//! among the shreds it has: no bytes. When woken, it copies the bytes from its cursor to the end of
//! the contiguous run into the stage's batch buffer (the *window*), parses every complete item and
//! keeps the unfinished one's bytes in the store for the next wake-up. The window's shred
//! boundaries (`marks`) give each transaction the arrival that completed it: the latest receive
//! time over the shreds from the batch start to the one holding its last byte (product decisions:
//! `first_read` is that shred's set's earliest receive time, `capture` that shred's receive time).
//!
//! Starts: a stream opens only where the start is certain (index 0, or the previous shred carries
//! `DATA_COMPLETE`). Batches with an uncertain start, and batches that found every stream in use,
//! go the whole-batch way (strict parse of the complete batch first, as `next_batch` does) and are
//! then handed out item by item through the same parser. A shred for an index already held with
//! different bytes is refused and counted, so bytes already parsed are never contradicted.

use crate::deshred::BatchSpan;
use crate::entry::marker::BlockMarker;
use crate::fec::SetKey;
use crate::incremental::IncrementalError;
use crate::set_stage::DataShredReady;
use crate::shred::{DATA_HEADERS_LEN, DATA_SHREDS_PER_FEC_SET, MAX_SHREDS_PER_SLOT, offset};
use crate::transaction::TransactionView;

mod job;
mod streams;

pub(super) use streams::Streams;

use super::SlotStage;
use job::Outcome;
use streams::{Arrival, Job, Source, Stream};

/// What [`SlotStage::next_ready`] hands out.
#[derive(Debug)]
pub enum ReadyItem<'a> {
    Transaction(ReadyTransaction<'a>),
    Marker(ReadyMarker<'a>),
    /// A batch ended: after its last transaction and marker, exactly once per batch.
    BatchEnd(BatchEnd),
}

/// One transaction whose bytes are complete.
#[derive(Debug)]
pub struct ReadyTransaction<'a> {
    pub slot: u64,
    /// First data shred of its batch (the batch's identity within the slot).
    pub batch_start_index: u32,
    /// Entry of the batch holding it, counted over the batch's components.
    pub entry_index: u64,
    /// Its position among the batch's transactions.
    pub index_in_batch: u64,
    /// The data shred whose arrival completed its bytes.
    pub completed_index: u32,
    /// Earliest receive time of that shred's FEC set (`first_read`).
    pub first_rx_ns: u64,
    /// Receive time of that shred (received, or recovered: the shred completing recovery).
    pub completed_rx_ns: u64,
    pub transaction: TransactionView<'a>,
}

/// A block marker of a batch, in order with its transactions.
#[derive(Debug)]
pub struct ReadyMarker<'a> {
    pub slot: u64,
    pub batch_start_index: u32,
    pub marker: BlockMarker<'a>,
}

/// The end of a batch and its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchEnd {
    /// `end_index` is the last shred parsed (the `DATA_COMPLETE` one when the batch completed).
    pub span: BatchSpan,
    /// Transactions handed out for this batch.
    pub transactions: u64,
    pub entries: u64,
    /// `Ok` when the batch parsed exactly; otherwise it is malformed after `transactions`.
    pub outcome: Result<(), IncrementalError>,
}

impl SlotStage {
    /// Takes the next transaction, marker or batch end that is ready (incremental mode,
    /// [`IncrementalConfig::enabled`](crate::incremental::IncrementalConfig::enabled)): call it after every `insert`/`apply` until `None`.
    /// Transactions of one batch come in batch order, each exactly once, followed by one
    /// [`BatchEnd`]; batches may interleave.
    pub fn next_ready(&mut self) -> Option<ReadyItem<'_>> {
        loop {
            if self.streams.job.is_none() && !self.start_job() {
                return None;
            }
            match self.step_job() {
                Outcome::Transaction {
                    start,
                    len,
                    entry_index,
                } => return self.transaction_item(start, len, entry_index),
                Outcome::Marker { start } => return self.marker_item(start),
                Outcome::Continue => {}
                Outcome::End(end) => return Some(ReadyItem::BatchEnd(end)),
            }
        }
    }

    /// Whether `next_ready` may have something: a batch in progress, a woken stream or a
    /// complete batch queued. Cheap; lets a caller skip its clock read when false.
    pub fn has_ready(&self) -> bool {
        self.streams.job.is_some() || !self.streams.queue.is_empty() || !self.pending.is_empty()
    }

    /// True when a stream (or an earlier emission) already covers this batch.
    pub(super) fn claimed(&self, span: &BatchSpan) -> bool {
        self.config.incremental.enabled
            && (self.streams.find(span.slot, span.start_index).is_some()
                || self.deshred.is_emitted(span.slot, span.start_index))
    }

    /// Refuses a shred for an index already held (counted when its bytes differ) or of a slot
    /// already handed out in full.
    pub(super) fn refuse_known(&mut self, shred: &DataShredReady<'_>) -> bool {
        if self.streams.done_slots.contains(&shred.slot) {
            self.counters.shreds_after_slot_done += 1;
            return true;
        }
        if !self.deshred.is_present(shred.slot, shred.index) {
            return false;
        }
        if self
            .store
            .get(shred.slot, shred.index)
            .is_some_and(|held| held != shred.payload)
        {
            self.counters.conflicting_shreds_refused += 1;
        }
        true
    }

    /// Wakes the stream waiting for this shred and opens the streams it made certain.
    pub(super) fn advance_streams(&mut self, shred: &DataShredReady<'_>) {
        let (slot, index) = (shred.slot, shred.index);
        let waiting = self
            .streams
            .find_open(|s| s.slot == slot && s.scanned_to == index);
        if let Some(id) = waiting {
            self.streams.wake(id);
        }
        self.open_if_certain(slot, index);
        if shred.data_complete() && index + 1 < MAX_SHREDS_PER_SLOT {
            self.open_if_certain(slot, index + 1);
        }
    }

    fn open_if_certain(&mut self, slot: u64, index: u32) {
        let certain = index == 0 || self.deshred.is_data_complete(slot, index - 1);
        if !certain
            || !self.deshred.is_present(slot, index)
            || self.deshred.is_emitted(slot, index)
            || self.streams.find(slot, index).is_some()
        {
            return;
        }
        let opened = self.streams.open(Stream {
            open: true,
            slot,
            start_index: index,
            cursor_index: index,
            scanned_to: index,
            latest: Arrival {
                index,
                ..Arrival::default()
            },
            ..Stream::CLOSED
        });
        match opened {
            Some(id) => self.streams.wake(id),
            None => self.counters.streams_unavailable += 1,
        }
    }

    /// Closes streams whose unparsed bytes lay in an evicted set.
    pub(super) fn close_streams_of_set(&mut self, key: SetKey) {
        let set_end = key.fec_set_index + DATA_SHREDS_PER_FEC_SET as u32;
        self.close_streams_where(|stream| {
            stream.slot == key.slot
                && stream.cursor_index < set_end
                && key.fec_set_index <= stream.scanned_to
        });
    }

    pub(super) fn close_streams_below(&mut self, slot_floor: u64) {
        self.close_streams_where(|stream| stream.slot < slot_floor);
    }

    /// Closes every open stream that satisfies `doomed`, counted as evicted.
    fn close_streams_where(&mut self, doomed: impl Fn(&Stream) -> bool) {
        // `close_stream` swap-removes from `open_ids`: walk it from the end.
        for position in (0..self.streams.open_ids.len()).rev() {
            let id = self.streams.open_ids[position];
            if doomed(&self.streams.table[id]) {
                self.close_stream(id);
                self.counters.streams_evicted += 1;
            }
        }
    }

    fn close_stream(&mut self, id: usize) {
        self.streams.close(id);
        self.streams.queue.retain(|&queued| queued != id);
        if matches!(self.streams.job, Some(Job { source: Source::Stream(j), .. }) if j == id) {
            self.streams.job = None;
        }
    }
}

/// A stored data shred's flags and entry bytes (docs/decoder.md, format §4: `size` covers headers and data).
pub(super) fn flags_and_data(payload: &[u8]) -> (u8, &[u8]) {
    let flags = offset::data_flags(payload);
    let size = offset::data_size(payload);
    (
        flags,
        payload.get(DATA_HEADERS_LEN..size).unwrap_or_default(),
    )
}
