//! The recent-slot buffer (issue 22): every published update of the last slots, shared with the
//! fan-out (the same encoded `Arc`), numbered in publish order, bounded in slots and in bytes,
//! oldest out. A resuming session reads it through a [`Cursor`] at its own pace.
//!
//! Seam: the publisher numbers and appends an update here before it offers it to any session,
//! and a resuming session registers before its cursor first reads. So every update is either read
//! by the cursor or queued live (or both); the session drops live deliveries numbered below the
//! point where its cursor caught up, and none is lost or sent twice.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use stream_proto::stream::SubscribeUpdate;
use stream_proto::stream::subscribe_update::Update;

use super::encode::EncodedUpdate;

/// Slots kept unless configured otherwise (≈ 1 minute of mainnet).
pub const DEFAULT_RECENT_SLOTS: usize = 150;
/// Bytes kept (counted as [`retained_bytes`]) unless configured otherwise.
pub const DEFAULT_RECENT_BYTES: usize = 256 << 20;
/// Updates a cursor takes per lock.
pub const READ_BATCH: usize = 64;
/// Entries of slots before the cursor's looked at per read, in batches: the lock is held for at
/// most this many batches' worth.
const SKIP_FACTOR: usize = 16;

/// Memory a kept update holds beyond its shared encoding: the published message itself (kept for
/// re-matching) and the allocations behind it. Measured (`bench/scripts/resume_memory.sh`): the
/// process grows by ~4.5 bytes per byte of shared encoding kept, so a kept update is counted as
/// 4.5 × its encoding plus a fixed 128 (the entry, the `Arc`).
fn retained_bytes(update: &EncodedUpdate) -> usize {
    update.shared_len() * 9 / 2 + 128
}

/// How much the buffer keeps; 0 slots turns it off (no resume).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecentBounds {
    pub slots: usize,
    pub bytes: usize,
}

impl Default for RecentBounds {
    fn default() -> Self {
        Self {
            slots: DEFAULT_RECENT_SLOTS,
            bytes: DEFAULT_RECENT_BYTES,
        }
    }
}

/// Why a resume cannot start or go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// Updates of slots at or after the asked one were already evicted.
    #[error(
        "from_slot {asked} is no longer buffered: updates of slots up to {evicted_through} were evicted; the oldest slot whose updates are all kept is {oldest_complete}"
    )]
    TooOld {
        asked: u64,
        evicted_through: u64,
        oldest_complete: u64,
    },
    /// The buffer is off (`recent_slots = 0`).
    #[error("resuming is off on this server (grpc.recent_slots = 0: no recent slots are kept)")]
    Disabled,
    /// The session read too slowly: updates it had not read yet were evicted.
    #[error(
        "the resumed stream fell behind the recent-slot buffer (updates from sequence {next} were evicted before it read them)"
    )]
    Overtaken { next: u64 },
}

impl ResumeError {
    /// Metric label.
    pub fn label(&self) -> &'static str {
        match self {
            Self::TooOld { .. } => "too_old",
            Self::Disabled => "disabled",
            Self::Overtaken { .. } => "overtaken",
        }
    }
}

/// One buffered update.
#[derive(Debug)]
struct Entry {
    sequence: u64,
    slot: u64,
    update: Arc<EncodedUpdate>,
}

#[derive(Debug, Default)]
struct State {
    entries: VecDeque<Entry>,
    /// Sequence of the next update appended (the first is 1).
    next_sequence: u64,
    bytes: usize,
    /// Buffered updates per slot.
    slots: BTreeMap<u64, usize>,
    /// The highest slot of any evicted update.
    evicted_through: Option<u64>,
}

/// Gauges and counters of the buffer (read by `/metrics`).
#[derive(Debug, Default)]
pub struct RecentStats {
    pub evicted: AtomicU64,
    pub resumed: AtomicU64,
    pub replayed: AtomicU64,
    pub refused: AtomicU64,
}

/// The buffer.
#[derive(Debug)]
pub struct RecentBuffer {
    bounds: RecentBounds,
    state: Mutex<State>,
    pub stats: RecentStats,
}

/// Where a resuming session stands: the next sequence to read, of slots from `from_slot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub from_slot: u64,
    pub next: u64,
}

