//! Handing out one batch at a time: a job loads a stream's window (or takes a whole batch),
//! steps the parser over it, parks the stream when the bytes run out and settles the batch's end.

use crate::cursor::Cursor;
use crate::deshred::BatchSpan;
use crate::entry::marker::read_marker;
use crate::entry::parse_components;
use crate::incremental::{IncrementalError, RangeParser, Step};
use crate::shred::{FLAG_DATA_COMPLETE, FLAG_LAST_SHRED_IN_SLOT, MAX_SHREDS_PER_SLOT};
use crate::transaction::revisit_transaction;

use super::super::SlotStage;
use super::streams::{Arrival, Job, Mark, Source};
use super::{BatchEnd, ReadyItem, ReadyMarker, ReadyTransaction, flags_and_data};

/// What one parse step came to, without borrowing the window.
pub(super) enum Outcome {
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
    /// Starts the next job: a woken stream first, else a whole batch. False when none is left.
    pub(super) fn start_job(&mut self) -> bool {
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
    pub(super) fn step_job(&mut self) -> Outcome {
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

    pub(super) fn transaction_item(
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

    pub(super) fn marker_item(&self, start: usize) -> Option<ReadyItem<'_>> {
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
