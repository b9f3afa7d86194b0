//! The incremental streams' table: each stream's cursor and arrival, the queue of streams with
//! new bytes, the job being handed out and the window's shred marks.

use std::collections::VecDeque;

use crate::incremental::{IncrementalConfig, RangeParser};
use crate::shred::MAX_SHREDS_PER_SLOT;

use super::super::PendingBatch;

/// A data shred's arrival: the latest one wins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Arrival {
    pub(super) rx_ns: u64,
    pub(super) first_rx_ns: u64,
    pub(super) index: u32,
}

impl Arrival {
    pub(super) fn later(self, other: Self) -> Self {
        if other.rx_ns >= self.rx_ns {
            other
        } else {
            self
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Stream {
    pub(super) open: bool,
    pub(super) queued: bool,
    pub(super) slot: u64,
    pub(super) start_index: u32,
    pub(super) cursor_index: u32,
    /// Offset of the first unparsed byte in `cursor_index`'s data.
    pub(super) cursor_offset: usize,
    /// First shred index not looked at yet.
    pub(super) scanned_to: u32,
    /// Latest arrival over `[start_index, scanned_to)`.
    pub(super) latest: Arrival,
    pub(super) parser: RangeParser,
}

impl Stream {
    pub(super) const CLOSED: Self = Self {
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
pub(super) struct Mark {
    pub(super) index: u32,
    pub(super) end: usize,
    pub(super) latest: Arrival,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Source {
    Stream(usize),
    Whole(PendingBatch),
}

/// The batch being handed out and the parse position in the window.
#[derive(Debug, Clone, Copy)]
pub(super) struct Job {
    pub(super) source: Source,
    pub(super) parser: RangeParser,
    pub(super) position: usize,
    pub(super) at_end: bool,
}

/// The stream table, the queue of streams with new bytes, the job and the window's marks.
pub(in crate::slot_stage) struct Streams {
    /// Slots whose every batch was handed out, most recent last (bounded like the deshredder).
    pub(super) done_slots: VecDeque<u64>,
    pub(super) table: Vec<Stream>,
    /// Ids of the open streams, in no order: every inserted shred looks among these (a few),
    /// not over the whole table (`max_open_streams` entries).
    pub(super) open_ids: Vec<usize>,
    /// Ids of the closed streams, the next one to open last.
    pub(super) free_ids: Vec<usize>,
    pub(super) queue: VecDeque<usize>,
    pub(super) job: Option<Job>,
    pub(super) marks: Vec<Mark>,
}

impl Streams {
    pub(in crate::slot_stage) fn new(config: &IncrementalConfig, done_slots: usize) -> Self {
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
            done_slots: VecDeque::with_capacity(done_slots),
            table: vec![Stream::CLOSED; count],
            open_ids: Vec::with_capacity(count),
            free_ids: (0..count).rev().collect(),
            queue: VecDeque::with_capacity(count),
            job: None,
            marks: Vec::with_capacity(marks),
        }
    }

    /// Remembers a slot whose every batch was handed out, forgetting the oldest beyond the bound.
    pub(in crate::slot_stage) fn note_slot_done(&mut self, slot: u64) {
        if self.done_slots.len() == self.done_slots.capacity() {
            self.done_slots.pop_front();
        }
        self.done_slots.push_back(slot);
    }

    pub(super) fn find(&self, slot: u64, start_index: u32) -> Option<usize> {
        self.find_open(|s| s.slot == slot && s.start_index == start_index)
    }

    /// The open stream that satisfies `wanted`.
    pub(super) fn find_open(&self, wanted: impl Fn(&Stream) -> bool) -> Option<usize> {
        self.open_ids
            .iter()
            .copied()
            .find(|&id| wanted(&self.table[id]))
    }

    /// Opens `stream` in a free entry of the table; `None` when every entry is in use.
    pub(super) fn open(&mut self, stream: Stream) -> Option<usize> {
        let id = self.free_ids.pop()?;
        self.table[id] = stream;
        self.open_ids.push(id);
        Some(id)
    }

    /// Marks stream `id` closed and its entry free.
    pub(super) fn close(&mut self, id: usize) {
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

    pub(super) fn wake(&mut self, id: usize) {
        if !self.table[id].queued {
            self.table[id].queued = true;
            self.queue.push_back(id);
        }
    }
}