/// What the buffer holds: slots, updates, their bytes (as [`retained_bytes`] counts them), the
/// oldest slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    pub slots: usize,
    pub updates: usize,
    pub bytes: usize,
    pub oldest_slot: Option<u64>,
}

/// What a cursor read.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// Updates to send (possibly none matched the slot), more may follow.
    Batch,
    /// The cursor reached the newest update: live deliveries numbered from `live_from` are new.
    CaughtUp { live_from: u64 },
}

/// The slot an update belongs to (pongs have none and are never buffered).
pub fn slot_of(update: &SubscribeUpdate) -> Option<u64> {
    match update.update.as_ref()? {
        Update::Transaction(transaction) => Some(transaction.slot),
        Update::Slot(slot) => Some(slot.slot),
        Update::Delta(delta) => delta.envelope.as_ref().map(|envelope| envelope.slot),
        Update::Footer(footer) => Some(footer.slot),
        Update::DuplicateBlock(duplicate) => Some(duplicate.slot),
        Update::Pong(_) => None,
    }
}

impl RecentBuffer {
    pub fn new(bounds: RecentBounds) -> Self {
        Self {
            bounds,
            state: Mutex::new(State {
                next_sequence: 1,
                ..State::default()
            }),
            stats: RecentStats::default(),
        }
    }

    pub fn bounds(&self) -> RecentBounds {
        self.bounds
    }

    /// Whether updates are kept (and numbered) at all.
    pub fn keeps(&self) -> bool {
        self.bounds.slots > 0
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Numbers `update` (its sequence is set before any session sees it) and keeps it, evicting
    /// the oldest updates beyond the bounds. Updates without a slot are numbered only. Call it
    /// only when the buffer [`keeps`](Self::keeps) updates.
    pub fn append(&self, update: &Arc<EncodedUpdate>) {
        let slot = slot_of(update.update());
        let mut state = self.lock();
        let sequence = state.next_sequence;
        state.next_sequence += 1;
        update.set_sequence(sequence);
        let Some(slot) = slot else {
            return;
        };
        state.bytes += retained_bytes(update);
        *state.slots.entry(slot).or_default() += 1;
        state.entries.push_back(Entry {
            sequence,
            slot,
            update: Arc::clone(update),
        });
        let mut evicted = 0;
        while state.slots.len() > self.bounds.slots
            || (state.bytes > self.bounds.bytes && state.entries.len() > 1)
        {
            let Some(oldest) = state.entries.pop_front() else {
                break;
            };
            evict(&mut state, &oldest);
            evicted += 1;
        }
        drop(state);
        if evicted > 0 {
            self.stats.evicted.fetch_add(evicted, Ordering::Relaxed);
        }
    }

    /// A cursor over the buffered updates of slots from `from_slot`, or why there is none. Call it
    /// after the session is registered for live deliveries.
    pub fn cursor(&self, from_slot: u64) -> Result<Cursor, ResumeError> {
        if self.bounds.slots == 0 {
            return Err(self.refuse(ResumeError::Disabled));
        }
        let state = self.lock();
        if let Some(evicted_through) = state.evicted_through
            && from_slot <= evicted_through
        {
            let oldest_complete = evicted_through + 1;
            drop(state);
            return Err(self.refuse(ResumeError::TooOld {
                asked: from_slot,
                evicted_through,
                oldest_complete,
            }));
        }
        let next = state
            .entries
            .front()
            .map_or(state.next_sequence, |entry| entry.sequence);
        drop(state);
        self.stats.resumed.fetch_add(1, Ordering::Relaxed);
        Ok(Cursor { from_slot, next })
    }

    fn refuse(&self, error: ResumeError) -> ResumeError {
        self.stats.refused.fetch_add(1, Ordering::Relaxed);
        error
    }

    /// Appends to `out` up to a batch of the updates after `cursor` whose slot is at least its
    /// `from_slot`, and moves the cursor past what it looked at.
    pub fn read(
        &self,
        cursor: &mut Cursor,
        out: &mut VecDeque<Arc<EncodedUpdate>>,
    ) -> Result<Read, ResumeError> {
        let state = self.lock();
        let first = state
            .entries
            .front()
            .map_or(state.next_sequence, |entry| entry.sequence);
        if cursor.next < first {
            // Evicted before this cursor read them: lost to it only if any was of its slots.
            let lost = state
                .evicted_through
                .is_some_and(|evicted| evicted >= cursor.from_slot);
            if lost {
                return Err(ResumeError::Overtaken { next: cursor.next });
            }
            cursor.next = first;
        }
        // Sequences increase along the buffer but skip the updates without a slot.
        let start = state
            .entries
            .partition_point(|entry| entry.sequence < cursor.next);
        // A batch is READ_BATCH updates taken; skipping older slots' updates costs less, so at
        // most SKIP_FACTOR batches are looked at under one lock.
        let (mut taken, mut looked) = (0, 0);
        for entry in state.entries.range(start..).take(READ_BATCH * SKIP_FACTOR) {
            cursor.next = entry.sequence + 1;
            looked += 1;
            if entry.slot >= cursor.from_slot {
                out.push_back(Arc::clone(&entry.update));
                taken += 1;
                if taken == READ_BATCH as u64 {
                    break;
                }
            }
        }
        // The end of the buffer; numbered updates after it (without a slot) were never kept.
        let caught_up = start + looked >= state.entries.len();
        let live_from = state.next_sequence;
        drop(state);
        self.stats.replayed.fetch_add(taken, Ordering::Relaxed);
        Ok(if caught_up {
            cursor.next = live_from;
            Read::CaughtUp { live_from }
        } else {
            Read::Batch
        })
    }

    /// What the buffer holds now.
    pub fn occupancy(&self) -> Occupancy {
        let state = self.lock();
        Occupancy {
            slots: state.slots.len(),
            updates: state.entries.len(),
            bytes: state.bytes,
            oldest_slot: state.slots.keys().next().copied(),
        }
    }
}

fn evict(state: &mut State, oldest: &Entry) {
    state.bytes -= retained_bytes(&oldest.update);
    if let Some(count) = state.slots.get_mut(&oldest.slot) {
        *count -= 1;
        if *count == 0 {
            state.slots.remove(&oldest.slot);
        }
    }
    state.evicted_through = Some(
        state
            .evicted_through
            .map_or(oldest.slot, |through| through.max(oldest.slot)),
    );
}

#[cfg(test)]
mod tests {
    use stream_proto::stream::{DecodedTransaction, SlotNotification};

