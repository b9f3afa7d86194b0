//! Length: over 600 lines because the incremental streams, their cursor over the store and the
//! hand-out order share one stream table.
//!
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

use crate::cursor::Cursor;
use crate::deshred::BatchSpan;
use crate::entry::marker::{BlockMarker, read_marker};
use crate::entry::parse_components;
use crate::fec::SetKey;
use crate::incremental::{IncrementalConfig, IncrementalError, RangeParser, Step};
use crate::set_stage::DataShredReady;
use crate::shred::{
    DATA_HEADERS_LEN, DATA_SHREDS_PER_FEC_SET, FLAG_DATA_COMPLETE, FLAG_LAST_SHRED_IN_SLOT,
    MAX_SHREDS_PER_SLOT, offset,
};
use crate::transaction::{TransactionView, revisit_transaction};

use super::{PendingBatch, SlotStage};

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

/// A data shred's arrival: the latest one wins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Arrival {
    rx_ns: u64,
    first_rx_ns: u64,
    index: u32,
}

impl Arrival {
    fn later(self, other: Self) -> Self {
        if other.rx_ns >= self.rx_ns {
            other
        } else {
            self
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Stream {
    open: bool,
    queued: bool,
    slot: u64,
    start_index: u32,
    cursor_index: u32,
    /// Offset of the first unparsed byte in `cursor_index`'s data.
    cursor_offset: usize,
    /// First shred index not looked at yet.
    scanned_to: u32,
    /// Latest arrival over `[start_index, scanned_to)`.
    latest: Arrival,
    parser: RangeParser,
}

impl Stream {
    const CLOSED: Self = Self {
        open: false,
        queued: false,
        slot: 0,
        start_index: 0,
        cursor_index: 0,
        cursor_offset: 0,
        scanned_to: 0,
        latest: Arrival {
            rx_ns: 0,
            first_rx_ns: 0,
            index: 0,
        },
        parser: RangeParser::DEFAULT,
    };
}

/// End of one shred's bytes in the window, with the latest arrival up to it.
#[derive(Debug, Clone, Copy)]
struct Mark {
    index: u32,
    end: usize,
    latest: Arrival,
}

#[derive(Debug, Clone, Copy)]
enum Source {
    Stream(usize),
    Whole(PendingBatch),
}

/// The batch being handed out and the parse position in the window.
#[derive(Debug, Clone, Copy)]
struct Job {
    source: Source,
    parser: RangeParser,
    position: usize,
    at_end: bool,
}

/// The stream table, the queue of streams with new bytes, the job and the window's marks.
pub(super) struct Streams {
    /// Slots whose every batch was handed out, most recent last (bounded like the deshredder).
    done_slots: std::collections::VecDeque<u64>,
    table: Vec<Stream>,
    /// Ids of the open streams, in no order: every inserted shred looks among these (a few),
    /// not over the whole table (`max_open_streams` entries).
    open_ids: Vec<usize>,
    /// Ids of the closed streams, the next one to open last.
    free_ids: Vec<usize>,
    queue: std::collections::VecDeque<usize>,
    job: Option<Job>,
    marks: Vec<Mark>,
}

impl Streams {
    pub(super) fn new(config: &IncrementalConfig, done_slots: usize) -> Self {
        let count = if config.enabled {
            config.max_open_streams
        } else {
            0
        };
        let marks = if config.enabled {
            MAX_SHREDS_PER_SLOT as usize
        } else {
            0
        };
        let done_slots = if config.enabled { done_slots.max(1) } else { 0 };
        Self {
            done_slots: std::collections::VecDeque::with_capacity(done_slots),
            table: vec![Stream::CLOSED; count],
            open_ids: Vec::with_capacity(count),
            free_ids: (0..count).rev().collect(),
            queue: std::collections::VecDeque::with_capacity(count),
            job: None,
            marks: Vec::with_capacity(marks),
        }
    }

    /// Remembers a slot whose every batch was handed out, forgetting the oldest beyond the bound.
    pub(super) fn note_slot_done(&mut self, slot: u64) {
        if self.done_slots.len() == self.done_slots.capacity() {
            self.done_slots.pop_front();
        }
        self.done_slots.push_back(slot);
    }

    fn find(&self, slot: u64, start_index: u32) -> Option<usize> {
        self.find_open(|s| s.slot == slot && s.start_index == start_index)
    }

    /// The open stream that satisfies `wanted`.
    fn find_open(&self, wanted: impl Fn(&Stream) -> bool) -> Option<usize> {
        self.open_ids
            .iter()
            .copied()
            .find(|&id| wanted(&self.table[id]))
    }

    /// Opens `stream` in a free entry of the table; `None` when every entry is in use.
    fn open(&mut self, stream: Stream) -> Option<usize> {
        let id = self.free_ids.pop()?;
        self.table[id] = stream;
        self.open_ids.push(id);
        Some(id)
    }

    /// Marks stream `id` closed and its entry free.
    fn close(&mut self, id: usize) {
        let stream = &mut self.table[id];
        if !stream.open {
            return;
        }
        stream.open = false;
        stream.queued = false;
        if let Some(position) = self.open_ids.iter().position(|&open| open == id) {
            self.open_ids.swap_remove(position);
        }
        self.free_ids.push(id);
    }

    fn wake(&mut self, id: usize) {
        if !self.table[id].queued {
            self.table[id].queued = true;
            self.queue.push_back(id);
        }
    }
}

/// What one parse step came to, without borrowing the window.
enum Outcome {
    Transaction {
        start: usize,
        len: usize,
        entry_index: u64,
    },
    Marker {
        start: usize,
    },
    Continue,
    End(BatchEnd),
}

impl SlotStage {
    /// Takes the next transaction, marker or batch end that is ready (incremental mode,
    /// [`IncrementalConfig::enabled`]): call it after every `insert`/`apply` until `None`.
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

    /// Starts the next job: a woken stream first, else a whole batch. False when none is left.
    fn start_job(&mut self) -> bool {
        while let Some(id) = self.streams.queue.pop_front() {
            self.streams.table[id].queued = false;
            if self.streams.table[id].open {
                self.load_window(id);
                return true;
            }
        }
        while let Some(pending) = self.pending.pop_front() {
            if self.claimed(&pending.span) || self.assemble(&pending, None).is_none() {
                continue;
            }
            match parse_components(&self.batch_bytes) {
                Ok(_) => {
                    self.streams.job = Some(Job {
                        source: Source::Whole(pending),
                        parser: RangeParser::new(),
                        position: 0,
                        at_end: true,
                    });
                    return true;
                }
                Err(error) => self.note_parse_failure(&pending.span, &error, None),
            }
        }
        false
    }

    /// Copies a stream's bytes from its cursor to the end of its contiguous run.
    fn load_window(&mut self, id: usize) {
        let mut stream = self.streams.table[id];
        self.batch_bytes.clear();
        self.streams.marks.clear();
        let mut index = stream.cursor_index;
        let mut offset = stream.cursor_offset;
        let mut at_end = false;
        while index < MAX_SHREDS_PER_SLOT {
            let Some((payload, first_rx_ns, rx_ns)) = self.store.get_arrival(stream.slot, index)
            else {
                break;
            };
            let (flags, data) = flags_and_data(payload);
            let data = data.get(offset..).unwrap_or_default();
            if self.batch_bytes.len() + data.len() > self.config.max_batch_bytes {
                break;
            }
            offset = 0;
            self.batch_bytes.extend_from_slice(data);
            if index >= stream.scanned_to {
                let arrival = Arrival {
                    rx_ns,
                    first_rx_ns,
                    index,
                };
                stream.latest = stream.latest.later(arrival);
                stream.scanned_to = index + 1;
            }
            self.streams.marks.push(Mark {
                index,
                end: self.batch_bytes.len(),
                latest: stream.latest,
            });
            if flags & FLAG_DATA_COMPLETE != 0 {
                at_end = true;
                break;
            }
            index += 1;
        }
        self.streams.table[id] = stream;
        self.streams.job = Some(Job {
            source: Source::Stream(id),
            parser: stream.parser,
            position: 0,
            at_end,
        });
    }

    /// Runs one parse step of the job and settles everything but the item's view.
    fn step_job(&mut self) -> Outcome {
        let Some(job) = self.streams.job.as_mut() else {
            return Outcome::Continue;
        };
        let window = self.batch_bytes.get(job.position..).unwrap_or_default();
        let start = job.position;
        match job.parser.step(window, job.at_end) {
            Step::Transaction {
                len, entry_index, ..
            } => {
                job.position += len;
                Outcome::Transaction {
                    start,
                    len,
                    entry_index,
                }
            }
            Step::Marker { marker, len } => {
                job.position += len;
                self.counters.markers.add(marker.kind());
                Outcome::Marker { start }
            }
            Step::Skip { len } => {
                job.position += len;
                Outcome::Continue
            }
            Step::NeedMore => {
                self.park_job();
                Outcome::Continue
            }
            Step::End => Outcome::End(self.finish_job(Ok(()))),
            Step::Malformed(error) => Outcome::End(self.finish_job(Err(error))),
        }
    }

    /// Saves a stream's cursor and parser after its window ran out.
    fn park_job(&mut self) {
        let Some(job) = self.streams.job.take() else {
            return;
        };
        let Source::Stream(id) = job.source else {
            debug_assert!(false, "a whole batch never needs more bytes");
            return;
        };
        let stream = &mut self.streams.table[id];
        let marks = &self.streams.marks;
        let holding = marks.partition_point(|mark| mark.end <= job.position);
        match marks.get(holding) {
            Some(mark) => {
                let mark_start = match holding {
                    0 => 0,
                    _ => marks[holding - 1].end,
                };
                let base = if mark.index == stream.cursor_index {
                    stream.cursor_offset
                } else {
                    0
                };
                stream.cursor_offset = base + job.position - mark_start;
                stream.cursor_index = mark.index;
            }
            None => {
                stream.cursor_index = stream.scanned_to;
                stream.cursor_offset = 0;
            }
        }
        stream.parser = job.parser;
        // A window cut short by the buffer leaves present shreds behind: look again.
        let (slot, next) = (stream.slot, stream.scanned_to);
        if self.store.get(slot, next).is_some() {
            self.streams.wake(id);
        }
    }

    /// Ends the job's batch: marks its shreds used, counts the verdict, returns the batch end.
    fn finish_job(&mut self, outcome: Result<(), IncrementalError>) -> BatchEnd {
        let job = self.streams.job.take();
        let (span, parser) = match job {
            Some(Job {
                source: Source::Stream(id),
                parser,
                ..
            }) => {
                let stream = self.streams.table[id];
                self.close_stream(id);
                let end_index = stream.scanned_to.saturating_sub(1).max(stream.start_index);
                let last_in_slot = self.store.get(stream.slot, end_index).is_some_and(|p| {
                    flags_and_data(p).0 & FLAG_LAST_SHRED_IN_SLOT == FLAG_LAST_SHRED_IN_SLOT
                });
                let span = BatchSpan {
                    slot: stream.slot,
                    start_index: stream.start_index,
                    end_index,
                    start_certain: true,
                    last_in_slot: last_in_slot && outcome.is_ok(),
                };
                (span, parser)
            }
            Some(Job {
                source: Source::Whole(pending),
                parser,
                ..
            }) => (pending.span, parser),
            None => (
                BatchSpan {
                    slot: 0,
                    start_index: 0,
                    end_index: 0,
                    start_certain: false,
                    last_in_slot: false,
                },
                RangeParser::new(),
            ),
        };
        self.consume(&span, None);
        match outcome {
            Ok(()) => self.counters.batches_emitted += 1,
            Err(_) => {
                self.counters.batches_invalid += 1;
                if parser.transactions() > 0 {
                    self.counters.batches_malformed_after_transactions += 1;
                }
            }
        }
        BatchEnd {
            span,
            transactions: parser.transactions(),
            entries: parser.entries(),
            outcome,
        }
    }

    /// The job's identity and the arrival that completed the byte before `end`.
    fn job_origin(&self, end: usize) -> (u64, u32, Arrival) {
        match self.streams.job.map(|job| job.source) {
            Some(Source::Stream(id)) => {
                let stream = &self.streams.table[id];
                let marks = &self.streams.marks;
                let holding = marks.partition_point(|mark| mark.end < end);
                let latest = marks.get(holding).map_or(stream.latest, |mark| mark.latest);
                (stream.slot, stream.start_index, latest)
            }
            Some(Source::Whole(pending)) => (
                pending.span.slot,
                pending.span.start_index,
                Arrival {
                    rx_ns: pending.completed_rx_ns,
                    first_rx_ns: pending.first_rx_ns,
                    index: pending.span.end_index,
                },
            ),
            None => (0, 0, Arrival::default()),
        }
    }

    fn transaction_item(
        &self,
        start: usize,
        len: usize,
        entry_index: u64,
    ) -> Option<ReadyItem<'_>> {
        let (slot, batch_start_index, arrival) = self.job_origin(start + len);
        let index_in_batch = self
            .streams
            .job
            .map_or(0, |job| job.parser.transactions().saturating_sub(1));
        let bytes = self.batch_bytes.get(start..start + len)?;
        // The incremental parser accepted exactly these bytes as a transaction.
        let transaction = revisit_transaction(&mut Cursor::new(bytes))?;
        Some(ReadyItem::Transaction(ReadyTransaction {
            slot,
            batch_start_index,
            entry_index,
            index_in_batch,
            completed_index: arrival.index,
            first_rx_ns: arrival.first_rx_ns,
            completed_rx_ns: arrival.rx_ns,
            transaction,
        }))
    }

    fn marker_item(&self, start: usize) -> Option<ReadyItem<'_>> {
        let (slot, batch_start_index, _) = self.job_origin(start);
        let bytes = self.batch_bytes.get(start + 8..)?;
        let marker = read_marker(&mut Cursor::new(bytes)).ok()?;
        Some(ReadyItem::Marker(ReadyMarker {
            slot,
            batch_start_index,
            marker,
        }))
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