    use super::*;

    fn transaction(slot: u64, size: usize) -> Arc<EncodedUpdate> {
        Arc::new(EncodedUpdate::new(SubscribeUpdate {
            update: Some(Update::Transaction(DecodedTransaction {
                slot,
                signature: vec![7; size],
                ..DecodedTransaction::default()
            })),
            ..SubscribeUpdate::default()
        }))
    }

    fn slot_update(slot: u64) -> Arc<EncodedUpdate> {
        Arc::new(EncodedUpdate::new(SubscribeUpdate {
            update: Some(Update::Slot(SlotNotification { slot })),
            ..SubscribeUpdate::default()
        }))
    }

    fn read_all(buffer: &RecentBuffer, cursor: &mut Cursor) -> (Vec<u64>, u64) {
        let mut out = VecDeque::new();
        loop {
            match buffer.read(cursor, &mut out).unwrap() {
                Read::Batch => continue,
                Read::CaughtUp { live_from } => {
                    let sequences = out.iter().map(|update| update.sequence()).collect();
                    return (sequences, live_from);
                }
            }
        }
    }

    #[test]
    fn numbers_every_update_and_reads_the_slots_asked_for_in_publish_order() {
        let buffer = RecentBuffer::new(RecentBounds::default());
        let published: Vec<Arc<EncodedUpdate>> = [10, 11, 10, 12, 11, 13]
            .iter()
            .map(|&slot| transaction(slot, 64))
            .collect();
        for update in &published {
            buffer.append(update);
        }
        let numbers: Vec<u64> = published.iter().map(|update| update.sequence()).collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
        let mut cursor = buffer.cursor(11).unwrap();
        let (read, live_from) = read_all(&buffer, &mut cursor);
        assert_eq!(read, [2, 4, 5, 6], "slots ≥ 11, in publish order");
        assert_eq!(live_from, 7);
        // Nothing new: caught up again at once.
        assert_eq!(read_all(&buffer, &mut cursor), (vec![], 7));
        buffer.append(&slot_update(14));
        assert_eq!(read_all(&buffer, &mut cursor), (vec![7], 8));
    }

    #[test]
    fn reads_in_batches_without_losing_or_repeating() {
        let buffer = RecentBuffer::new(RecentBounds::default());
        for index in 0..1_000 {
            buffer.append(&transaction(100 + index / 100, 8));
        }
        let mut cursor = buffer.cursor(0).unwrap();
        let (read, live_from) = read_all(&buffer, &mut cursor);
        assert_eq!(read, (1..=1_000).collect::<Vec<u64>>());
        assert_eq!(live_from, 1_001);
    }

    #[test]
    fn keeps_at_most_the_configured_slots_and_refuses_older_resumes_naming_the_oldest() {
        let buffer = RecentBuffer::new(RecentBounds {
            slots: 3,
            bytes: usize::MAX,
        });
        for slot in 1..=6 {
            buffer.append(&transaction(slot, 8));
            buffer.append(&slot_update(slot));
        }
        let held = buffer.occupancy();
        assert_eq!(
            (held.slots, held.updates, held.oldest_slot),
            (3, 6, Some(4))
        );
        let error = buffer.cursor(3).unwrap_err();
        assert_eq!(
            error,
            ResumeError::TooOld {
                asked: 3,
                evicted_through: 3,
                oldest_complete: 4
            }
        );
        assert!(
            error
                .to_string()
                .contains("oldest slot whose updates are all kept is 4")
        );
        let mut cursor = buffer.cursor(4).unwrap();
        assert_eq!(read_all(&buffer, &mut cursor).0.len(), 6);
        assert_eq!(buffer.stats.evicted.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn the_byte_bound_evicts_oldest_first_and_a_slow_cursor_is_overtaken() {
        let one = retained_bytes(&transaction(1, 1_000));
        let buffer = RecentBuffer::new(RecentBounds {
            slots: 1_000,
            bytes: one * 10,
        });
        for slot in 0..10 {
            buffer.append(&transaction(slot, 1_000));
        }
        let mut cursor = buffer.cursor(0).unwrap();
        let mut out = VecDeque::new();
        // A single oversized update still fits alone.
        buffer.append(&transaction(10, 50_000));
        let held = buffer.occupancy();
        assert_eq!(
            (held.bytes, held.updates, held.oldest_slot),
            (retained_bytes(&transaction(10, 50_000)), 1, Some(10))
        );
        assert_eq!(
            buffer.read(&mut cursor, &mut out),
            Err(ResumeError::Overtaken { next: 1 })
        );
    }

    #[test]
    fn evicting_only_older_slots_than_asked_does_not_overtake_a_cursor() {
        let buffer = RecentBuffer::new(RecentBounds {
            slots: 4,
            bytes: 1 << 30,
        });
        for slot in 0..4 {
            buffer.append(&transaction(slot, 10));
        }
        // The cursor starts at the oldest entry (slot 0) but asks for slots from 3.
        let mut cursor = buffer.cursor(3).unwrap();
        // Slots 0 and 1 are evicted before it reads: nothing of its slots is lost.
        buffer.append(&transaction(4, 10));
        buffer.append(&transaction(5, 10));
        let (read, _) = read_all(&buffer, &mut cursor);
        assert_eq!(read.len(), 3, "slots 3, 4 and 5");
        // Asked from slot 2, and slot 2 evicted unread: overtaken.
        let mut late = buffer.cursor(3).unwrap();
        late.from_slot = 2;
        buffer.append(&transaction(6, 10));
        buffer.append(&transaction(7, 10));
        let mut out = VecDeque::new();
        assert!(matches!(
            buffer.read(&mut late, &mut out),
            Err(ResumeError::Overtaken { .. })
        ));
    }

    #[test]
    fn zero_slots_is_off() {
        let buffer = RecentBuffer::new(RecentBounds { slots: 0, bytes: 0 });
        assert!(!buffer.keeps());
        assert_eq!(buffer.cursor(1), Err(ResumeError::Disabled));
    }
}
